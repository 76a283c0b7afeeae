#!/usr/bin/env bash
# Session 34 run 3: the 64-bit reductions at 2^26 to 2^28, where run 2 had them at 0.98 to
# 1.00x torch, in two rounds of alternating order beside torch: the default (1,056
# workgroups, one wave: SM count x 8) and two waves (VKR_REDUCE_WORKGROUPS=2112), f32 for
# scale. Run as `. .gpu/env.sh; bash docs/data/session34/run3.sh $OUT` with .gpu/ and .exp/
# carried (.exp/s34head.txz from make-exp.sh).
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
mkdir -p /tmp/head; tar xJf .exp/s34head.txz -C /tmp/head
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > "$o/gpu.txt" 2>&1
bench() { # name [env...]
  local name=$1; shift
  env "$@" timeout 100 /tmp/head/bench/vkreduce-bench --reduce-only --dtypes f32,f64,i64 \
    --min-log2 26 --max-log2 28 --reps 20 --csv "$o/$name.csv" > "$o/$name.txt" 2>&1
  echo "$name rc=$? $(date +%T)"; pack
}
torch() { # name
  timeout 60 python3 bench/torch_bench.py --kinds reduce --dtypes f32,f64,i64 --min-log2 26 \
    --max-log2 28 --reps 20 --csv "$o/$1.csv" > "$o/$1.txt" 2>&1
  echo "$1 rc=$? $(date +%T)"; pack
}
bench one-wave-1; bench two-waves-1 VKR_REDUCE_WORKGROUPS=2112; torch torch-1
torch torch-2; bench two-waves-2 VKR_REDUCE_WORKGROUPS=2112; bench one-wave-2
