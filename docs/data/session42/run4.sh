#!/usr/bin/env bash
# Session 42 run 4: is the daemon's extra GPU time on a 1 GiB shm scan (S42-2: 26.7-26.8 ms
# per batch against the bench's 26.3, pages and patience ruled out) the gaps between its
# requests? The bench runs its scans back to back; the daemon's single client leaves the GPU
# idle between a batch's end and its next request. Two clients at once keep a scan queued
# behind the running one. Alternating, two rounds: the bench's kernel times, then a daemon
# with one client, then with two (each its own regions), the daemon's GPU time per job and
# per batch from its stats.
# Usage: `. .gpu/env.sh; bash docs/data/session42/run4.sh $OUT` with .gpu/ and .exp/ carried
# (.exp/s42pages.txz as in run 2).
OUT=${1:?}; o=/tmp/r4; mkdir -p $o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $o/gpu.txt
b=/tmp/pages; mkdir -p $b; tar xJf .exp/s42pages.txz -C $b
export LD_LIBRARY_PATH=$b/client:$LD_LIBRARY_PATH
for round in 1 2; do
  timeout 120 $b/bench/vkreduce-bench --reduce-only --scan-only --pcie-ceilings --reps 10 > $o/ceilings-$round.txt 2>&1
  grep -E "^pcie scan of imported" $o/ceilings-$round.txt | sed "s/^/bench r$round: /" | tee -a $o/summary.txt
  sock=/tmp/vkr42.sock; st=$(mktemp -d)
  $b/daemon/vkreduced --socket $sock --state-dir $st 2> $o/daemon-$round.log & pid=$!
  for _ in $(seq 600); do $b/client/vkreduce --socket $sock ping >/dev/null 2>&1 && break; sleep 0.05; done
  for clients in 1 2; do
    f=$o/$round-$clients
    $b/client/vkreduce --socket $sock stats > $f-stats0.txt
    pids=()
    for c in $(seq $clients); do
      timeout 120 $b/bench/vkreduce-shm-bench --socket $sock --mib 1024 --reps 10 --only scan > $f-c$c.txt 2>&1 &
      pids+=($!)
    done
    wait "${pids[@]}"
    $b/client/vkreduce --socket $sock stats > $f-stats1.txt
    join <(sort $f-stats0.txt) <(sort $f-stats1.txt) | awk -v what="daemon r$round $clients client(s)" -v e2e="$(grep -ho 'median [0-9.]* ms' $f-c*.txt | tr '\n' ' ')" '
      { d[$1] = $3 - $2 } END {
        printf "%s: %s end to end; %d jobs in %d batches; GPU time per job %.3f ms\n", what, e2e,
          d["batch_jobs"], d["batches"], d["gpu_ns_total"] / (d["batch_jobs"] ? d["batch_jobs"] : 1) / 1e6 }' | tee -a $o/summary.txt
  done
  kill $pid; wait $pid
  tar czf $OUT/run4.tgz -C $o .
done
