#!/usr/bin/env bash
# Session 25 run 1: the final build of session 24 (7039493, "h": rows per op and dtype from
# kern_scan_chunk_rows) against ce19fea ("fin": 8 rows compiled into every scan_chained
# module) in the same run, every scan op and dtype at 2^28; torch's scans; h's engine scan
# tests on the H200; registers per row count; then row counts not yet swept
# (VKR_SCAN_CHUNK_ROWS): 11, 13 and 15 for the f64 sum and product and the i64 product, 9 and
# 14 for the i64 and u64 sums, min and max, 7 for the 32-bit sums, products, min and max.
# Run as `. .gpu/env.sh; bash docs/data/session25/run1.sh $OUT` with .gpu/ and .exp/s25.txz
# carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
b=/tmp/s25; mkdir -p $b; tar xJf .exp/s25.txz -C $b
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 200 > "$o/smi.csv" 2>&1 &
smi=$!
for rows in "" 7 9 11 13 14 15; do
  VKR_SCAN_CHUNK_ROWS=$rows VKR_PIPELINE_STATS=1 timeout 60 $b/vkreduce-bench-h --scan-only --ops sum \
    --dtypes f32 --min-log2 10 --max-log2 10 --reps 1 2>&1 | grep scan_chained_ | sed 's/Binary.*Local/Local/' > "$o/stats-r${rows:-def}.txt"
done
echo "stats $(date +%T)"
scan() { # build name rows ops dtypes
  VKR_SCAN_CHUNK_ROWS=$3 timeout 130 $b/vkreduce-bench-$1 --scan-only --ops $4 --dtypes $5 \
    --min-log2 28 --max-log2 28 --reps 20 --csv "$o/scan-$2.csv" > "$o/scan-$2.txt" 2>&1
  echo "scan $2 rc=$? $(date +%T) $(grep -c WRONG $o/scan-$2.txt) wrong"
  grep -E "^scan" "$o/scan-$2.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo
  pack
}
scan h h "" sum,prod,min,max f32,f64,i32,u32,i64,u64
scan fin fin "" sum,prod f32,f64,i64,u64
scan fin fin-ctl "" max f32,i64
timeout 60 python3 bench/torch_bench.py --kinds scan --min-log2 28 --max-log2 28 --reps 20 \
  --dtypes f32,f64,i32,i64 --csv "$o/torch-scan.csv" > "$o/torch-scan.txt" 2>&1
echo "torch scan rc=$? $(date +%T)"; grep -E "^scan" "$o/torch-scan.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo; pack
timeout 90 $b/test_kern_scan-h > "$o/test_kern_scan-h.txt" 2>&1
echo "test_kern_scan h rc=$? $(date +%T)"; tail -n 2 "$o/test_kern_scan-h.txt"
for rows in 11 13 15; do scan h h-r$rows $rows sum,prod f64; scan h h-r$rows-i64 $rows prod i64; done
for rows in 9 14; do scan h h-r$rows-64 $rows sum,min,max i64,u64; done
scan h h-r7-32 7 sum,prod,min,max f32,i32
kill $smi; pack
