#!/usr/bin/env bash
# Session 12 run 3: the session's build (shuffle-tree look-back, one-wave reductions) against
# 17a0763: every scan op and dtype at 2^28, old new old(64-bit) new(64-bit); torch's scans;
# every reduction op and dtype from 2^10 to 2^28 by the session's build, then torch's.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -lms 500 > "$o/smi.csv" 2>&1 &
smi=$!
new=build-release/bench/vkreduce-bench; old=.exp/old/vkreduce-bench
VKR_COMPILE_ON_FIRST_USE=1 VKR_PIPELINE_STATS=1 timeout 60 $new --ops sum,max,count --dtypes f32,f64,i64 \
  --min-log2 20 --max-log2 20 --reps 3 > "$o/stats-new.txt" 2>&1; echo "stats rc=$?"
for v in old new; do
  timeout 150 ${!v} --scan-only --ops sum,prod,min,max --dtypes f32,f64,i32,u32,i64,u64 --min-log2 28 --max-log2 28 --reps 10 \
    --csv "$o/scan-$v-1.csv" > "$o/scan-$v-1.txt" 2>&1
  echo "scan $v 1 rc=$? wrong=$(grep -c WRONG "$o/scan-$v-1.txt")"; pack
done
for v in old new; do
  timeout 100 ${!v} --scan-only --ops sum,prod,min,max --dtypes f64,i64 --min-log2 28 --max-log2 28 --reps 10 \
    --csv "$o/scan-$v-2.csv" > "$o/scan-$v-2.txt" 2>&1
  echo "scan $v 2 rc=$? wrong=$(grep -c WRONG "$o/scan-$v-2.txt")"; pack
done
timeout 100 python3 bench/torch_bench.py --kinds scan --min-log2 28 --max-log2 28 --dtypes f32,f64,i32,i64 --reps 10 \
  --cummin-max-log2 10 --csv "$o/torch-scan.csv" > "$o/torch-scan.txt" 2>&1; echo "torch scan rc=$?"; pack
timeout 200 $new --reduce-only --min-log2 10 --max-log2 28 --reps 10 --csv "$o/reduce-new.csv" > "$o/reduce-new.txt" 2>&1
echo "reduce new rc=$? wrong=$(grep -c WRONG "$o/reduce-new.txt")"; pack
timeout 120 python3 bench/torch_bench.py --kinds reduce --min-log2 10 --max-log2 28 --reps 10 \
  --csv "$o/torch-reduce.csv" > "$o/torch-reduce.txt" 2>&1; echo "torch reduce rc=$?"
kill $smi; pack
grep -h 'Register' "$o/stats-new.txt" | grep -o 'pipeline [a-z_0-9]* \[[^]]*\]\|Register[^;]*;' | paste - - | head -12
for v in old new; do for r in 1 2; do echo "== scan $v $r"; grep -E "^scan" "$o/scan-$v-$r.txt"; done; done
grep scan "$o/torch-scan.txt"
grep -E "^reduce.*2\^2[4-8]|copy kernel" "$o/reduce-new.txt" | head -80
