#!/usr/bin/env bash
# Session 11 run 1: reductions in one dispatch (default) against two passes (VKR_REDUCE=two-pass),
# f32 and f64, every op, 2^10 to 2^28, interleaved A B A B; torch's reductions at the same sizes;
# test_kern_reduce on the H200 (one dispatch against two passes, bit for bit).
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw --format=csv -lms 500 > "$o/smi.csv" 2>&1 &
smi=$!
timeout 240 build-release/tests/test_kern_reduce > "$o/test_kern_reduce.txt" 2>&1
echo "test_kern_reduce rc=$? $(grep -c '\[       OK \]' "$o/test_kern_reduce.txt") ok, $(grep -c FAILED "$o/test_kern_reduce.txt") failed lines"
grep -E "FAIL|one dispatch" "$o/test_kern_reduce.txt" | head -5
pack
for round in 1 2; do
  for mode in one two; do
    for d in f32 f64; do
      if [ $mode = two ]; then export VKR_REDUCE=two-pass; else unset VKR_REDUCE; fi
      timeout 100 build-release/bench/vkreduce-bench --reduce-only --dtypes $d --min-log2 10 --max-log2 28 --reps 20 \
        --csv "$o/vkr-$mode-$d-$round.csv" > "$o/vkr-$mode-$d-$round.txt" 2>&1
      echo "vkr $mode $d round $round rc=$? wrong=$(grep -c WRONG "$o/vkr-$mode-$d-$round.txt")"
      unset VKR_REDUCE
      pack
    done
  done
done
timeout 150 python3 bench/torch_bench.py --kinds reduce --dtypes f32,f64 --min-log2 10 --max-log2 28 --reps 20 \
  --csv "$o/torch.csv" > "$o/torch.txt" 2>&1; echo "torch rc=$?"
kill $smi
pack
for d in f32 f64; do
  echo "== $d sum: one dispatch / two passes (round 1, round 2)"
  paste -d' ' <(grep "^reduce  sum" "$o/vkr-one-$d-1.txt" | awk '{print $4, $5, $8}') \
    <(grep "^reduce  sum" "$o/vkr-two-$d-1.txt" | awk '{print $5, $8}') \
    <(grep "^reduce  sum" "$o/vkr-one-$d-2.txt" | awk '{print $5, $8}') \
    <(grep "^reduce  sum" "$o/vkr-two-$d-2.txt" | awk '{print $5, $8}')
done
grep -h "copy kernel" "$o"/vkr-one-f32-1.txt
