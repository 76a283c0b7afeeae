#!/usr/bin/env bash
# Session 32 run 1: the posted atomic tails as built (session 31, on by default) against
# c4f93e2 (tails that await their atomic, count arrivals, and let the last workgroup store
# the result), every reduction op and dtype from 2^16 to 2^25 (checked at 2^24); in each round
# the opt-in tails of the new build for sums and products: "optin" = float sums by limbs,
# integer products by exponents, float products folded by the host (VKR_REDUCE_FLOAT_SUM=limbs
# VKR_REDUCE_INT_PROD=exponents VKR_REDUCE_FOLD=host) and "fold" = every sum and product
# without an atomic tail folded by the host (VKR_REDUCE_FOLD=host). Then the engine tests and
# the end-to-end suite on this device (plain, and with every opt-in tail: the host's fold
# must give the GPU's bits here, subgroup 32), torch's reductions, and a second round in the
# other order. Stages are packed as they end, so a cut-off run still brings back what it has.
# Run as `. .gpu/env.sh; bash docs/data/session32/run1.sh $OUT` with .gpu/ and .exp/ carried.
# .exp/ is not in git; docs/data/session32/make-exp.sh makes it on the development machine,
# or by hand, for each build B (base: c4f93e2,
# as .exp/s31base.txz; new: e131f3a or any later commit with the same daemon/ and shaders/):
#   git worktree add /tmp/B B && (cd /tmp/B && meson setup b --buildtype=release && meson compile -C b)
#   tar cJf .exp/sB.txz -C /tmp/B/b bench/vkreduce-bench tests/test_kern_reduce tests/test_gpu \
#     tests/test_client_e2e client/vkreduce daemon/vkreduced client/libvkreduce.so \
#     client/libvkreduce.so.0 client/libvkreduce.so.0.1.0 bench/vkreduce-shm-bench
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
mkdir -p /tmp/base /tmp/new
tar xJf .exp/s31base.txz -C /tmp/base; tar xJf .exp/s32new.txz -C /tmp/new
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > "$o/gpu.txt" 2>&1
bench() { # name binary-dir ops dtypes [env...]
  local name=$1 dir=$2 ops=$3 dtypes=$4; shift 4
  env "$@" timeout 200 /tmp/$dir/bench/vkreduce-bench --reduce-only --ops $ops --dtypes $dtypes \
    --min-log2 16 --max-log2 25 --reps 20 --csv "$o/$name.csv" > "$o/$name.txt" 2>&1
  echo "$name rc=$? $(date +%T)"; pack
}
round() { # k order...
  local k=$1; shift
  for v in "$@"; do bench r-$v-$k $v sum,prod,min,max,count f32,f64,i32,u32,i64,u64; done
  bench r-optin-$k new sum,prod f32,f64,i32,u32,i64,u64 VKR_REDUCE_FLOAT_SUM=limbs \
    VKR_REDUCE_INT_PROD=exponents VKR_REDUCE_FOLD=host
  bench r-fold-$k new sum,prod f32,f64,i32,i64 VKR_REDUCE_FOLD=host
}
round 1 base new
for t in kern_reduce gpu; do
  timeout 100 /tmp/new/tests/test_$t > "$o/test_$t.txt" 2>&1; echo "test_$t rc=$?"
done
VKR_REDUCE_FOLD=host timeout 100 /tmp/new/tests/test_kern_reduce > "$o/test_kern_reduce_fold.txt" 2>&1
echo "test_kern_reduce VKR_REDUCE_FOLD=host rc=$?"
VKREDUCED=/tmp/new/daemon/vkreduced timeout 100 /tmp/new/tests/test_client_e2e > "$o/test_client_e2e.txt" 2>&1
echo "test_client_e2e rc=$?"
VKR_REDUCE_FLOAT_SUM=limbs VKR_REDUCE_INT_PROD=exponents VKR_REDUCE_FOLD=host VKREDUCED=/tmp/new/daemon/vkreduced \
  timeout 100 /tmp/new/tests/test_client_e2e > "$o/test_client_e2e_optin.txt" 2>&1
echo "test_client_e2e opt-in tails rc=$?"
pack
timeout 120 python3 bench/torch_bench.py --kinds reduce --min-log2 16 --max-log2 25 --reps 20 \
  --csv "$o/torch.csv" > "$o/torch.txt" 2>&1
echo "torch rc=$? $(date +%T)"; pack
round 2 new base
