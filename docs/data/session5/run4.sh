#!/usr/bin/env bash
# Session 5, run 4: single-pass tiles in device memory read and written as rows through half a tile
# of shared memory, against reduce-then-scan and torch.
set -u
O=${1:?}; o=$(mktemp -d); b=build-release
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
st() { name=$1; bin=$2; shift 2; env VKR_PIPELINE_STATS=1 VKR_SCAN=single-pass "$@" $bin --reduce-only --ops sum --dtypes f32 --min-log2 10 --max-log2 10 --reps 1 > $o/stats-$name.txt 2>&1
  echo "stats $name rc=$?"; grep -E "pipeline scan_chained_(f32_sum|f64_sum|f32_max|f64_max|i64_max) " $o/stats-$name.txt | sed 's/Binary Size.*Shared/Shared/'; }
st new-bl $b/bench/vkreduce-bench
st new-sg $b/bench/vkreduce-bench VKR_SCAN_TILE=subgroup
sb() { name=$1; bin=$2; shift 2; env "$@" $bin --scan-only --ops sum,max --dtypes f32,f64,i32,i64 --min-log2 28 --max-log2 28 --reps 10 > $o/$name.txt 2>&1; echo "$name rc=$?"; grep -E "^scan|vkreduce-bench|FAIL|wrong" $o/$name.txt; }
sb new-bl $b/bench/vkreduce-bench VKR_SCAN=single-pass
sb rts $b/bench/vkreduce-bench
sb new-sg $b/bench/vkreduce-bench VKR_SCAN=single-pass VKR_SCAN_TILE=subgroup
python3 bench/torch_bench.py --min-log2 28 --max-log2 28 --dtypes f32,f64,i32,i64 --reps 10 --cummin-max-log2 10 > $o/torch.txt 2>&1; echo "torch rc=$?"
grep -E "scan" $o/torch.txt
tar czf $O/run4.tgz -C $o .
