#!/usr/bin/env bash
# Session 38 run 3 (the same H200, warm): every reduction op and dtype of rev at 2^28 and
# 2^24 against the read kernel (the bench's "of read" column) and torch in the same run, and
# the PCIe copies (copy kernel and vkCmdCopyBuffer, each direction and both at once).
# Usage: `. .gpu/env.sh; bash docs/data/session38/run3.sh $OUT` with .gpu/ and .exp/ carried.
OUT=${1:?}
mkdir -p /tmp/v; tar xJf .exp/s38rev.txz -C /tmp/v; b=/tmp/v/bench/vkreduce-bench
for k in 28 24; do
  timeout 200 $b --reduce-only --min-log2 $k --max-log2 $k --reps 20 --csv $OUT/reduce-$k.csv > $OUT/reduce-$k.txt 2>&1
  echo reduce $k rc=$? $(grep -c WRONG $OUT/reduce-$k.txt) wrong
done
timeout 90 python3 bench/torch_bench.py --kinds reduce --min-log2 24 --max-log2 28 --reps 20 \
  --csv $OUT/torch-reduce.csv > $OUT/torch-reduce.txt 2>&1
echo torch rc=$?
timeout 60 $b --reduce-only --scan-only --pcie > $OUT/pcie.txt 2>&1
echo pcie rc=$?
