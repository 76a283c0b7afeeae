#!/usr/bin/env bash
# Session 15 run 1. Builds (build-release's bench/vkreduce-bench, `meson setup build-release
# --buildtype=release`): I = 5822101 (before whole subgroups), J = f73cc14 (session 14's
# last: pipelines with REQUIRE_FULL_SUBGROUPS, unmeasured), K = J + one-dispatch reductions
# with flagged partials in the command buffer's table and no fences (reduce.comp pass 4);
# K with VKR_REDUCE=fenced runs pass 3 as J does. First K's reduction tests on the H200 (real
# concurrency: the flagged words' race cannot happen on lavapipe), then reductions 2^16 to
# 2^25 two rounds interleaved, then 2^28 scans for I and J (whole subgroups in the scans).
# Run as `. .gpu/env.sh; bash docs/data/session15/run1.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > "$o/gpu.txt" 2>&1
for t in 1 2; do
  VKR_COMPILE_ON_FIRST_USE=1 timeout 150 .exp/test_kern_reduce-K > "$o/test_kern_reduce-$t.txt" 2>&1
  echo "test_kern_reduce K $t rc=$? $(grep -E 'PASSED|FAILED' "$o/test_kern_reduce-$t.txt" | tr '\n' ' ')"
done
pack
run() { # name env binary args...
  local name=$1 envv=$2 bin=$3; shift 3
  env $envv timeout 100 .exp/vkreduce-bench-$bin "$@" --csv "$o/$name.csv" > "$o/$name.txt" 2>&1
  echo "$name rc=$? $(date +%T) $(grep -c WRONG $o/$name.txt) wrong; $(grep -o 'reduce partials: [a-z ]*' $o/$name.txt)"
}
R="--reduce-only --ops sum,max,count --dtypes f32,f64,i32 --min-log2 16 --max-log2 25 --reps 20"
for round in 1 2; do
  run r-J-$round X=1 J $R
  run r-K-$round X=1 K $R
  run r-Kf-$round VKR_REDUCE=fenced K $R
  run r-I-$round X=1 I $R
  pack
done
S="--scan-only --ops sum,max --dtypes f32,i32,f64 --min-log2 28 --max-log2 28 --reps 20"
for round in 1 2; do
  run s-I-$round X=1 I $S
  run s-J-$round X=1 J $S
  pack
done
for f in r-J-1 r-K-1 r-Kf-1 r-I-1 r-J-2 r-K-2 r-Kf-2 r-I-2; do
  echo "== $f"; grep -E "^reduce" "$o/$f.txt" | awk '$4 == "2^16" || $4 == "2^20" || $4 == "2^24" || $4 == "2^25" {print $2, $3, $4, $5, $NF}' | tr '\n' ';'; echo
done
for f in s-I-1 s-J-1 s-I-2 s-J-2; do echo "== $f"; grep -E "^scan" "$o/$f.txt" | awk '{print $2, $3, $4, $5}' | tr '\n' ';'; echo; done
