#!/usr/bin/env bash
# Session 42 run 2: why does the daemon's 1 GiB shm scan take ~0.5 ms (2%) more GPU time
# than vkreduce-bench's scan of imported pages (S41-8: 26.86 ms against 26.34)? Two
# candidates from reading the code (the two record the same commands; see README):
# (1) where the pages came from: the client writes its pages one fault at a time before
# registering them, the bench imports (pins) them in bulk first and writes them after;
# vkreduce-shm-bench --pages fill|register|fallocate changes that alone;
# (2) the look-back's fallbacks (a waiting workgroup re-reads a stalled predecessor's tile
# from host memory): VKR_SCAN_PATIENCE=4096 all but turns them off.
# Alternating, two rounds, one machine: the bench's kernel times (--pcie-ceilings) with
# default patience and 4096, then daemons with each, the daemon's GPU time per batch
# from its stats around 11 scans of 1 GiB each.
# Usage: `. .gpu/env.sh; [ROUNDS=1] bash docs/data/session42/run2.sh $OUT` with .gpu/ and .exp/ carried
# (.exp/s42pages.txz: build-release of the commit the README names).
OUT=${1:?}; o=/tmp/r2; mkdir -p $o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $o/gpu.txt
b=/tmp/pages; mkdir -p $b; tar xJf .exp/s42pages.txz -C $b
export LD_LIBRARY_PATH=$b/client:$LD_LIBRARY_PATH
for round in $(seq ${ROUNDS:-2}); do
  for patience in default 4096; do
    if [ $patience = 4096 ]; then export VKR_SCAN_PATIENCE=4096; fi
    timeout 120 $b/bench/vkreduce-bench --reduce-only --scan-only --pcie-ceilings --reps 10 > $o/ceilings-$patience-$round.txt 2>&1
    grep -E "^pcie (host to host|scan)" $o/ceilings-$patience-$round.txt | sed "s/^/bench patience $patience r$round: /" | tee -a $o/summary.txt
    sock=/tmp/vkr42.sock; st=$(mktemp -d)
    $b/daemon/vkreduced --socket $sock --state-dir $st 2> $o/daemon-$patience-$round.log & pid=$!
    unset VKR_SCAN_PATIENCE
    for _ in $(seq 600); do $b/client/vkreduce --socket $sock ping >/dev/null 2>&1 && break; sleep 0.05; done
    for pages in fill register fallocate; do
      f=$o/$patience-$round-$pages
      $b/client/vkreduce --socket $sock stats > $f-stats0.txt
      timeout 120 $b/bench/vkreduce-shm-bench --socket $sock --mib 1024 --reps 10 --only scan --pages $pages > $f.txt 2>&1 || echo "rc $? $f" | tee -a $o/summary.txt
      $b/client/vkreduce --socket $sock stats > $f-stats1.txt
      join <(sort $f-stats0.txt) <(sort $f-stats1.txt) | awk -v what="daemon patience $patience r$round pages $pages" -v e2e="$(grep -o 'median [0-9.]* ms' $f.txt)" '
        { d[$1] = $3 - $2 } END {
          printf "%s: %s end to end; GPU time per batch %.3f ms over %d batches\n", what, e2e,
            d["gpu_ns_total"] / (d["batches"] ? d["batches"] : 1) / 1e6, d["batches"] }' | tee -a $o/summary.txt
    done
    kill $pid; wait $pid
    tar czf $OUT/run2.tgz -C $o .
  done
done
