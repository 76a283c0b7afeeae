#!/usr/bin/env bash
# Session 25 run 2: row counts for what run S25-1 left open, all with the one binary "h"
# (7039493) and VKR_SCAN_CHUNK_ROWS: the i64 and u64 sums, min and max at 9 rows again beside
# their default 8 (S25-1: -62 us for sums, -89 for min and max) and at 10; the f64 sum and
# product and the i64 and u64 products at 9 (80 and 128 registers); the f64 min and max
# single-pass (VKR_SCAN=single-pass; by default reduce-then-scan) at 8, 9 and 14 rows beside
# reduce-then-scan; 32-bit min and max at 9. Registers at 10 rows and for the f64 min and
# max single-pass.
# Run as `. .gpu/env.sh; bash docs/data/session25/run2.sh $OUT` with .gpu/ and .exp/s25.txz
# carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
b=/tmp/s25; mkdir -p $b; tar xJf .exp/s25.txz -C $b
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 200 > "$o/smi.csv" 2>&1 &
smi=$!
stats() { # rows scan-algorithm name
  VKR_SCAN_CHUNK_ROWS=$1 VKR_SCAN=$2 VKR_PIPELINE_STATS=1 timeout 60 $b/vkreduce-bench-h --scan-only \
    --ops min --dtypes f64 --min-log2 10 --max-log2 10 --reps 1 2>&1 | grep scan_chained_ | sed 's/Binary.*Local/Local/' > "$o/stats-$3.txt"
}
stats 10 "" r10; stats "" single-pass sp-def; stats 9 single-pass sp-r9; stats 14 single-pass sp-r14
echo "stats $(date +%T)"
scan() { # name rows scan-algorithm ops dtypes
  VKR_SCAN_CHUNK_ROWS=$2 VKR_SCAN=$3 timeout 130 $b/vkreduce-bench-h --scan-only --ops $4 --dtypes $5 \
    --min-log2 28 --max-log2 28 --reps 20 --csv "$o/scan-$1.csv" > "$o/scan-$1.txt" 2>&1
  echo "scan $1 rc=$? $(date +%T) $(grep -c WRONG $o/scan-$1.txt) wrong"
  grep -E "^scan" "$o/scan-$1.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo
  pack
}
scan def-64 "" "" sum,min,max i64,u64
scan r9-64 9 "" sum,min,max i64,u64
scan r10-64 10 "" sum,min,max i64,u64
scan r9-w 9 "" sum,prod f64
scan r9-p 9 "" prod i64,u64
scan f64mm-rts "" "" min,max f64
scan f64mm-sp "" single-pass min,max f64
scan f64mm-sp-r9 9 single-pass min,max f64
scan f64mm-sp-r14 14 single-pass min,max f64
scan r9-32 9 "" min,max f32,i32,u32
scan def-32 "" "" min,max f32,i32
kill $smi; pack
