#!/usr/bin/env bash
# Session 26 run 1: where the 64-bit scans' time goes, and the final build of session 25
# (34e2bc7, "g") re-measured on the H200, every op and dtype at 2^28, inclusive and
# exclusive, with torch's scans in the same run.
#   nolb:   g without the look-back (the output is wrong: each tile's own scan only), the
#           floor of today's tile pass;
#   sgtree: g with the look-back's fold of a block's tile aggregates by subgroup shuffles for
#           64-bit types too (32-bit types already): 9 barriers fewer per tile.
# Run as `. .gpu/env.sh; bash docs/data/session26/run1.sh $OUT` with .gpu/ and .exp/s26.txz
# carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
b=/tmp/s26; mkdir -p $b; tar xJf .exp/s26.txz -C $b
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 200 > "$o/smi.csv" 2>&1 &
smi=$!
for v in g sgtree; do
  VKR_PIPELINE_STATS=1 timeout 60 $b/vkreduce-bench-$v --scan-only --ops sum --dtypes f32 --min-log2 10 \
    --max-log2 10 --reps 1 2>&1 | grep scan_chained_ | sed 's/Binary.*Local/Local/' > "$o/stats-$v.txt"
done
scan() { # build name ops dtypes [extra]
  timeout 130 $b/vkreduce-bench-$1 --scan-only ${5:-} --ops $3 --dtypes $4 \
    --min-log2 28 --max-log2 28 --reps 20 --csv "$o/scan-$2.csv" > "$o/scan-$2.txt" 2>&1
  echo "scan $2 rc=$? $(date +%T) $(grep -c WRONG $o/scan-$2.txt) wrong"
  grep -E "^scan" "$o/scan-$2.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo
  pack
}
scan g g-64 sum,prod,min,max f64,i64,u64
scan nolb nolb-64 sum,prod,min,max i64,f64,u64
scan sgtree sgtree-64 sum,prod,min,max f64,i64,u64
scan g g-64b sum,prod,min,max i64,f64,u64
scan nolb nolb-32 sum,max f32,i32
scan g g-32 sum,prod,min,max f32,i32,u32
scan g g-excl sum,prod,min,max f32,i32,u32,f64,i64,u64 --exclusive
timeout 60 python3 bench/torch_bench.py --kinds scan --min-log2 28 --max-log2 28 --reps 20 \
  --dtypes f32,f64,i32,i64 --csv "$o/torch-scan.csv" > "$o/torch-scan.txt" 2>&1
echo "torch scan rc=$? $(date +%T)"; grep -E "^scan" "$o/torch-scan.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo; pack
for v in g sgtree; do
  timeout 90 $b/test_kern_scan-$v > "$o/test_kern_scan-$v.txt" 2>&1
  echo "test_kern_scan $v rc=$? $(date +%T)"; tail -n 1 "$o/test_kern_scan-$v.txt"
done
kill $smi; pack
