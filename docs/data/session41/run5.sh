#!/usr/bin/env bash
# Session 41 run 5: S41-4 found the scan kernel in Vulkan's host memory at 40.4 GB/s each way
# and the shm scan end to end at 38.4-38.6. Is the difference the pages (a client's memfd
# pages imported, 4 KiB each) or the daemon's path? vkreduce-bench --pcie-ceilings of db16500
# also times the same scan between a memfd's pages imported as the daemon imports a client's.
# Usage: `. .gpu/env.sh; bash docs/data/session41/run5.sh $OUT` with .gpu/ and .exp/ carried
# (.exp/s41import.txz: build-release's bench/vkreduce-bench of db16500).
# Run S41-6 is this script again with .exp/s41import.txz rebuilt at 7f3e488, whose bench adds an f32 row.
OUT=${1:?}; o=/tmp/r5; mkdir -p $o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
b=/tmp/import; mkdir -p $b; tar xJf .exp/s41import.txz -C $b
for i in 1 2; do
  timeout 120 $b/bench/vkreduce-bench --reduce-only --scan-only --pcie-ceilings --reps 10 > $o/ceilings-$i.txt 2>&1
  echo "ceilings $i rc=$?"; grep -E "^pcie (host to host|scan)" $o/ceilings-$i.txt
done
tar czf $OUT/run5.tgz -C $o .
