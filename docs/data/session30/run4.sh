#!/usr/bin/env bash
# Session 30 run 4: run 2 again with the limb tail in the last workgroup's first subgroup,
# no barrier, the limbs summed in double-double (new, run 4): the engine's reduction
# tests on the H200; sums of f32, f64 and i64 from 2^14 to 2^26, old / new / old / new (the
# first old and new with VKR_PIPELINE_STATS=1: the driver's registers of each pipeline);
# new from 2^27 to 2^29 for f32 and f64 sums.
# Run as `. .gpu/env.sh; bash docs/data/session30/run4.sh $OUT` with .gpu/ and .exp/ carried.
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
    stats=$([ $k = 1 ] && echo 1 || echo 0)
    VKR_PIPELINE_STATS=$stats timeout 120 /tmp/s30$v/bench/vkreduce-bench --reduce-only --ops sum --dtypes f32,f64,i64 \
      --min-log2 14 --max-log2 26 --reps 20 --times --csv "$o/sum-$v-$k.csv" > "$o/sum-$v-$k.txt" 2>&1
    echo "sum $v-$k rc=$? $(date +%T) $(grep -c WRONG $o/sum-$v-$k.txt) wrong"; pack
  done
done
grep -iE "sum" "$o/sum-old-1.txt" "$o/sum-new-1.txt" | grep -iE "regist|stat" | head -20
timeout 100 /tmp/s30new/bench/vkreduce-bench --reduce-only --ops sum --dtypes f32,f64 --min-log2 27 --max-log2 29 \
  --reps 20 --times --csv "$o/big-new.csv" > "$o/big-new.txt" 2>&1
echo "big new rc=$? $(date +%T) $(grep -c WRONG $o/big-new.txt) wrong"; pack
kill $smi; pack
