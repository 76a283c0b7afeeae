#!/usr/bin/env bash
# Session 38 run 5 (the same H200, warm): torch's PCIe copies (pinned, pageable, both
# directions at once) and its in-process x.sum().item() latency; run 4's small sums again.
# Usage: `. .gpu/env.sh; bash docs/data/session38/run5.sh $OUT` with .gpu/ and .exp/ carried.
OUT=${1:?}
timeout 120 python3 bench/torch_bench.py --latency --kinds reduce --dtypes f32 --min-log2 10 --max-log2 10 --reps 20 \
  > $OUT/torch-latency.txt 2>&1
echo torch rc=$?
mkdir -p /tmp/v; tar xJf .exp/s38rev.txz -C /tmp/v
timeout 100 /tmp/v/bench/vkreduce-bench --reduce-only --ops sum --dtypes f32,i32,f64,i64 --min-log2 10 --max-log2 20 \
  --reps 20 --csv $OUT/small2.csv > $OUT/small2.txt 2>&1
echo small2 rc=$?
