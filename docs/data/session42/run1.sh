#!/usr/bin/env bash
# Session 42 run 1: the daemon's polling around the expected end of long batches, as built
# now (6dd7548: session 41's review mends, 0a536aa, and the rate learnt per size class)
# against 8b69200's daemon (one rate per kind) and against polling off (VKR_LOOP_PREDICT=0),
# alternating, two rounds: shm reduces of 1 to 256 MiB alone, then 16 MiB and 1 GiB requests
# alternating (reduce, then scan), then the 1 GiB reduce and scan alone.
# Usage: `. .gpu/env.sh; bash docs/data/session42/run1.sh $OUT` with .gpu/ and .exp/ carried
# (.exp/s42new.txz: build-release of 6dd7548; .exp/s42base.txz: 8b69200's daemon).
OUT=${1:?}; o=/tmp/r1; mkdir -p $o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $o/gpu.txt
b=/tmp/new; mkdir -p $b /tmp/base; tar xJf .exp/s42new.txz -C $b; tar xJf .exp/s42base.txz -C /tmp/base
export LD_LIBRARY_PATH=$b/client:$LD_LIBRARY_PATH
stats_delta() { # $1: label, $2: file prefix, $3: bench output
  join <(sort $2-stats0.txt) <(sort $2-stats1.txt) | awk -v what="$1" '
    { d[$1] = $3 - $2 } END {
      n = d["requests_timed"]; if (n == 0) n = 1
      printf "%s: per request (ms): gpu (submit to seen) %.3f, wake %.3f; GPU time per batch %.3f; predicted %d of %d batches, seen by the loop %d; loop idle %.1f ms\n",
        what, d["request_gpu_ns_total"] / n / 1e6, d["request_wake_ns_total"] / n / 1e6,
        d["gpu_ns_total"] / (d["batches"] ? d["batches"] : 1) / 1e6, d["batches_predicted"], d["batches"],
        d["batches_seen_by_loop"], d["loop_idle_ns_total"] / 1e6 }' | tee -a $o/summary.txt
  grep -o '^[a-z]* sum f32 of [0-9]* MiB.*median [0-9.]* ms, [0-9.]* GB/s' $3 | sed "s/^/$1: /" | tee -a $o/summary.txt
}
for round in 1 2; do
  for cfg in classes single off; do
    sock=/tmp/vkr42-$cfg.sock; st=$(mktemp -d); daemon=$b/daemon/vkreduced
    [ $cfg = single ] && daemon=/tmp/base/daemon/vkreduced
    if [ $cfg = off ]; then export VKR_LOOP_PREDICT=0; fi
    $daemon --socket $sock --state-dir $st 2> $o/daemon-$cfg-$round.log & pid=$!
    unset VKR_LOOP_PREDICT
    for _ in $(seq 600); do $b/client/vkreduce --socket $sock ping >/dev/null 2>&1 && break; sleep 0.05; done
    run() { # $1: name, then the bench's arguments
      local name=$1; shift; local f=$o/$cfg-$round-$name
      $b/client/vkreduce --socket $sock stats > $f-stats0.txt
      timeout 120 $b/bench/vkreduce-shm-bench --socket $sock "$@" > $f.txt 2>&1 || echo "rc $? $cfg $name" | tee -a $o/summary.txt
      $b/client/vkreduce --socket $sock stats > $f-stats1.txt
      stats_delta "$cfg r$round $name" $f $f.txt
    }
    for mib in 1 4 16 64 256; do run $mib --mib $mib --reps 40 --only reduce; done
    run mix-reduce --mib 16,1024 --reps 20 --only reduce
    run mix-scan --mib 16,1024 --reps 10 --only scan
    run 1024 --mib 1024 --reps 10
    kill $pid; wait $pid
    tar czf $OUT/run1.tgz -C $o .
  done
done
