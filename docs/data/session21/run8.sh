#!/usr/bin/env bash
# Session 21 run 8 (run in session 22): e32 (probe-e32.patch on 92774f1: every 32-bit scan
# computes its row prefixes before the look-back, now that every lane stores through one
# call) against fin (92774f1): the driver's registers for e32; sum, prod and max of f32, i32
# and u32 at 2^28, two rounds interleaved (fin, e32, e32, fin); torch's scans; e32's engine
# scan tests on the H200.
# Run as `. .gpu/env.sh; bash docs/data/session21/run8.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
VKR_PIPELINE_STATS=1 timeout 100 .exp/vkreduce-bench-e32 --scan-only --ops sum --dtypes f32 \
  --min-log2 10 --max-log2 10 --reps 1 > "$o/stats-e32.txt" 2>&1
grep -E "pipeline scan_chained_(f32|i32|u32)_[a-z]* " "$o/stats-e32.txt" | cut -c1-60
scan() { # build name
  timeout 200 .exp/vkreduce-bench-$1 --scan-only --ops sum,prod,max --dtypes f32,i32,u32 \
    --min-log2 28 --max-log2 28 --reps 20 --csv "$o/scan-$2.csv" > "$o/scan-$2.txt" 2>&1
  echo "scan $2 rc=$? $(date +%T) $(grep -c WRONG $o/scan-$2.txt) wrong"
  grep -E "^scan" "$o/scan-$2.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo
  pack
}
scan fin fin-1; scan e32 e32-1; scan e32 e32-2; scan fin fin-2
timeout 150 python3 bench/torch_bench.py --kinds scan --min-log2 28 --max-log2 28 --reps 20 \
  --dtypes f32,i32 --csv "$o/torch-scan.csv" > "$o/torch-scan.txt" 2>&1
echo "torch scan rc=$? $(date +%T)"; grep -E "^scan" "$o/torch-scan.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo; pack
timeout 150 .exp/test_kern_scan-e32 > "$o/test_kern_scan-e32.txt" 2>&1
echo "test_kern_scan e32 rc=$? $(date +%T)"; tail -n 2 "$o/test_kern_scan-e32.txt"
pack
