#!/usr/bin/env bash
# Session 41 run 4: how much of the shm scan's distance from the host-to-host ceiling is the
# scan kernel's, and how much the daemon's path? vkreduce-bench --pcie-ceilings now also
# times the scan of host memory in place (u32 sum, kernel time from timestamps, every output
# checked), twice, then the shm scan end to end through a daemon, twice, on one machine.
# Usage: `. .gpu/env.sh; bash docs/data/session41/run4.sh $OUT` with .gpu/ and .exp/ carried
# (.exp/s41scan.txz: build-release of the commit the README names).
OUT=${1:?}; o=/tmp/r4; mkdir -p $o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
b=/tmp/scan; mkdir -p $b; tar xJf .exp/s41scan.txz -C $b
export LD_LIBRARY_PATH=$b/client:$LD_LIBRARY_PATH
for i in 1 2; do
  timeout 90 $b/bench/vkreduce-bench --reduce-only --scan-only --pcie-ceilings --reps 10 > $o/ceilings-$i.txt 2>&1
  echo "ceilings $i rc=$?"; grep -E '^pcie ' $o/ceilings-$i.txt
done
tar czf $OUT/run4.tgz -C $o .
sock=/tmp/vkr41.sock; st=$(mktemp -d)
$b/daemon/vkreduced --socket $sock --state-dir $st 2> $o/daemon.log & pid=$!
for _ in $(seq 600); do $b/client/vkreduce --socket $sock ping >/dev/null 2>&1 && break; sleep 0.05; done
for i in 1 2; do
  timeout 150 $b/bench/vkreduce-shm-bench --socket $sock --mib 1024 --reps 10 > $o/shm-$i.txt 2>&1
  echo "shm $i rc=$?"; grep -E 'GB/s' $o/shm-$i.txt
done
kill $pid; wait $pid
tar czf $OUT/run4.tgz -C $o .
