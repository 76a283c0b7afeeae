#!/usr/bin/env bash
# Session 34 run 4: min and max of floats with the NaN test once per invocation (1507583,
# .exp/s34probe.txz) against 0d75a9c (a test and a select per element, .exp/s34head.txz),
# f32, f64 and i32 (unchanged: a control) from 2^16 to 2^28, two rounds in alternating
# order, after test_kern_reduce of the new build on this device. Each build packed by hand:
#   meson compile -C build-release && tar cJf .exp/s34probe.txz -C build-release \
#     bench/vkreduce-bench tests/test_kern_reduce
# Run as `. .gpu/env.sh; bash docs/data/session34/run4.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
mkdir -p /tmp/head /tmp/probe
tar xJf .exp/s34head.txz -C /tmp/head; tar xJf .exp/s34probe.txz -C /tmp/probe
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > "$o/gpu.txt" 2>&1
timeout 100 /tmp/probe/tests/test_kern_reduce > "$o/test_kern_reduce.txt" 2>&1
echo "test_kern_reduce rc=$? $(date +%T)"; pack
bench() { # name build
  timeout 100 /tmp/$2/bench/vkreduce-bench --reduce-only --ops min,max --dtypes f32,f64,i32 \
    --min-log2 16 --max-log2 28 --reps 20 --csv "$o/$1.csv" > "$o/$1.txt" 2>&1
  echo "$1 rc=$? $(date +%T)"; pack
}
bench head-1 head; bench probe-1 probe; bench probe-2 probe; bench head-2 head
