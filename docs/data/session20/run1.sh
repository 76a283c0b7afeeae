#!/usr/bin/env bash
# Session 20 run 1. w: HEAD's single-pass scan with each workgroup's tile taken from its
# workgroup id instead of an atomic counter (no round trip and barrier before the loads; the
# decoupled fallback covers workgroups scheduled out of order). r: HEAD with min and max of
# 64-bit types and f32 aggregating a chunked tile by lane folds and one subgroup scan before
# the rows' scans (session 19's probe r, for min and max only). wr: both. Scans of sum and max
# of f32, i32, f64, i64 and min and max of u32 and u64 at 2^28, two rounds interleaved; the
# single pass of f32 and f64 max (VKR_SCAN=single-pass; by default reduce-then-scan) of base,
# r and wr; torch's cumsum; the engine scan tests of wr on the H200. u32 and u64 in round 1 only.
# Run as `. .gpu/env.sh; bash docs/data/session20/run1.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
[ -f .exp/bins.txz ] && tar xJf .exp/bins.txz -C .exp
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 200 > "$o/smi.csv" 2>&1 &
smi=$!
scan() { # name round [env...]
  local v=$1 r=$2; shift 2
  env "$@" timeout 200 .exp/vkreduce-bench-$v --scan-only --ops sum,max --dtypes f32,i32,f64,i64 \
    --min-log2 28 --max-log2 28 --reps 20 --csv "$o/scan-$v-$r.csv" > "$o/scan-$v-$r.txt" 2>&1
  echo "scan $v round $r rc=$? $(date +%T) $(grep -c WRONG $o/scan-$v-$r.txt) wrong"
  grep -E "^scan" "$o/scan-$v-$r.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo
  [ "$r" = 1 ] || { pack; return; }
  env "$@" timeout 100 .exp/vkreduce-bench-$v --scan-only --ops min,max --dtypes u32,u64 \
    --min-log2 28 --max-log2 28 --reps 20 --csv "$o/scanu-$v-$r.csv" > "$o/scanu-$v-$r.txt" 2>&1
  echo "scanu $v round $r rc=$? $(grep -c WRONG $o/scanu-$v-$r.txt) wrong"
  grep -E "^scan" "$o/scanu-$v-$r.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo
  pack
}
for round in 1 2; do for v in base w r wr; do scan $v $round; done; done
for v in base r wr; do
  VKR_SCAN=single-pass timeout 100 .exp/vkreduce-bench-$v --scan-only --ops max --dtypes f32,f64 \
    --min-log2 28 --max-log2 28 --reps 20 --csv "$o/scan-$v-sp.csv" > "$o/scan-$v-sp.txt" 2>&1
  echo "scan $v single-pass max rc=$? $(grep -c WRONG $o/scan-$v-sp.txt) wrong"
  grep -E "^scan" "$o/scan-$v-sp.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo; pack
done
timeout 120 python3 bench/torch_bench.py --kinds scan --min-log2 28 --max-log2 28 --reps 20 \
  --dtypes f32,i32,f64,i64 --csv "$o/torch-scan.csv" > "$o/torch-scan.txt" 2>&1
echo "torch scan rc=$? $(date +%T)"; grep -E "^scan" "$o/torch-scan.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo; pack
for v in wr; do
  timeout 120 .exp/test_kern_scan-$v > "$o/test_kern_scan-$v.txt" 2>&1
  echo "test_kern_scan $v rc=$? $(date +%T)"; tail -n 2 "$o/test_kern_scan-$v.txt"; pack
done
kill $smi; pack
