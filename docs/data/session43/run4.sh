#!/usr/bin/env bash
# Session 43 run 4 (on the H100 that run 3 got and did not use): float min and max scans,
# base against f023021, whose common.glsl key compare the f64 reduce-then-scan path uses.
# Usage: `. .gpu/env.sh; bash docs/data/session43/run4.sh $OUT` with .gpu/ and .exp/ carried.
OUT=${1:?}
mkdir -p /tmp/base /tmp/final $OUT/r4
tar xJf .exp/s42pages.txz -C /tmp/base bench/vkreduce-bench
tar xJf .exp/s43final.txz -C /tmp/final bench/vkreduce-bench
for r in 1 2; do
  for v in base final; do
    timeout 100 /tmp/$v/bench/vkreduce-bench --scan-only --ops min,max --dtypes f64,f32 --min-log2 24 --max-log2 26 \
      --reps 20 --csv $OUT/r4/$v-$r.csv > $OUT/r4/$v-$r.txt 2>&1
    grep -E "^scan" $OUT/r4/$v-$r.txt | sed "s/^/$v r$r /"
  done
done
