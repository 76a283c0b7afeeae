#!/usr/bin/env bash
# Session 44 run 1: does prefetching a later tile's input into L2 during the look-back take
# the look-back's waits out of the 64-bit scans? Builds of scan_chained.comp with
# PREFETCH_STRIDE 0 (no prefetch code: the default), 32 and 128 bytes between the prefetched
# words; VKR_SCAN_PREFETCH sets how many tiles ahead (0: none). Sums and products of f64
# and i64 at 2^28, two rounds (the last three series in round 1 only); and build d (SUM_BEFORE_BY_DIFFERENCE: integer sums' lanes
# before from the row's scan less the lane's own, not a shuffle) and build r (RAKE_ROWS: the 64-bit
# sums' and products' rows scanned through shared memory), VKR_PIPELINE_STATS=1 (registers), torch beside them.
# Usage: `. .gpu/env.sh; bash docs/data/session44/run1.sh $OUT` with .gpu/ and .exp/ carried.
OUT=${1:?}; o=/tmp/s44r1; mkdir -p $o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $o/gpu.txt
for v in p0 p32 p128 d r; do mkdir -p /tmp/$v; tar xJf .exp/s44$v.txz -C /tmp/$v; done
scan() { # build ahead round
  local name=$1-a$2-r$3
  VKR_SCAN_PREFETCH=$2 VKR_PIPELINE_STATS=1 timeout 150 /tmp/$1/bench/vkreduce-bench --scan-only \
    --ops sum,prod --dtypes f64,i64 --min-log2 28 --max-log2 28 --reps 20 \
    --csv $o/$name.csv > $o/$name.txt 2>&1 || echo "$name rc=$?"
  echo "$name $(grep -c WRONG $o/$name.txt) wrong: $(grep -E '^scan' $o/$name.txt | awk '{print $2, $3, $5}' | tr '\n' ';')"
  tar czf $OUT/run1.tgz -C $o .
}
timeout 120 python3 bench/torch_bench.py --kinds scan --dtypes f32,f64,i64 --min-log2 28 --max-log2 28 \
  --reps 20 --csv $o/torch.csv > $o/torch.txt 2>&1; echo "torch rc=$?"
grep -E "2\^28" $o/torch.txt | head
for round in 1 2; do
  scan p0 0 $round
  scan r 0 $round
  scan p32 264 $round
  scan d 0 $round
  [ $round = 1 ] || continue
  scan p128 264 $round
  scan p32 396 $round
  scan p32 0 $round
done
grep -iE 'copy kernel' $o/p0-a0-r1.txt | head -2
for f in p0-a0-r1 r-a0-r1 p32-a264-r1 p128-a264-r1 d-a0-r1; do
  echo "== $f"; grep -iE 'pipeline scan_chained.*(sum|prod).*(f64|i64|f32)' $o/$f.txt | head -8
done
tar czf $OUT/run1.tgz -C $o .
