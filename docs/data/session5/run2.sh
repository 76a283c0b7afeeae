#!/usr/bin/env bash
# Session 5, run 2: the single-pass scan reading device-memory tiles twice (aggregate, then
# from L2 after the look-back), against reduce-then-scan and torch, at 2^28; the warm-up now
# runs until copies stop getting faster.
set -u
O=${1:?}; o=$(mktemp -d); b=build-release
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
for t in blelloch subgroup; do
  VKR_PIPELINE_STATS=1 VKR_SCAN=single-pass VKR_SCAN_TILE=$t $b/bench/vkreduce-bench --reduce-only --ops sum --dtypes f32 --min-log2 10 --max-log2 10 --reps 1 > $o/stats-$t.txt 2>&1
  echo "stats $t rc=$?"
  grep -E "pipeline scan_chained_(f32_sum|f64_sum|f32_max|f64_max|i32_sum) " $o/stats-$t.txt | sed 's/Binary Size.*Shared/Shared/'
done
sb() { name=$1; shift; env "$@" $b/bench/vkreduce-bench --scan-only --ops sum,max --dtypes f32,f64,i32,i64 --min-log2 28 --max-log2 28 --reps 10 > $o/$name.txt 2>&1; echo "$name rc=$?"; grep -E "^scan|warm-up|FAIL|wrong" $o/$name.txt; }
sb sp-blelloch VKR_SCAN=single-pass
sb rts VKR_SCAN=reduce-then-scan
sb sp-subgroup VKR_SCAN=single-pass VKR_SCAN_TILE=subgroup
python3 bench/torch_bench.py --min-log2 28 --max-log2 28 --dtypes f32,f64,i32,i64 --reps 10 --cummin-max-log2 10 > $o/torch.txt 2>&1; echo "torch rc=$?"
grep -E "scan" $o/torch.txt
VKR_SCAN=single-pass $b/tests/test_kern_scan > $o/test_kern_scan_sp.txt 2>&1; echo "test_kern_scan single-pass rc=$?"
tail -3 $o/test_kern_scan_sp.txt
tar czf $O/run2.tgz -C $o .
