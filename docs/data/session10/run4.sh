#!/usr/bin/env bash
# Session 10 run 4: 64-bit reductions at 2^29 and 2^30 (in 2 and 4 buffers) and torch's at the
# same sizes in one run, vkreduce before and after torch.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw --format=csv -lms 500 > "$o/smi.csv" 2>&1 &
smi=$!
for round in a b; do
  timeout 150 build-release/bench/vkreduce-bench --reduce-only --dtypes f64,i64,u64 --min-log2 29 --max-log2 30 --reps 10 \
    --csv "$o/vkr-$round.csv" > "$o/vkr-$round.txt" 2>&1; echo "vkr $round rc=$?"
  pack
  if [ $round = a ]; then
    timeout 150 python3 bench/torch_bench.py --kinds reduce --dtypes f64,i64,u64 --min-log2 29 --max-log2 30 --reps 10 \
      --csv "$o/torch.csv" > "$o/torch.txt" 2>&1; echo "torch rc=$?"
    pack
  fi
done
kill $smi
pack
grep -h "copy kernel\|^reduce.*2^30" "$o"/vkr-*.txt; grep -h "2^30\|copy" "$o/torch.txt"
