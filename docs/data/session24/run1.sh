#!/usr/bin/env bash
# Session 24 run 1: chunk rows as a specialization constant (spec: one binary, rows per op and
# dtype from kern.c or VKR_SCAN_CHUNK_ROWS) against fin (ce19fea: rows fixed at 8 when the
# shaders were compiled) and r12ls (ce19fea built with -Dscan_chunk_rows=12) in the same
# run, every scan op and dtype at 2^28; spec's registers at 8, 10 and 12 rows; torch's scans;
# spec's engine scan tests on the H200 at its default and at 12 rows.
# Run as `. .gpu/env.sh; bash docs/data/session24/run1.sh $OUT PART` (PART a or b) with .gpu/
# and .exp/s24.txz carried.
out=${1:?}; part=${2:?}; mkdir -p "$out/r"; o="$out/r"
b=/tmp/s24; mkdir -p $b; tar xJf .exp/s24.txz -C $b
pack() { tar czf "$out/run-$part.tgz" -C "$o" .; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 200 > "$o/smi-$part.csv" 2>&1 &
smi=$!
scan() { # build name rows ops dtypes
  VKR_SCAN_CHUNK_ROWS=$3 timeout 130 $b/vkreduce-bench-$1 --scan-only --ops $4 --dtypes $5 \
    --min-log2 28 --max-log2 28 --reps 20 --csv "$o/scan-$2.csv" > "$o/scan-$2.txt" 2>&1
  echo "scan $2 rc=$? $(date +%T) $(grep -c WRONG $o/scan-$2.txt) wrong"
  grep -E "^scan" "$o/scan-$2.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo
  pack
}
if [ "$part" = a ]; then
  for rows in "" 10 12; do
    VKR_SCAN_CHUNK_ROWS=$rows VKR_PIPELINE_STATS=1 timeout 60 $b/vkreduce-bench-spec --scan-only --ops sum \
      --dtypes f32 --min-log2 10 --max-log2 10 --reps 1 > "$o/stats-spec${rows:+-r$rows}.txt" 2>&1
  done
  pack
  scan spec spec "" sum,prod,min,max f32,f64,i32,u32,i64,u64
  scan fin fin "" sum,prod,min,max f32,f64,i32,i64
  scan r12ls r12ls "" sum,prod f64,i64
  timeout 60 python3 bench/torch_bench.py --kinds scan --min-log2 28 --max-log2 28 --reps 20 \
    --dtypes f32,f64,i32,i64 --csv "$o/torch-scan.csv" > "$o/torch-scan.txt" 2>&1
  echo "torch scan rc=$? $(date +%T)"; grep -E "^scan" "$o/torch-scan.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo
else
  scan spec spec-r12 12 sum,prod,min,max f64,i64,u64
  scan spec spec-r10 10 sum,prod,min,max f32,i32
  scan spec spec-r12-32 12 sum,prod f32,i32
  timeout 90 $b/test_kern_scan-spec > "$o/test_kern_scan-spec.txt" 2>&1
  echo "test_kern_scan spec rc=$? $(date +%T)"; tail -n 2 "$o/test_kern_scan-spec.txt"
  VKR_SCAN_CHUNK_ROWS=12 timeout 90 $b/test_kern_scan-spec > "$o/test_kern_scan-spec-r12.txt" 2>&1
  echo "test_kern_scan spec r12 rc=$? $(date +%T)"; tail -n 2 "$o/test_kern_scan-spec-r12.txt"
fi
kill $smi; pack
