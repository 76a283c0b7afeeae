#!/usr/bin/env bash
# Session 44 run 2, for an H200 only (issue 6's figures are the H200's; on any other GPU it
# stops at once): (a) run 1's prefetch there, where the look-back's waits cost the most: p0
# against p32 at 264 and 396 tiles ahead, f64 and i64 sums and products at 2^28, two rounds;
# (b) session 43's run 2 in one round (base against f023021's int64 keys, every reduction
# op of f32, f64 and i64 from 2^20 to 2^28, torch beside them): f64 min and max at 2^24.
# Usage: `. .gpu/env.sh; bash docs/data/session44/run2.sh $OUT` with .gpu/ and .exp/ carried.
OUT=${1:?}; o=/tmp/s44r2; mkdir -p $o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $o/gpu.txt
grep -q H200 $o/gpu.txt || { echo "not an H200: nothing run"; exit 0; }
for v in p0 p32; do mkdir -p /tmp/$v; tar xJf .exp/s44$v.txz -C /tmp/$v; done
scan() { # build ahead round
  local name=$1-a$2-r$3
  VKR_SCAN_PREFETCH=$2 VKR_PIPELINE_STATS=1 timeout 100 /tmp/$1/bench/vkreduce-bench --scan-only \
    --ops sum,prod --dtypes f64,i64 --min-log2 28 --max-log2 28 --reps 20 \
    --csv $o/$name.csv > $o/$name.txt 2>&1 || echo "$name rc=$?"
  echo "$name $(grep -c WRONG $o/$name.txt) wrong: $(grep -E '^scan' $o/$name.txt | awk '{print $2, $3, $5}' | tr '\n' ';')"
  tar czf $OUT/run2-scan.tgz -C $o .
}
for round in 1 2; do
  scan p0 0 $round
  scan p32 264 $round
  scan p32 396 $round
done
grep -iE 'copy kernel' $o/p0-a0-r1.txt | head -1
ROUNDS=1 bash docs/data/session43/run2.sh $OUT
