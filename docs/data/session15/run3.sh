#!/usr/bin/env bash
# Session 15 run 3: the session's final build (M: flagged partials for 4-byte accumulators,
# fenced for 8-byte ones): its reduction tests on the H200; every op and dtype, 2^10 to 2^28,
# against the read kernel; torch's reductions over the same sizes; the plot, drawn here.
# .exp/vkreduce-bench-M and .exp/test_kern_reduce-M are build-release's of that commit. Run as
# `. .gpu/env.sh; bash docs/data/session15/run3.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > "$o/gpu.txt" 2>&1
VKR_COMPILE_ON_FIRST_USE=1 timeout 100 .exp/test_kern_reduce-M > "$o/test_kern_reduce.txt" 2>&1
echo "test_kern_reduce rc=$? $(grep -E 'PASSED|FAILED' "$o/test_kern_reduce.txt" | tr '\n' ' ')"
timeout 300 .exp/vkreduce-bench-M --reduce-only --min-log2 10 --max-log2 28 --reps 20 \
  --csv "$o/reduce-all.csv" > "$o/reduce-all.txt" 2>&1
echo "reduce-all rc=$? $(date +%T) $(grep -c WRONG $o/reduce-all.txt) wrong; $(grep -o 'reduce partials: [a-z ]*' $o/reduce-all.txt)"; pack
timeout 150 python3 bench/torch_bench.py --kinds reduce --min-log2 10 --max-log2 28 --reps 20 \
  --csv "$o/torch-reduce.csv" > "$o/torch-reduce.txt" 2>&1; echo "torch rc=$? $(date +%T)"; pack
python3 docs/data/session15/plot_s15.py "$o" "$o" > "$o/plot.txt" 2>&1; echo "plot rc=$? $(python3 -c 'import matplotlib; print(matplotlib.__version__)')"; pack
grep -E "^reduce" "$o/reduce-all.txt" | awk '$4 == "2^20" || $4 == "2^24" || $4 == "2^25" || $4 == "2^28" {print $2, $3, $4, $5, $NF}' | tr '\n' ';'
