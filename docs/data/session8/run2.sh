#!/usr/bin/env bash
# Session 8, run 2: float min/max scans in key space (keys from the load on, one integer
# min/max per combination): single-pass and reduce-then-scan forced, f32 and f64, beside f32
# sum and i32 min; nocoal (the same, but reduce-then-scan's float min/max keep slot loads);
# registers; checked at 2^24; torch; then the daemon's latency rows with the clock log.
set -u
O=${1:?}; o=$O/r; mkdir -p $o; b=build-release; t0=$(date +%s)
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -lms 200 > $o/smi.csv 2>&1 &
smi=$!
VKR_PIPELINE_STATS=1 timeout 60 $b/bench/vkreduce-bench --reduce-only --ops sum --dtypes f32 --min-log2 10 --max-log2 10 --reps 1 > $o/stats.txt 2>&1
grep -E "pipeline scan_(chained|apply|reduce)(_bl)?_(f32|f64|i32)_(sum|max|min) " $o/stats.txt | sed 's/Binary Size.*Stack/Stack/' | head -24
run() { name=$1; shift; timeout 200 "$@" --csv $o/$name.csv > $o/$name.txt 2>&1
  echo "$name rc=$? $(( $(date +%s) - t0 ))s"; grep -E '^scan|copy kernel|WRONG' $o/$name.txt | tr -s ' ' | sed 's/^/  /'; }
run sp env VKR_SCAN=single-pass $b/bench/vkreduce-bench --scan-only --ops min,max,sum --dtypes f32,f64,i32 --min-log2 28 --max-log2 28 --reps 10 --times
run rts env VKR_SCAN=reduce-then-scan $b/bench/vkreduce-bench --scan-only --ops min,max --dtypes f32,f64 --min-log2 28 --max-log2 28 --reps 10 --times
run nocoal env VKR_SCAN=reduce-then-scan .exp/bins/nocoal --scan-only --ops min,max --dtypes f32,f64 --min-log2 28 --max-log2 28 --reps 10 --times
for m in single-pass reduce-then-scan; do
  VKR_SCAN=$m timeout 100 $b/bench/vkreduce-bench --scan-only --ops sum,prod,min,max --dtypes f32,f64,i32 --min-log2 24 --max-log2 24 --reps 3 > $o/check-$m.txt 2>&1
  echo "check $m rc=$? wrong=$(grep -c WRONG $o/check-$m.txt) rows=$(grep -c '^scan' $o/check-$m.txt) $(( $(date +%s) - t0 ))s"
done
timeout 100 python3 bench/torch_bench.py --min-log2 28 --max-log2 28 --dtypes f32,f64 --reps 10 --cummin-max-log2 10 --csv $o/torch.csv > $o/torch.txt 2>&1
echo "torch rc=$? $(( $(date +%s) - t0 ))s"; grep -E "scan|copy" $o/torch.txt | head -8
kill $smi
NO_TAR=1 timeout $(( 560 - ($(date +%s) - t0) )) bash bench/run-daemon-h200.sh $o/daemon 'latency:::--no-throughput' 'pipelined:::--no-latency --cork --clients 32' 2>&1 | tail -40
tar czf $O/run2.tgz -C $o . && rm -rf $o
