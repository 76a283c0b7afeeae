#!/usr/bin/env bash
# Session 9 run 2: registers per scan pipeline; chunk rows 4/8/16 with the packed 64-bit look-back.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw --format=csv -lms 200 > "$o/smi.csv" 2>&1 &
smi=$!
timeout 60 env VKR_PIPELINE_STATS=1 VKR_SCAN=single-pass build-release/bench/vkreduce-bench --scan-only --dtypes f32,i32,f64,i64 --ops sum,max --min-log2 20 --max-log2 20 --reps 1 > "$o/stats.txt" 2>&1; echo "stats rc=$?"
args="--scan-only --dtypes f32,f64,i64 --ops sum,max --min-log2 28 --max-log2 28 --reps 10 --times"
for v in r8 r4 r16 r8b; do
  b=build-release/bench/vkreduce-bench
  case $v in r4|r16) b=.exp/bins/$v/vkreduce-bench;; esac
  timeout 100 env VKR_SCAN=single-pass $b $args --csv "$o/$v.csv" > "$o/$v.txt" 2>&1; echo "$v rc=$?"
done
kill $smi
grep -i -E "regist|scan_chained|pipeline" "$o/stats.txt" | head -60
for v in r8 r4 r16 r8b; do echo "== $v"; grep -E "^scan|copy kernel" "$o/$v.txt"; done
tar czf "$out/run.tgz" -C "$o" . && rm -rf "$o"
