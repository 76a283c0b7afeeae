#!/usr/bin/env bash
# Session 45 run 2, for an H200 only (it stops at once on any other GPU): the f64 sum and
# product scans at 2^28 at 12, 14 and 16 rows per invocation (VKR_SCAN_CHUNK_ROWS), HEAD's
# build (.exp/s44head.txz), two rounds in rotated order. Since session 35 these scan each
# row within its chunk (ROWS_SCANNED_IN_CHUNK) at 16 rows, a count chosen on an H100; the
# H200 has not had the rows swept in that shape.
# Usage: `. .gpu/env.sh; bash docs/data/session45/run2.sh $OUT` with .gpu/ and .exp/ carried.
OUT=${1:?}; o=/tmp/s45r2; mkdir -p $o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $o/gpu.txt
grep -q H200 $o/gpu.txt || { echo "not an H200: nothing run"; exit 0; }
b=/tmp/head; mkdir -p $b; tar xJf .exp/s44head.txz -C $b bench/vkreduce-bench
for round in 1 2; do
  order="12 14 16"; [ $round = 2 ] && order="16 14 12"
  for rows in $order; do
    name=rows$rows-r$round
    VKR_SCAN_CHUNK_ROWS=$rows VKR_PIPELINE_STATS=1 timeout 100 $b/bench/vkreduce-bench --scan-only \
      --ops sum,prod --dtypes f64 --min-log2 28 --max-log2 28 --reps 20 \
      --csv $o/$name.csv > $o/$name.txt 2>&1 || echo "$name rc=$?"
    echo "$name $(grep -c WRONG $o/$name.txt) wrong: $(grep -E '^scan' $o/$name.txt | awk '{print $2, $3, $5}' | tr '\n' ';') $(grep -oE 'scan_chained_f64_(sum|prod) \[CS\]: Register Count=[0-9]+' $o/$name.txt | sed 's/ \[CS\]: Register Count=/ regs /' | tr '\n' ' ')"
    tar czf $OUT/run2.tgz -C $o .
  done
done
