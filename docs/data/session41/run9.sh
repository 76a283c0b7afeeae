#!/usr/bin/env bash
# Session 41 run 9: what do shared-memory requests of middling size pay between the GPU's end
# and the reply? S41-8 found 0.4 ms from vkQueueSubmit to the completion thread seeing a long
# batch done, and 0.2 ms for the loop's wake-up: the completion thread polls only 100 us
# (VKR_WAIT_SPIN_US) and the loop 50 us (VKR_LOOP_SPIN_US) before they sleep, so a batch
# longer than that is seen by an interrupt and a wake-up. The shm reduce at 1 to 256 MiB,
# with the daemon's counters around each size, on a default daemon and on one whose threads
# poll up to 6 ms (VKR_WAIT_SPIN_US=6000 VKR_LOOP_SPIN_US=6000), alternating, two rounds.
# Usage: `. .gpu/env.sh; bash docs/data/session41/run9.sh $OUT` with .gpu/ and .exp/ carried
# (.exp/s41stats.txz, as run 7's).
OUT=${1:?}; o=/tmp/r9; mkdir -p $o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
b=/tmp/stats; mkdir -p $b; tar xJf .exp/s41stats.txz -C $b
export LD_LIBRARY_PATH=$b/client:$LD_LIBRARY_PATH
for round in 1 2; do
  for cfg in default spin; do
    sock=/tmp/vkr41-$cfg.sock; st=$(mktemp -d)
    if [ $cfg = spin ]; then
      VKR_WAIT_SPIN_US=6000 VKR_LOOP_SPIN_US=6000 $b/daemon/vkreduced --socket $sock --state-dir $st 2> $o/daemon-$cfg-$round.log & pid=$!
    else
      $b/daemon/vkreduced --socket $sock --state-dir $st 2> $o/daemon-$cfg-$round.log & pid=$!
    fi
    for _ in $(seq 600); do $b/client/vkreduce --socket $sock ping >/dev/null 2>&1 && break; sleep 0.05; done
    for mib in 1 4 16 64 256; do
      f=$o/$cfg-$round-$mib
      $b/client/vkreduce --socket $sock stats > $f-stats0.txt
      timeout 60 $b/bench/vkreduce-shm-bench --socket $sock --mib $mib --reps 40 --only reduce > $f.txt 2>&1
      $b/client/vkreduce --socket $sock stats > $f-stats1.txt
      join <(sort $f-stats0.txt) <(sort $f-stats1.txt) | awk -v what="$cfg r$round $mib MiB" -v e2e="$(grep -o 'median [0-9.]* ms' $f.txt)" '
        { d[$1] = $3 - $2 } END {
          n = d["requests_timed"]; if (n == 0) n = 1
          printf "%s: %s end to end; per request (ms): queue %.3f, gpu (submit to seen) %.3f, wake %.3f, reply %.3f; GPU time per batch %.3f\n",
            what, e2e, d["request_queue_ns_total"] / n / 1e6, d["request_gpu_ns_total"] / n / 1e6, d["request_wake_ns_total"] / n / 1e6,
            d["request_reply_ns_total"] / n / 1e6, d["gpu_ns_total"] / (d["batches"] ? d["batches"] : 1) / 1e6 }' | tee -a $o/summary.txt
    done
    kill $pid; wait $pid
    tar czf $OUT/run9.tgz -C $o .
  done
done
