#!/usr/bin/env bash
# Session 23 run 1: the single-pass scan's chunk rows (meson -Dscan_chunk_rows=N, 8 by
# default since session 7) swept again on the current kernel: r6, r8 (8716055), r10, r12,
# r16, the same source built with N rows of 16-byte vectors per invocation (tile = 256 x N x
# 16 bytes); and ls (8716055 with every lane's local scans of its rows computed before the
# look-back, in place of its vectors: probe-ls.patch). The driver's registers for each; sums
# of f32, i32, f64 and i64 at 2^28, two rounds in opposite orders; torch's scans; the engine
# scan tests of ls and r12 (rows not a power of two) on the H200.
# Run as `. .gpu/env.sh; bash docs/data/session23/run1.sh $OUT` with .gpu/ and .exp/s23.txz
# carried (the five builds' vkreduce-bench and test_kern_scan, from /tmp/brN on 8716055).
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
b=/tmp/s23; mkdir -p $b; tar xJf .exp/s23.txz -C $b
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 200 > "$o/smi.csv" 2>&1 &
smi=$!
for r in ls 6 8 10 12 16; do
  [ $r = ls ] || r=r$r
  VKR_PIPELINE_STATS=1 timeout 100 $b/vkreduce-bench-$r --scan-only --ops sum --dtypes f32 \
    --min-log2 10 --max-log2 10 --reps 1 > "$o/stats-$r.txt" 2>&1
  echo "$r: $(grep -E "pipeline scan_chained_(f32|i32|f64|i64)_sum " "$o/stats-$r.txt" | sed -E 's/pipeline scan_chained_([a-z0-9]*)_sum.*Register Count=([0-9]*).*/\1 \2/' | tr '\n' ' ')"
done
scan() { # build name
  timeout 200 $b/vkreduce-bench-$1 --scan-only --ops sum --dtypes f32,i32,f64,i64 \
    --min-log2 28 --max-log2 28 --reps 20 --csv "$o/scan-$2.csv" > "$o/scan-$2.txt" 2>&1
  echo "scan $2 rc=$? $(date +%T) $(grep -c WRONG $o/scan-$2.txt) wrong"
  grep -E "^scan" "$o/scan-$2.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo
  pack
}
for r in r8 ls r6 r10 r12 r16; do scan $r $r-1; done
timeout 150 python3 bench/torch_bench.py --kinds scan --min-log2 28 --max-log2 28 --reps 20 \
  --dtypes f32,i32,f64,i64 --csv "$o/torch-scan.csv" > "$o/torch-scan.txt" 2>&1
echo "torch scan rc=$? $(date +%T)"; grep -E "^scan" "$o/torch-scan.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo; pack
for r in r16 r12 r10 r6 ls r8; do scan $r $r-2; done
for r in ls r12; do
  timeout 100 $b/test_kern_scan-$r > "$o/test_kern_scan-$r.txt" 2>&1
  echo "test_kern_scan $r rc=$? $(date +%T)"; tail -n 2 "$o/test_kern_scan-$r.txt"
done
kill $smi; pack
