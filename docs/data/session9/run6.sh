#!/usr/bin/env bash
# Session 9 run 6: every reduction op and dtype from 2^24 to 2^30 beside torch, same run.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw --format=csv -lms 500 > "$o/smi.csv" 2>&1 &
smi=$!
for d in f32 f64 i32 u32 i64 u64; do
  timeout 100 build-release/bench/vkreduce-bench --reduce-only --dtypes $d --min-log2 24 --max-log2 30 --reps 10 \
    --csv "$o/vkr-$d.csv" > "$o/vkr-$d.txt" 2>&1; echo "vkr $d rc=$? wrong=$(grep -c WRONG "$o/vkr-$d.txt")"
  pack
done
timeout 150 python3 bench/torch_bench.py --kinds reduce --min-log2 24 --max-log2 30 --reps 10 \
  --csv "$o/torch.csv" > "$o/torch.txt" 2>&1; echo "torch rc=$?"
kill $smi
pack
grep -h "copy kernel\|^reduce.*2^30" "$o"/vkr-*.txt; grep "2^30\|copy" "$o/torch.txt"
