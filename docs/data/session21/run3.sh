#!/usr/bin/env bash
# Session 21 run 3. The single-pass scan with the rows' inclusive scans computed again after
# the look-back instead of held through it: r64 (the default of the commit after a833700: for
# 64-bit dtypes only) and rall (every dtype, ROWS_AFTER_LOOK_BACK true), against cur
# (a833700). The driver's registers per invocation (VKR_PIPELINE_STATS=1); scans at 2^28 of
# sum, prod and max of f64 and i64 and sum and max of f32 and i32, two rounds interleaved;
# the engine's scan tests of r64 and rall on the H200; torch's cumsum.
# Run as `. .gpu/env.sh; bash docs/data/session21/run3.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
tar xJf .exp/bins.txz -C .exp
pack() { tar czf "$out/run.tgz" -C "$o" .; }
for b in cur r64 rall; do
  VKR_PIPELINE_STATS=1 timeout 100 .exp/vkreduce-bench-$b --scan-only --ops sum \
    --dtypes f32 --min-log2 10 --max-log2 10 --reps 1 > "$o/stats-$b.txt" 2>&1
  echo "stats $b rc=$?"; grep -E "pipeline scan_chained_(f32|i32|f64|i64)_(sum|prod|max) " "$o/stats-$b.txt" | head -12
done
pack
scan() { # name build ops dtypes
  timeout 150 .exp/vkreduce-bench-$2 --scan-only --ops $3 --dtypes $4 \
    --min-log2 28 --max-log2 28 --reps 20 --csv "$o/scan-$1.csv" > "$o/scan-$1.txt" 2>&1
  echo "scan $1 rc=$? $(date +%T) $(grep -c WRONG $o/scan-$1.txt) wrong"
  grep -E "^scan" "$o/scan-$1.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo
  pack
}
for r in 1 2; do
  for b in cur r64 rall; do scan $b-64-$r $b sum,prod,max f64,i64; done
  for b in rall cur; do scan $b-32-$r $b sum,max f32,i32; done
done
timeout 120 python3 bench/torch_bench.py --kinds scan --min-log2 28 --max-log2 28 --reps 20 \
  --dtypes f32,i32,f64,i64 --csv "$o/torch-scan.csv" > "$o/torch-scan.txt" 2>&1
echo "torch scan rc=$? $(date +%T)"; grep -E "^scan" "$o/torch-scan.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo; pack
for b in r64 rall; do
  timeout 150 .exp/test_kern_scan-$b > "$o/test_kern_scan-$b.txt" 2>&1
  echo "test_kern_scan $b rc=$? $(date +%T)"; tail -n 2 "$o/test_kern_scan-$b.txt"
done
pack
