#!/usr/bin/env bash
# Session 8, run 1: the default choice for every scan op and dtype at 2^28 (torch beside
# it); single-pass forced where the default is reduce-then-scan (64-bit types, f32 min/max),
# now that the held tile has no fix pass; a 16-row held tile (-Dscan_chunk_rows=16) for the
# 32-bit sums and prods and f64 sum; every single-pass kernel checked at 2^24; SM clock log.
set -u
O=${1:?}; o=$O/r; mkdir -p $o; b=build-release; t0=$(date +%s)
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -lms 200 > $o/smi.csv 2>&1 &
smi=$!
run() { name=$1; shift; timeout 240 "$@" --csv $o/$name.csv > $o/$name.txt 2>&1
  echo "$name rc=$? $(( $(date +%s) - t0 ))s"; grep -E '^scan|copy kernel|WRONG' $o/$name.txt | tr -s ' ' | sed 's/^/  /'; }
run sp64 env VKR_SCAN=single-pass $b/bench/vkreduce-bench --scan-only --ops sum,prod,min,max --dtypes f64,i64,u64 --min-log2 28 --max-log2 28 --reps 10 --times
run spf32mm env VKR_SCAN=single-pass $b/bench/vkreduce-bench --scan-only --ops min,max --dtypes f32 --min-log2 28 --max-log2 28 --reps 10 --times
run r16 env VKR_SCAN=single-pass .exp/bins/r16 --scan-only --ops sum,prod --dtypes f32,i32,f64 --min-log2 28 --max-log2 28 --reps 10 --times
run default $b/bench/vkreduce-bench --scan-only --ops sum,prod,min,max --dtypes f32,f64,i32,u32,i64,u64 --min-log2 28 --max-log2 28 --reps 10 --times
VKR_SCAN=single-pass timeout 120 $b/bench/vkreduce-bench --scan-only --ops sum,prod,min,max --dtypes f32,f64,i32,u32,i64,u64 --min-log2 24 --max-log2 24 --reps 3 > $o/check.txt 2>&1
echo "check rc=$? wrong=$(grep -c WRONG $o/check.txt) rows=$(grep -c '^scan' $o/check.txt) $(( $(date +%s) - t0 ))s"
VKR_SCAN=single-pass timeout 60 .exp/bins/r16 --scan-only --ops sum,prod,min,max --dtypes f32,f64,i32 --min-log2 24 --max-log2 24 --reps 3 > $o/check-r16.txt 2>&1
echo "check-r16 rc=$? wrong=$(grep -c WRONG $o/check-r16.txt) rows=$(grep -c '^scan' $o/check-r16.txt)"
timeout 120 python3 bench/torch_bench.py --min-log2 28 --max-log2 28 --dtypes f32,f64,i32,i64 --reps 10 --cummin-max-log2 10 --csv $o/torch.csv > $o/torch.txt 2>&1
echo "torch rc=$? $(( $(date +%s) - t0 ))s"; grep -E "scan|copy" $o/torch.txt | head -20
kill $smi
tar czf $O/run1.tgz -C $o . && rm -rf $o
