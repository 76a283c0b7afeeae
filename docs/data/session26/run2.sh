#!/usr/bin/env bash
# Session 26 run 2: parked rows (scan_chained.comp's PARK_ROWS: a first part of each tile
# scanned and parked in shared memory before the part in registers is loaded), one binary
# ("p": the look-back's tile fold by shuffles for 64-bit sums and products, and parked rows
# through VKR_SCAN_PARK_ROWS, 0 by default), every scan op and dtype at 2^28:
#   def:   the default (no parked rows; against run S26-1's g this is the shuffle tree);
#   park8: 8 parked rows beside each op and dtype's rows in registers;
#   park4: 4 parked rows;
#   c8p8:  64-bit types at 8 rows in registers (80 registers) and 8 parked;
# exclusive scans with park8; registers and shared memory of def and park8; torch's scans;
# test_kern_scan with 8 parked rows.
# Run as `. .gpu/env.sh; bash docs/data/session26/run2.sh $OUT` with .gpu/ and .exp/s26b.txz
# carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
b=/tmp/s26b; mkdir -p $b; tar xJf .exp/s26b.txz -C $b
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 200 > "$o/smi.csv" 2>&1 &
smi=$!
for p in 0 8; do
  VKR_SCAN_PARK_ROWS=$p VKR_PIPELINE_STATS=1 timeout 60 $b/vkreduce-bench-p --scan-only --ops sum --dtypes f32 \
    --min-log2 10 --max-log2 10 --reps 1 2>&1 | grep scan_chained_ | sed 's/Binary.*Local/Local/' > "$o/stats-park$p.txt"
done
grep -E "f64_sum |i64_sum |f32_sum |i64_max " "$o/stats-park8.txt"
scan() { # name park ops dtypes [extra] [env]
  env VKR_SCAN_PARK_ROWS=$2 ${6:-} timeout 130 $b/vkreduce-bench-p --scan-only ${5:-} --ops $3 --dtypes $4 \
    --min-log2 28 --max-log2 28 --reps 20 --csv "$o/scan-$1.csv" > "$o/scan-$1.txt" 2>&1
  echo "scan $1 rc=$? $(date +%T) $(grep -c WRONG $o/scan-$1.txt) wrong"
  grep -E "^scan" "$o/scan-$1.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo
  pack
}
scan def 0 sum,prod,min,max f32,i32,u32,f64,i64,u64
scan park8 8 sum,prod,min,max f32,i32,u32,f64,i64,u64
scan park4 4 sum,prod,min,max f32,i32,u32,f64,i64,u64
scan c8p8 8 sum,prod,min,max f64,i64,u64 "" VKR_SCAN_CHUNK_ROWS=8
scan park8-excl 8 sum,prod,min,max f32,i32,u32,f64,i64,u64 --exclusive
scan def-b 0 sum,prod,max f32,f64,i64
timeout 60 python3 bench/torch_bench.py --kinds scan --min-log2 28 --max-log2 28 --reps 20 \
  --dtypes f32,f64,i32,i64 --csv "$o/torch-scan.csv" > "$o/torch-scan.txt" 2>&1
echo "torch scan rc=$? $(date +%T)"; grep -E "^scan" "$o/torch-scan.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo; pack
VKR_SCAN_PARK_ROWS=8 timeout 90 $b/test_kern_scan-p > "$o/test_kern_scan-park8.txt" 2>&1
echo "test_kern_scan park8 rc=$? $(date +%T)"; tail -n 1 "$o/test_kern_scan-park8.txt"
kill $smi; pack
