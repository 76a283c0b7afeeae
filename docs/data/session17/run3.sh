#!/usr/bin/env bash
# Session 17 run 3. A = 2208a9d (summed arrivals), build-release's vkreduce-bench: every op and
# dtype 2^10 to 2^28 against the read kernel, torch's reductions over the same sizes, and the
# plot, drawn here. Run as `. .gpu/env.sh; bash docs/data/session17/run3.sh $OUT` with .gpu/
# and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > "$o/gpu.txt" 2>&1
timeout 260 .exp/vkreduce-bench-A --reduce-only --min-log2 10 --max-log2 28 --reps 20 \
  --csv "$o/reduce-all.csv" > "$o/reduce-all.txt" 2>&1
echo "reduce-all rc=$? $(date +%T) $(grep -c WRONG $o/reduce-all.txt) wrong; $(grep -o 'reduce partials: [^,]*,[^,]*' $o/reduce-all.txt)"; pack
timeout 170 python3 bench/torch_bench.py --kinds reduce --min-log2 10 --max-log2 28 --reps 20 \
  --csv "$o/torch-reduce.csv" > "$o/torch-reduce.txt" 2>&1; echo "torch rc=$? $(date +%T)"; pack
python3 docs/data/session17/plot_s17.py "$o" "$o" > "$o/plot.txt" 2>&1; echo "plot rc=$? $(tail -2 $o/plot.txt)"; pack
grep -E "^reduce" "$o/reduce-all.txt" | awk '$4 == "2^16" || $4 == "2^24" || $4 == "2^25" || $4 == "2^28" {print $2, $3, $4, $5, $NF}' | tr '\n' ';'
