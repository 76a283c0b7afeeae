#!/usr/bin/env bash
# Session 38 run 6: PCIe both ways at once as two transfers (vkreduce-bench --pcie of
# dac662f, carried as .exp/s38pcie-bench): does a second copy in the other direction,
# recorded with no barrier between, reach what torch's two CUDA streams reach (50.4 GB/s each
# way on the H200 in S38-5), where one host-to-host copy moved 42.1?
# Usage: `. .gpu/env.sh; bash docs/data/session38/run6.sh $OUT` with .gpu/ and .exp/ carried.
OUT=${1:?}
mkdir -p /tmp/v; tar xJf .exp/s38rev.txz -C /tmp/v   # the runtime libraries' layout; the bench is its own binary
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for i in 1 2; do
  timeout 90 .exp/s38pcie-bench --reduce-only --scan-only --pcie --reps 10 > $OUT/pcie-$i.txt 2>&1
  echo "pcie $i rc=$?"; grep '^pcie' $OUT/pcie-$i.txt
done
