#!/usr/bin/env bash
# Session 8, run 3: registers of the single-pass kernels (committed key-space build, and the
# cheap probe: NaN keys moved by one compare at the load, no NaN test at the store; f64 keys
# as int64); float min/max scans of both at 2^28 both ways; the probe checked at 2^24; then
# torch's x.sum().item() loop and the daemon's synchronous latency, with the GPU warm and
# after 3 s idle, beside the SM clock.
set -u
O=${1:?}; o=$O/r; mkdir -p $o; b=build-release; t0=$(date +%s)
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -lms 100 > $o/smi.csv 2>&1 &
smi=$!
for v in key cheap; do
  bin=$b/bench/vkreduce-bench; [ $v = cheap ] && bin=.exp/bins/cheap
  VKR_SCAN=single-pass VKR_PIPELINE_STATS=1 timeout 60 $bin --reduce-only --ops sum --dtypes f32 --min-log2 10 --max-log2 10 --reps 1 > $o/stats-$v.txt 2>&1
  echo "$v: $(grep -E "pipeline scan_chained_(f32|f64|i64)_(sum|max|min) " $o/stats-$v.txt | sed 's/Binary Size.*Stack Size=0; //; s/Shared.*//; s/pipeline scan_chained_//' | tr '\n' '|')"
done
run() { name=$1; shift; timeout 150 "$@" --csv $o/$name.csv > $o/$name.txt 2>&1
  echo "$name rc=$? $(( $(date +%s) - t0 ))s"; grep -E '^scan|copy kernel|WRONG' $o/$name.txt | tr -s ' ' | sed 's/^/  /'; }
for v in key cheap; do
  bin=$b/bench/vkreduce-bench; [ $v = cheap ] && bin=.exp/bins/cheap
  run $v-sp env VKR_SCAN=single-pass $bin --scan-only --ops min,max --dtypes f32,f64 --min-log2 28 --max-log2 28 --reps 10 --times
  run $v-rts env VKR_SCAN=reduce-then-scan $bin --scan-only --ops min,max --dtypes f32,f64 --min-log2 28 --max-log2 28 --reps 10 --times
done
for m in single-pass reduce-then-scan; do
  VKR_SCAN=$m timeout 60 .exp/bins/cheap --scan-only --ops sum,prod,min,max --dtypes f32,f64 --min-log2 24 --max-log2 24 --reps 3 > $o/check-$m.txt 2>&1
  echo "check cheap $m rc=$? wrong=$(grep -c WRONG $o/check-$m.txt) rows=$(grep -c '^scan' $o/check-$m.txt) $(( $(date +%s) - t0 ))s"
done
timeout 60 python3 bench/torch_bench.py --min-log2 10 --max-log2 10 --dtypes f32 --reps 10 --latency > $o/torch-lat.txt 2>&1
echo "torch rc=$? $(date '+%H:%M:%S.%N' | cut -c1-12)"; grep -E "item" $o/torch-lat.txt
kill $smi
NO_TAR=1 timeout 150 bash bench/run-daemon-h200.sh $o/daemon 'warm:::--no-throughput' 2>&1 | grep -E "^\| [0-9]|==|ended"
sleep 3
NO_TAR=1 timeout 100 bash bench/run-daemon-h200.sh $o/daemon2 'idle:::--no-throughput' 2>&1 | grep -E "^\| [0-9]|==|ended"
timeout 60 python3 bench/torch_bench.py --min-log2 10 --max-log2 10 --dtypes f32 --reps 10 --latency > $o/torch-lat2.txt 2>&1
echo "torch2 rc=$? $(date '+%H:%M:%S.%N' | cut -c1-12)"; grep -E "item" $o/torch-lat2.txt
tar czf $O/run3.tgz -C $o . && rm -rf $o
