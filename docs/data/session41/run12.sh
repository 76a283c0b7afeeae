#!/usr/bin/env bash
# Session 41 run 12: run 11 again with ac0eedd (no prediction for batches within the loop's own poll); the daemon polls around the expected end of long batches
# (batch_predict.c). The shm reduce at 1 to 256 MiB (40 requests each, the daemon's counters
# around each size), then the 1 GiB reduce and scan, on a default daemon (predicting) and on
# one with VKR_LOOP_PREDICT=0, alternating, two rounds.
# Usage: `. .gpu/env.sh; bash docs/data/session41/run12.sh $OUT` with .gpu/ and .exp/ carried
# (.exp/s41predict.txz: build-release of ac0eedd).
OUT=${1:?}; o=/tmp/r12; mkdir -p $o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
b=/tmp/predict; mkdir -p $b; tar xJf .exp/s41predict.txz -C $b
export LD_LIBRARY_PATH=$b/client:$LD_LIBRARY_PATH
for round in 1 2; do
  for cfg in predict off; do
    sock=/tmp/vkr41-$cfg.sock; st=$(mktemp -d)
    if [ $cfg = off ]; then export VKR_LOOP_PREDICT=0; fi
    $b/daemon/vkreduced --socket $sock --state-dir $st 2> $o/daemon-$cfg-$round.log & pid=$!
    unset VKR_LOOP_PREDICT
    for _ in $(seq 600); do $b/client/vkreduce --socket $sock ping >/dev/null 2>&1 && break; sleep 0.05; done
    for mib in 1 4 16 64 256; do
      f=$o/$cfg-$round-$mib
      $b/client/vkreduce --socket $sock stats > $f-stats0.txt
      timeout 60 $b/bench/vkreduce-shm-bench --socket $sock --mib $mib --reps 40 --only reduce > $f.txt 2>&1
      $b/client/vkreduce --socket $sock stats > $f-stats1.txt
      join <(sort $f-stats0.txt) <(sort $f-stats1.txt) | awk -v what="$cfg r$round $mib MiB" -v e2e="$(grep -o 'median [0-9.]* ms' $f.txt)" '
        { d[$1] = $3 - $2 } END {
          n = d["requests_timed"]; if (n == 0) n = 1
          printf "%s: %s end to end; per request (ms): gpu (submit to seen) %.3f, wake %.3f; GPU time per batch %.3f; predicted %d of %d batches, seen by the loop %d; loop idle %.1f ms\n",
            what, e2e, d["request_gpu_ns_total"] / n / 1e6, d["request_wake_ns_total"] / n / 1e6,
            d["gpu_ns_total"] / (d["batches"] ? d["batches"] : 1) / 1e6, d["batches_predicted"], d["batches"],
            d["batches_seen_by_loop"], d["loop_idle_ns_total"] / 1e6 }' | tee -a $o/summary.txt
    done
    timeout 60 $b/bench/vkreduce-shm-bench --socket $sock --mib 1024 --reps 10 > $o/$cfg-$round-1024.txt 2>&1
    echo "$cfg r$round 1024 MiB: $(grep -o 'median [0-9.]* ms, [0-9.]* GB/s' $o/$cfg-$round-1024.txt | tr '\n' ' ')" | tee -a $o/summary.txt
    kill $pid; wait $pid
    tar czf $OUT/run12.tgz -C $o .
  done
done
