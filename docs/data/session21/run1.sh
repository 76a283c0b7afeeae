#!/usr/bin/env bash
# Session 21 run 1. Sums of i64 and u64 in one dispatch by an atomic add (a833700, "cur"),
# against the same binary with VKR_REDUCE=partials (fenced partials, the path before), 2^16 to
# 2^26, two rounds interleaved, with the read kernel over the same bytes; torch.sum of int64 at
# the same sizes; the engine's reduction tests on the H200.
# Run as `. .gpu/env.sh; bash docs/data/session21/run1.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
tar xJf .exp/bins.txz -C .exp
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi -L > "$o/smi-L.txt" 2>&1
b=.exp/cur
for round in 1 2; do
  for mode in atomics partials; do
    if [ $mode = partials ]; then export VKR_REDUCE=partials; else unset VKR_REDUCE; fi
    timeout 150 $b/bench/vkreduce-bench --reduce-only --ops sum --dtypes i64,u64 \
      --min-log2 16 --max-log2 26 --reps 20 --csv "$o/sum64-$mode-$round.csv" > "$o/sum64-$mode-$round.txt" 2>&1
    echo "sum64 $mode $round rc=$? $(date +%T) $(grep -c WRONG $o/sum64-$mode-$round.txt) wrong"
    grep -E "^reduce" "$o/sum64-$mode-$round.txt" | awk '$4 ~ /2\^2[3-6]/ {print $3, $4, $5, $NF}' | tr '\n' ';'; echo
    pack
  done
done
unset VKR_REDUCE
timeout 120 python3 bench/torch_bench.py --kinds reduce --min-log2 16 --max-log2 26 --reps 20 \
  --dtypes i64 --csv "$o/torch-i64.csv" > "$o/torch-i64.txt" 2>&1
echo "torch rc=$? $(date +%T)"; grep -E "sum" "$o/torch-i64.txt" | tail -4; pack
timeout 150 $b/tests/test_kern_reduce > "$o/test_kern_reduce.txt" 2>&1
echo "test_kern_reduce rc=$? $(date +%T)"; tail -n 3 "$o/test_kern_reduce.txt"; pack
