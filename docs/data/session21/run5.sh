#!/usr/bin/env bash
# Session 21 run 5. rps (probe-rps.patch on a833700: rp with the rows' in-tile prefixes parked
# in shared memory through the look-back instead of registers) against rp and cur: the
# driver's registers (VKR_PIPELINE_STATS=1); scans at 2^28 of sum, prod and max of f32, i32,
# f64 and i64 (rps, rp, cur, rps); torch's scans; rps's engine scan tests on the H200.
# Run as `. .gpu/env.sh; bash docs/data/session21/run5.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
tar xJf .exp/bins.txz -C .exp
pack() { tar czf "$out/run.tgz" -C "$o" .; }
VKR_PIPELINE_STATS=1 timeout 100 .exp/vkreduce-bench-rps --scan-only --ops sum \
  --dtypes f32 --min-log2 10 --max-log2 10 --reps 1 > "$o/stats-rps.txt" 2>&1
echo "stats rps rc=$?"; grep -E "pipeline scan_chained_(f32|i32|f64|i64)_(sum|prod|max) " "$o/stats-rps.txt" | sed 's/Binary.*Shared/Shared/'
pack
scan() { # name build
  timeout 150 .exp/vkreduce-bench-$2 --scan-only --ops sum,prod,max --dtypes f32,i32,f64,i64 \
    --min-log2 28 --max-log2 28 --reps 20 --csv "$o/scan-$1.csv" > "$o/scan-$1.txt" 2>&1
  echo "scan $1 rc=$? $(date +%T) $(grep -c WRONG $o/scan-$1.txt) wrong"
  grep -E "^scan" "$o/scan-$1.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo
  pack
}
scan rps-1 rps; scan rp-1 rp; scan cur-1 cur; scan rps-2 rps
timeout 120 python3 bench/torch_bench.py --kinds scan --min-log2 28 --max-log2 28 --reps 20 \
  --dtypes f32,i32,f64,i64 --csv "$o/torch-scan.csv" > "$o/torch-scan.txt" 2>&1
echo "torch scan rc=$? $(date +%T)"; grep -E "^scan" "$o/torch-scan.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo; pack
timeout 150 .exp/test_kern_scan-rps > "$o/test_kern_scan-rps.txt" 2>&1
echo "test_kern_scan rps rc=$? $(date +%T)"; tail -n 2 "$o/test_kern_scan-rps.txt"
pack
