#!/usr/bin/env bash
# Session 27 run 3: the final build's (00f24df) scans as one binary, every op and dtype at
# 2^28, inclusive then exclusive (session 26 timed its scan modules only inside its probe
# binaries, and no exclusive scan with the look-back's shuffle fold), checked against the CPU
# at 2^28, beside torch's cumsum and cumprod in the same run.
# Run as `. .gpu/env.sh; bash docs/data/session27/run3.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
b=/tmp/s27b; mkdir -p $b; tar xJf .exp/s27b.txz -C $b
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 200 > "$o/smi.csv" 2>&1 &
smi=$!
for kind in incl excl; do
  extra=; [ $kind = excl ] && extra=--exclusive
  timeout 230 $b/bench/vkreduce-bench --scan-only $extra --ops sum,prod,min,max --dtypes f32,f64,i32,u32,i64,u64 \
    --min-log2 28 --max-log2 28 --reps 20 --times --csv "$o/scan-$kind.csv" > "$o/scan-$kind.txt" 2>&1
  echo "scan $kind rc=$? $(date +%T) $(grep -c WRONG $o/scan-$kind.txt) wrong"
  grep -E "^scan" "$o/scan-$kind.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo; pack
done
timeout 60 python3 bench/torch_bench.py --kinds scan --min-log2 28 --max-log2 28 --reps 20 \
  --dtypes f32,f64,i32,i64 --csv "$o/torch-scan.csv" > "$o/torch-scan.txt" 2>&1
echo "torch scan rc=$? $(date +%T)"; grep -E "^scan" "$o/torch-scan.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo
kill $smi; pack
