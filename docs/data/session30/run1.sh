#!/usr/bin/env bash
# Session 30 run 1: float sums by integer limbs (reduce.comp's LIMB_SUM) against the build
# before (f17c446), in the same run: sums of f32, f64 and i64 (i64's tail unchanged: the
# control) from 2^14 to 2^26, old / new / old / new; new and old alone from 2^27 to 2^30 for
# f32 and f64 sums; torch's sums at the same sizes; the engine's reduction tests on the
# H200 (the limbs' ordering rests on the device's atomics: the tests check it there).
# Run as `. .gpu/env.sh; bash docs/data/session30/run1.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
for v in old new; do mkdir -p /tmp/s30$v; tar xJf .exp/s30$v.txz -C /tmp/s30$v; done
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > "$o/gpu.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 200 > "$o/smi.csv" 2>&1 &
smi=$!
timeout 100 /tmp/s30new/tests/test_kern_reduce > "$o/test_kern_reduce.txt" 2>&1
echo "test_kern_reduce rc=$? $(date +%T)"; grep -E "FAILED|PASSED|got" "$o/test_kern_reduce.txt" | head -5; pack
for k in 1 2; do
  for v in old new; do
    timeout 120 /tmp/s30$v/bench/vkreduce-bench --reduce-only --ops sum --dtypes f32,f64,i64 --min-log2 14 --max-log2 26 \
      --reps 20 --times --csv "$o/sum-$v-$k.csv" > "$o/sum-$v-$k.txt" 2>&1
    echo "sum $v-$k rc=$? $(date +%T) $(grep -c WRONG $o/sum-$v-$k.txt) wrong"; pack
  done
done
for v in new old; do
  timeout 120 /tmp/s30$v/bench/vkreduce-bench --reduce-only --ops sum --dtypes f32,f64 --min-log2 27 --max-log2 30 \
    --reps 20 --times --csv "$o/big-$v.csv" > "$o/big-$v.txt" 2>&1
  echo "big $v rc=$? $(date +%T) $(grep -c WRONG $o/big-$v.txt) wrong"; pack
done
timeout 150 python3 bench/torch_bench.py --kinds reduce --dtypes f32,f64,i64 --min-log2 14 --max-log2 30 --reps 20 \
  --csv "$o/torch.csv" > "$o/torch.txt" 2>&1
echo "torch rc=$? $(date +%T)"; pack
kill $smi; pack
