#!/usr/bin/env bash
# Session 31 run 2: the posted atomic tails as built (535c450: each workgroup's one atomic on
# the result slot, decoded by the host) against c4f93e2 (the tails that await their atomic,
# count their arrival and let the last workgroup store the result), two rounds in alternating
# order, every reduction op and dtype from 2^16 to 2^25 (checked at 2^24), and in each round
# the f32 and f64 sums of 535c450 by limbs (VKR_REDUCE_FLOAT_SUM=limbs); then 535c450's
# test_kern_reduce, test_gpu and test_client_e2e (plain and with limbs) on this device, and
# torch's reductions from 2^16 to 2^25 in the same run.
# Run as `. .gpu/env.sh; bash docs/data/session31/run2.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
for v in base posted; do mkdir -p /tmp/$v; tar xJf .exp/s31$v.txz -C /tmp/$v; done
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > "$o/gpu.txt" 2>&1
for k in 1 2; do
  order="base posted"; [ $k = 2 ] && order="posted base"
  for v in $order; do
    timeout 240 /tmp/$v/bench/vkreduce-bench --reduce-only --ops sum,prod,min,max,count \
      --dtypes f32,f64,i32,u32,i64,u64 --min-log2 16 --max-log2 25 --reps 20 \
      --csv "$o/r-$v-$k.csv" > "$o/r-$v-$k.txt" 2>&1
    echo "$v-$k rc=$? $(date +%T)"
    pack
  done
  VKR_REDUCE_FLOAT_SUM=limbs timeout 120 /tmp/posted/bench/vkreduce-bench --reduce-only --ops sum \
    --dtypes f32,f64 --min-log2 16 --max-log2 25 --reps 20 \
    --csv "$o/r-limbs-$k.csv" > "$o/r-limbs-$k.txt" 2>&1
  echo "limbs-$k rc=$? $(date +%T)"
done
for t in kern_reduce gpu; do
  timeout 150 /tmp/posted/tests/test_$t > "$o/test_$t.txt" 2>&1; echo "test_$t rc=$?"
done
VKREDUCED=/tmp/posted/daemon/vkreduced timeout 120 /tmp/posted/tests/test_client_e2e > "$o/test_client_e2e.txt" 2>&1
echo "test_client_e2e rc=$?"
VKR_REDUCE_FLOAT_SUM=limbs VKREDUCED=/tmp/posted/daemon/vkreduced timeout 120 /tmp/posted/tests/test_client_e2e \
  > "$o/test_client_e2e_limbs.txt" 2>&1
echo "test_client_e2e limbs rc=$?"
pack
timeout 150 python3 bench/torch_bench.py --kinds reduce --min-log2 16 --max-log2 25 --reps 20 \
  --csv "$o/torch.csv" > "$o/torch.txt" 2>&1
echo "torch rc=$?"
pack
