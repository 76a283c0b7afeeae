#!/usr/bin/env bash
# Session 4, run 8 (final): scans with coalesced tiles, 2^20 to 2^28, beside torch, with the
# plot; every dtype at 2^28 a second time; float min/max staged too (variant v10).
set -u
O=${1:?}; o=$(mktemp -d); b=build-release
$b/bench/vkreduce-bench --scan-only --min-log2 20 --max-log2 28 --dtypes f32,f64,i32,i64 --reps 10 --csv $o/vk-scan.csv > $o/vk-scan.txt 2>&1; echo "sweep rc=$?"
grep -E "^(device copy|scan .* 2\^28)" $o/vk-scan.txt
$b/bench/vkreduce-bench --scan-only --min-log2 28 --max-log2 28 --reps 10 --csv $o/vk-scan-28.csv > $o/vk-scan-28.txt 2>&1; echo "again rc=$?"
grep -E "^(device copy|scan)" $o/vk-scan-28.txt
.exp/bench-v10 --scan-only --ops min,max --dtypes f32,f64 --min-log2 28 --max-log2 28 --reps 10 > $o/v10.txt 2>&1; echo "v10 rc=$?"
grep -E "^(device copy|scan)" $o/v10.txt
python3 bench/torch_bench.py --min-log2 20 --max-log2 28 --dtypes f32,f64,i32,i64 --reps 10 --cummin-max-log2 10 --csv $o/torch.csv > $o/torch.txt 2>&1; echo "torch rc=$?"
grep -E "scan .* 2\^28" $o/torch.txt
python3 bench/plot_bench.py $o/vk-scan.csv $o/torch.csv $o/plots > $o/plot.txt 2>&1; echo "plot rc=$?"
tar czf $O/run8.tgz -C $o .
