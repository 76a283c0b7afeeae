#!/usr/bin/env bash
# Session 23 run 2: every scan op and dtype at 2^28 for r8 (8716055), r10 and r12 (the same
# source with 10 and 12 rows per invocation, tiles of 40 and 48 KiB) and ls
# (probe-ls.patch on 8716055), one round (r8, r10, r12, ls); the driver's registers for every
# build's chained pipelines; torch's scans of every dtype.
# Run as `. .gpu/env.sh; bash docs/data/session23/run2.sh $OUT` with .gpu/ and .exp/s23.txz
# carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
b=/tmp/s23; mkdir -p $b; tar xJf .exp/s23.txz -C $b
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 200 > "$o/smi.csv" 2>&1 &
smi=$!
scan() { # build name
  timeout 250 $b/vkreduce-bench-$1 --scan-only --ops sum,prod,min,max --dtypes f32,f64,i32,u32,i64,u64 \
    --min-log2 28 --max-log2 28 --reps 20 --csv "$o/scan-$2.csv" > "$o/scan-$2.txt" 2>&1
  echo "scan $2 rc=$? $(date +%T) $(grep -c WRONG $o/scan-$2.txt) wrong"
  grep -E "^scan" "$o/scan-$2.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo
  pack
}
for r in r8 r10 r12 ls; do scan $r $r; done
timeout 150 python3 bench/torch_bench.py --kinds scan --min-log2 28 --max-log2 28 --reps 20 \
  --dtypes f32,f64,i32,u32,i64,u64 --csv "$o/torch-scan.csv" > "$o/torch-scan.txt" 2>&1
echo "torch scan rc=$? $(date +%T)"; grep -E "^scan" "$o/torch-scan.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo; pack
for r in r8 r10 r12 ls; do
  VKR_PIPELINE_STATS=1 timeout 100 $b/vkreduce-bench-$r --scan-only --ops sum --dtypes f32 \
    --min-log2 10 --max-log2 10 --reps 1 > "$o/stats-$r.txt" 2>&1
done
kill $smi; pack
