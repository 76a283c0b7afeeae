#!/usr/bin/env bash
# Session 32 run 2: run 1 cut down to the device time left after the refused starts (under
# five minutes): test_kern_reduce with VKR_REDUCE_FOLD=host first (the host's fold must give
# the GPU's bits with subgroups of 32), then base (c4f93e2) against new (e131f3a) for every
# op of f32, f64, i32 and i64 at 2^22 to 2^25, then the opt-in tails of new (run1.sh says
# what "optin" and "fold" are), then the same again in the other order. Stages are packed as
# they end. Run as `. .gpu/env.sh; bash docs/data/session32/run2.sh $OUT` with .gpu/ and .exp/
# carried (.exp/ as run1.sh's header makes it).
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
mkdir -p /tmp/base /tmp/new
tar xJf .exp/s31base.txz -C /tmp/base; tar xJf .exp/s32new.txz -C /tmp/new
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > "$o/gpu.txt" 2>&1
VKR_REDUCE_FOLD=host timeout 60 /tmp/new/tests/test_kern_reduce > "$o/test_kern_reduce_fold.txt" 2>&1
echo "test_kern_reduce VKR_REDUCE_FOLD=host rc=$? $(date +%T)"; pack
bench() { # name binary-dir ops dtypes [env...]
  local name=$1 dir=$2 ops=$3 dtypes=$4; shift 4
  env "$@" timeout 100 /tmp/$dir/bench/vkreduce-bench --reduce-only --ops $ops --dtypes $dtypes \
    --min-log2 22 --max-log2 25 --reps 20 --csv "$o/$name.csv" > "$o/$name.txt" 2>&1
  echo "$name rc=$? $(date +%T)"; pack
}
round() { # k order...
  local k=$1; shift
  for v in "$@"; do bench r-$v-$k $v sum,prod,min,max,count f32,f64,i32,i64; done
  bench r-optin-$k new sum,prod f32,f64,i32,i64 VKR_REDUCE_FLOAT_SUM=limbs \
    VKR_REDUCE_INT_PROD=exponents VKR_REDUCE_FOLD=host
  bench r-fold-$k new sum,prod f32,f64,i32,i64 VKR_REDUCE_FOLD=host
}
round 1 base new
round 2 new base
