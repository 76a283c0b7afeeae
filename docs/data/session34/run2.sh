#!/usr/bin/env bash
# Session 34 run 2: the build with partials folded by the host by default (.exp/s34head.txz,
# made by make-exp.sh beside this script), every reduction op and dtype from 2^16 to 2^28
# beside torch's in the same run (the lead table's rows), after the engine tests on this
# device; then the GPU's fold (VKR_REDUCE_FOLD=device) and the default again, from 2^22 to
# 2^26, for the sums and products the default changed. Stages are packed as they end.
# Run as `. .gpu/env.sh; bash docs/data/session34/run2.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
mkdir -p /tmp/head; tar xJf .exp/s34head.txz -C /tmp/head
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > "$o/gpu.txt" 2>&1
for t in gpu kern_reduce; do
  timeout 100 /tmp/head/tests/test_$t > "$o/test_$t.txt" 2>&1; echo "test_$t rc=$? $(date +%T)"
done
pack
timeout 300 /tmp/head/bench/vkreduce-bench --reduce-only --min-log2 16 --max-log2 28 --reps 20 \
  --csv "$o/reduce.csv" > "$o/reduce.txt" 2>&1
echo "reduce rc=$? $(date +%T)"; pack
timeout 240 python3 bench/torch_bench.py --kinds reduce --min-log2 16 --max-log2 28 --reps 20 \
  --csv "$o/torch.csv" > "$o/torch.txt" 2>&1
echo "torch rc=$? $(date +%T)"; pack
for v in device host; do
  VKR_REDUCE_FOLD=$v timeout 100 /tmp/head/bench/vkreduce-bench --reduce-only --ops sum,prod \
    --dtypes f32,f64,i32,i64 --min-log2 22 --max-log2 26 --reps 20 --csv "$o/fold-$v.csv" > "$o/fold-$v.txt" 2>&1
  echo "fold $v rc=$? $(date +%T)"; pack
done
