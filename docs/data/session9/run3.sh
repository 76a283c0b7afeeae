#!/usr/bin/env bash
# Session 9 run 3: float min/max single-pass compiled with the keys' integer type as T (probe).
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
args="--scan-only --dtypes f32,f64 --ops min,max --min-log2 28 --max-log2 28 --reps 10 --times"
p=.exp/bins/intkeys/vkreduce-bench; b=build-release/bench/vkreduce-bench
timeout 100 env VKR_SCAN=single-pass $p $args --csv "$o/probe.csv" > "$o/probe.txt" 2>&1; echo "probe rc=$?"
timeout 100 env VKR_SCAN=single-pass $b $args --csv "$o/head-sp.csv" > "$o/head-sp.txt" 2>&1; echo "head-sp rc=$?"
timeout 100 $b $args --csv "$o/head-default.csv" > "$o/head-default.txt" 2>&1; echo "head-default rc=$?"
timeout 100 env VKR_SCAN=single-pass $p $args --csv "$o/probe2.csv" > "$o/probe2.txt" 2>&1; echo "probe2 rc=$?"
timeout 100 env VKR_SCAN=single-pass $p --scan-only --dtypes f32,f64 --ops min,max --min-log2 24 --max-log2 24 --reps 3 > "$o/probe-check.txt" 2>&1
echo "probe check rc=$? wrong=$(grep -c WRONG "$o/probe-check.txt")"
for v in probe head-sp head-default probe2; do echo "== $v"; grep -E "^scan|copy kernel" "$o/$v.txt"; done
tar czf "$out/run.tgz" -C "$o" . && rm -rf "$o"
