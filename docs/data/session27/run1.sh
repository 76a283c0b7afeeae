#!/usr/bin/env bash
# Session 27 run 1: float min and max scanned by integer-keyed modules (FLOAT_KEYS builds:
# scan_chained of i32 / i64 with the float key map at loads and stores, so no float register
# holds a key), against the build before it, one run, every series at 2^28:
#   base:  00f24df (session 26's final build): f32 min/max single-pass on float-held keys,
#          f64 min/max by reduce-then-scan (default) and single-pass on double-held keys;
#   new:   the FLOAT_KEYS modules; f64 min/max forced single-pass at 8, 9, 10 and 14 rows;
#          f32 min/max at 8 and 9 rows, exclusive too;
# then the i64 and u64 sums at 12 and 14 rows (the shuffle fold of session 26 was never timed
# there), torch's scans at 2^28 with cummin and cummax, and the new build's scan tests.
# Run as `. .gpu/env.sh; bash docs/data/session27/run1.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
b=/tmp/s27; mkdir -p $b; tar xJf .exp/s27.txz -C $b
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 200 > "$o/smi.csv" 2>&1 &
smi=$!
for v in base new; do
  VKR_SCAN=single-pass VKR_PIPELINE_STATS=1 timeout 60 $b/vkreduce-bench-$v --scan-only --ops min,max --dtypes f32,f64 \
    --min-log2 10 --max-log2 10 --reps 1 2>&1 | grep scan_chained_ | sed 's/Binary.*Local/Local/' > "$o/stats-$v.txt"
done
grep -E "f64_m|f32_m" "$o/stats-new.txt" | head -8
scan() { # name binary ops dtypes [extra] [env...]
  local name=$1 v=$2 ops=$3 dt=$4 extra=${5:-}; shift 5
  env "$@" timeout 120 $b/vkreduce-bench-$v --scan-only $extra --ops $ops --dtypes $dt \
    --min-log2 28 --max-log2 28 --reps 20 --csv "$o/scan-$name.csv" > "$o/scan-$name.txt" 2>&1
  echo "scan $name rc=$? $(date +%T) $(grep -c WRONG $o/scan-$name.txt) wrong"
  grep -E "^scan" "$o/scan-$name.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo
  pack
}
scan base-def base min,max f32,f64 ""
scan base-sp base min,max f64 "" VKR_SCAN=single-pass
scan new-f64-8 new min,max f64 "" VKR_SCAN=single-pass VKR_SCAN_CHUNK_ROWS=8
scan new-f64-9 new min,max f64 "" VKR_SCAN=single-pass VKR_SCAN_CHUNK_ROWS=9
scan new-f64-10 new min,max f64 "" VKR_SCAN=single-pass VKR_SCAN_CHUNK_ROWS=10
scan new-f64-14 new min,max f64 "" VKR_SCAN=single-pass VKR_SCAN_CHUNK_ROWS=14
scan new-f32 new min,max f32 "" 
scan new-f32-8 new min,max f32 "" VKR_SCAN_CHUNK_ROWS=8
scan new-excl new min,max f32,f64 --exclusive VKR_SCAN=single-pass
scan base-excl base min,max f32 --exclusive
scan new-i64ref new min,max,sum i64 ""
scan new-sum-12 new sum i64,u64 "" VKR_SCAN_CHUNK_ROWS=12
scan new-sum-14 new sum i64,u64 "" VKR_SCAN_CHUNK_ROWS=14
scan base-def2 base min,max f32,f64 ""
scan new-f64-9b new min,max f64 "" VKR_SCAN=single-pass VKR_SCAN_CHUNK_ROWS=9
timeout 150 python3 bench/torch_bench.py --kinds scan --min-log2 28 --max-log2 28 --reps 5 \
  --cummin-max-log2 28 --dtypes f32,f64,i32,i64 --csv "$o/torch-scan.csv" > "$o/torch-scan.txt" 2>&1
echo "torch scan rc=$? $(date +%T)"; grep -E "^scan" "$o/torch-scan.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo; pack
VKR_SCAN=single-pass timeout 100 $b/test_kern_scan-new > "$o/test_kern_scan-single.txt" 2>&1
echo "test_kern_scan single-pass rc=$? $(date +%T)"; tail -n 1 "$o/test_kern_scan-single.txt"
kill $smi; pack
