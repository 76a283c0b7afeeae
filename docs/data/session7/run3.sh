#!/usr/bin/env bash
# Session 7, run 3: the final build (the chunked single pass held in registers through the
# look-back), its default choice per op and dtype, every scan from 2^22 to 2^28, checked at
# 2^24 against the CPU; torch in the same run; plots.
set -u
O=${1:?}; o=$(mktemp -d); b=build-release/bench/vkreduce-bench; t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,memory.total --format=csv > $o/gpu.txt 2>&1
env VKR_PIPELINE_STATS=1 $b --reduce-only --ops sum --dtypes f32 --min-log2 10 --max-log2 10 --reps 1 > $o/stats.txt 2>&1
grep -E "pipeline scan_chained_(f32|i32|u32)_(sum|max) " $o/stats.txt | sed 's/Binary Size.*Stack/Stack/'
timeout 300 $b --scan-only --min-log2 22 --max-log2 28 --reps 10 --csv $o/vkreduce-scan.csv > $o/vkreduce-scan.txt 2>&1
echo "scan rc=$? $(( $(date +%s) - t0 ))s wrong=$(grep -c WRONG $o/vkreduce-scan.txt)"
grep -E "^device|copy kernel|2\^28|spread" $o/vkreduce-scan.txt
timeout 150 python3 bench/torch_bench.py --min-log2 22 --max-log2 28 --dtypes f32,f64,i32,i64 --reps 10 --cummin-max-log2 22 --csv $o/torch.csv > $o/torch.txt 2>&1
echo "torch rc=$? $(( $(date +%s) - t0 ))s"
grep -E "copy|scan.*2\^28" $o/torch.txt
python3 bench/plot_bench.py $o/vkreduce-scan.csv $o/torch.csv $o/plots
python3 bench/plot_bars.py .exp/variants.csv $o/plots/scan-variants.png --columns f32_sum_us,i32_sum_us --lines torch,copy \
  --title 'Single-pass scan variants, 2^28 sums on the H200 (session 7, runs 1-2): lower is better'
tar czf $O/run3.tgz -C $o .
