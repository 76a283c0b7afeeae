#!/usr/bin/env bash
# Session 13 run 1: the look-back's first round read early (P), the previous block's aggregate
# folded by early tiles of a block (E), both (EP), both for every tile (EAP), against 78391bd
# (old): registers, and 2^28 scans (sum, max of f32, i32, f64), two rounds interleaved; torch's
# scans; reductions beside the read kernel from 2^20 to 2^28.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
date +%T
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > "$o/gpu.txt" 2>&1
for v in old E P EP EAP; do
  b=.exp/vkreduce-bench-$v; [ $v = old ] && b=.exp/old/vkreduce-bench
  VKR_COMPILE_ON_FIRST_USE=1 VKR_PIPELINE_STATS=1 timeout 60 $b --scan-only --ops sum --dtypes f32,i32,f64 \
    --min-log2 20 --max-log2 20 --reps 3 > "$o/stats-$v.txt" 2>&1
  echo "$v: $(grep scan_chained "$o/stats-$v.txt" | sed -n 's/.*pipeline \([a-z_0-9]*\) \[CS\]: Register Count=\([0-9]*\);.*Local Memory Size=\([0-9]*\);.*/\1 regs=\2 local=\3/p' | tr '\n' ' ')"
done
date +%T
for round in 1 2; do
  for v in old E P EP EAP; do
    b=.exp/vkreduce-bench-$v; [ $v = old ] && b=.exp/old/vkreduce-bench
    timeout 100 $b --scan-only --ops sum,max --dtypes f32,i32,f64 --min-log2 28 --max-log2 28 --reps 10 \
      --csv "$o/scan-$v-$round.csv" > "$o/scan-$v-$round.txt" 2>&1
    echo "scan $v $round rc=$? wrong=$(grep -c WRONG "$o/scan-$v-$round.txt") $(date +%T)"; pack
  done
done
timeout 120 python3 bench/torch_bench.py --kinds scan --dtypes f32,i32,f64 --min-log2 28 --max-log2 28 --reps 20 \
  --csv "$o/torch-scan.csv" > "$o/torch-scan.txt" 2>&1; echo "torch rc=$? $(date +%T)"; pack
timeout 200 .exp/vkreduce-bench-EP --reduce-only --ops sum,max --dtypes f32,i32,f64 --min-log2 20 --max-log2 28 \
  --reps 20 --csv "$o/reduce-read.csv" > "$o/reduce-read.txt" 2>&1; echo "reduce rc=$? $(date +%T)"; pack
for round in 1 2; do for v in old E P EP EAP; do echo "== scan $v $round"; grep -E "^scan" "$o/scan-$v-$round.txt"; done; done
cat "$o/torch-scan.txt" | tail -12
grep -E "^reduce" "$o/reduce-read.txt"
