#!/usr/bin/env bash
# Session 43 run 2: the kept change (f023021: f64 keys as one int64, the NaN probe as before)
# against `base` (the kernels of sessions 38-42), alternating, every reduction op of f32, f64
# and i64 from 2^20 to 2^28, beside torch in the same run: issue 6's f64 min and max at 2^24.
# Usage: `. .gpu/env.sh; [ROUNDS=3] bash docs/data/session43/run2.sh $OUT` with .gpu/ and .exp/ carried.
OUT=${1:?}; o=/tmp/s43r2; mkdir -p $o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $o/gpu.txt
mkdir -p /tmp/base /tmp/final
tar xJf .exp/s42pages.txz -C /tmp/base bench/vkreduce-bench
tar xJf .exp/s43final.txz -C /tmp/final bench/vkreduce-bench
for round in $(seq ${ROUNDS:-3}); do
  order="base final"; [ $((round % 2)) = 0 ] && order="final base"
  for v in $order; do
    timeout 170 /tmp/$v/bench/vkreduce-bench --reduce-only --ops sum,min,max,count --dtypes f32,f64,i64 \
      --min-log2 20 --max-log2 28 --reps 20 --csv $o/$v-$round.csv > $o/$v-$round.txt 2>&1 || echo "$v $round rc=$?"
    grep -E "^reduce +(min|max|sum) +f64 +2\^24" $o/$v-$round.txt | sed "s/^/$v r$round /"
  done
  tar czf $OUT/run2.tgz -C $o .
done
timeout 200 python3 bench/torch_bench.py --kinds reduce --dtypes f32,f64,i64 --min-log2 20 --max-log2 28 \
  --reps 20 --csv $o/torch.csv > $o/torch.txt 2>&1; echo "torch rc=$?"
grep -E "(min|max|sum) +f64 +2\^24 " $o/torch.txt
tar czf $OUT/run2.tgz -C $o .
