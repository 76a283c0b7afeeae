#!/usr/bin/env bash
# Session 31 run 2: the posted atomic tails as built (posted: each workgroup's one atomic on
# the result slot, decoded by the host) against c4f93e2 (the tails that await their atomic,
# count their arrival and let the last workgroup store the result), two rounds in alternating
# order, every reduction op and dtype from 2^16 to 2^25 (checked at 2^24), and in each round
# the posted build's f32 and f64 sums by limbs (VKR_REDUCE_FLOAT_SUM=limbs) and integer
# products by exponents (VKR_REDUCE_INT_PROD=exponents), with the float products as the
# control; then its test_kern_reduce, test_gpu and test_client_e2e (plain and with both) on
# this device, and torch's reductions from 2^16 to 2^25 in the same run.
# Run as `. .gpu/env.sh; bash docs/data/session31/run2.sh $OUT` with .gpu/ and .exp/ carried.
# .exp/ is not in git; make it on the development machine, for each build B (base: c4f93e2;
# posted: 4c3540c or any later commit whose reduce.comp and kern.c are the same):
#   git worktree add /tmp/B B && (cd /tmp/B && meson setup b --buildtype=release && meson compile -C b)
#   tar cJf .exp/s31B.txz -C /tmp/B/b bench/vkreduce-bench tests/test_kern_reduce tests/test_gpu \
#     tests/test_client_e2e client/vkreduce daemon/vkreduced client/libvkreduce.so \
#     client/libvkreduce.so.0 client/libvkreduce.so.0.1.0
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
  VKR_REDUCE_FLOAT_SUM=limbs VKR_REDUCE_INT_PROD=exponents timeout 180 /tmp/posted/bench/vkreduce-bench \
    --reduce-only --ops sum,prod --dtypes f32,f64,i32,u32,i64,u64 --min-log2 16 --max-log2 25 --reps 20 \
    --csv "$o/r-atomics-$k.csv" > "$o/r-atomics-$k.txt" 2>&1
  echo "atomics-$k rc=$? $(date +%T)"
done
for t in kern_reduce gpu; do
  timeout 150 /tmp/posted/tests/test_$t > "$o/test_$t.txt" 2>&1; echo "test_$t rc=$?"
done
VKREDUCED=/tmp/posted/daemon/vkreduced timeout 120 /tmp/posted/tests/test_client_e2e > "$o/test_client_e2e.txt" 2>&1
echo "test_client_e2e rc=$?"
VKR_REDUCE_FLOAT_SUM=limbs VKR_REDUCE_INT_PROD=exponents VKREDUCED=/tmp/posted/daemon/vkreduced timeout 120 \
  /tmp/posted/tests/test_client_e2e > "$o/test_client_e2e_atomics.txt" 2>&1
echo "test_client_e2e limbs and exponents rc=$?"
pack
timeout 150 python3 bench/torch_bench.py --kinds reduce --min-log2 16 --max-log2 25 --reps 20 \
  --csv "$o/torch.csv" > "$o/torch.txt" 2>&1
echo "torch rc=$?"
pack
