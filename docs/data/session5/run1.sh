#!/usr/bin/env bash
# Session 5, run 1: driver statistics of every scan pipeline (registers, shared memory), then
# scans at 2^28: reduce-then-scan, single-pass (no stage now) with the Blelloch and the
# subgroup tile scan, beside torch.
set -u
O=${1:?}; o=$(mktemp -d); b=build-release
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
for t in blelloch subgroup; do
  VKR_PIPELINE_STATS=1 VKR_SCAN=single-pass VKR_SCAN_TILE=$t $b/bench/vkreduce-bench --reduce-only --ops sum --dtypes f32 --min-log2 10 --max-log2 10 --reps 1 > $o/stats-$t.txt 2>&1
  echo "stats $t rc=$?"
done
grep -E "pipeline (scan_chained_f32_sum|scan_chained_f64_sum|scan_chained_f32_max|scan_apply_f32_sum|reduce_f32_sum) " $o/stats-blelloch.txt | head -12
grep -E "pipeline (scan_chained_f32_sum|scan_chained_f64_max) " $o/stats-subgroup.txt | head -6
sb() { name=$1; shift; env "$@" $b/bench/vkreduce-bench --scan-only --ops sum,max --dtypes f32,f64,i32,i64 --min-log2 28 --max-log2 28 --reps 10 > $o/$name.txt 2>&1; echo "$name rc=$?"; grep -E "^scan" $o/$name.txt; }
sb rts VKR_SCAN=reduce-then-scan
sb sp-blelloch VKR_SCAN=single-pass
sb sp-subgroup VKR_SCAN=single-pass VKR_SCAN_TILE=subgroup
python3 bench/torch_bench.py --min-log2 28 --max-log2 28 --dtypes f32,f64,i32,i64 --reps 10 --cummin-max-log2 10 > $o/torch.txt 2>&1; echo "torch rc=$?"
grep -E "scan" $o/torch.txt
sb sp-blelloch-again VKR_SCAN=single-pass
tar czf $O/run1.tgz -C $o .
