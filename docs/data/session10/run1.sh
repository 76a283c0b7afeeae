#!/usr/bin/env bash
# Session 10 run 1: reductions of the 32-bit dtypes from 2^24 to 2^30 (2^30 held in two 2 GiB
# buffers), then torch's reductions of every dtype at the same sizes, same run.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw --format=csv -lms 500 > "$o/smi.csv" 2>&1 &
smi=$!
for d in f32 i32 u32; do
  timeout 110 build-release/bench/vkreduce-bench --reduce-only --dtypes $d --min-log2 24 --max-log2 30 --reps 10 \
    --csv "$o/vkr-$d.csv" > "$o/vkr-$d.txt" 2>&1; echo "vkr $d rc=$? wrong=$(grep -c WRONG "$o/vkr-$d.txt")"
  pack
done
timeout 200 python3 bench/torch_bench.py --kinds reduce --min-log2 24 --max-log2 30 --reps 10 \
  --csv "$o/torch.csv" > "$o/torch.txt" 2>&1; echo "torch rc=$?"
kill $smi
pack
grep -h "copy kernel\|^reduce.*2^30\|skipped" "$o"/vkr-*.txt; grep "2^30\|copy" "$o/torch.txt"
