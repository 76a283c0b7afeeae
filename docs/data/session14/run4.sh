#!/usr/bin/env bash
# Session 14 run 4: the session's final build (F, 932f7e5: subgroup tree, float count-if by
# key ranges, 64-bit count-if on one wave): the reduction tests; every op of every dtype,
# 2^10 to 2^28, against the read kernel; torch's reductions over the same sizes.
# .exp/vkreduce-bench-F and .exp/test_kern_reduce-F are build-release's at 932f7e5. Run as
# `. .gpu/env.sh; bash docs/data/session14/run4.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > "$o/gpu.txt" 2>&1
VKR_COMPILE_ON_FIRST_USE=1 timeout 120 .exp/test_kern_reduce-F > "$o/test_kern_reduce.txt" 2>&1
echo "test_kern_reduce rc=$? $(grep -E 'PASSED|FAILED' "$o/test_kern_reduce.txt" | tr '\n' ' ')"
timeout 330 .exp/vkreduce-bench-F --reduce-only --min-log2 10 --max-log2 28 --reps 20 \
  --csv "$o/reduce-all.csv" > "$o/reduce-all.txt" 2>&1; echo "reduce-all rc=$? $(date +%T) $(grep -c WRONG $o/reduce-all.txt) wrong"; pack
timeout 150 python3 bench/torch_bench.py --kinds reduce --min-log2 10 --max-log2 28 --reps 20 \
  --csv "$o/torch-reduce.csv" > "$o/torch-reduce.txt" 2>&1; echo "torch rc=$? $(date +%T)"; pack
grep -E "^reduce" "$o/reduce-all.txt" | awk '$4 == "2^24" || $4 == "2^28" {print $2, $3, $4, $5, $NF}' | tr '\n' ';'
