#!/usr/bin/env bash
# Session 10 run 3: run 2's 64-bit reductions again (2^24 to 2^30; its files were lost), then
# the plot of runs 1 and 3 beside run 1's torch.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
export MPLCONFIGDIR="$out/mpl"
df -h / /tmp | tail -2
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw --format=csv -lms 500 > "$o/smi.csv" 2>&1 &
smi=$!
for d in f64 i64 u64; do
  timeout 110 build-release/bench/vkreduce-bench --reduce-only --dtypes $d --min-log2 24 --max-log2 30 --reps 10 \
    --csv "$o/vkr-$d.csv" > "$o/vkr-$d.txt" 2>&1; echo "vkr $d rc=$? wrong=$(grep -c WRONG "$o/vkr-$d.txt")"
  pack
done
kill $smi
{ head -1 .exp/s10/vkr-f32.csv; for f in .exp/s10/vkr-*.csv "$o"/vkr-*.csv; do tail -n +2 "$f"; done; } > "$out/all.csv"
mv "$out/all.csv" "$o/sweep-all.csv"
timeout 60 python3 bench/plot_bench.py "$o/sweep-all.csv" .exp/s10/torch.csv "$o/plots"; echo "plot rc=$?"
rm -rf "$MPLCONFIGDIR"
pack
ls -la "$o" "$o/plots"
grep -h "copy kernel\|^reduce.*2^30" "$o"/vkr-*.txt
