#!/usr/bin/env bash
# Session 5, run 6: probe sg-lookback: the single-pass look-back run by the first subgroup
# alone (no workgroup barrier per round), against the current single-pass (.exp/bench-base).
set -u
O=${1:?}; o=$(mktemp -d); b=build-release
VKR_PIPELINE_STATS=1 VKR_SCAN=single-pass $b/bench/vkreduce-bench --reduce-only --ops sum --dtypes f32 --min-log2 10 --max-log2 10 --reps 1 > $o/stats-sg-lookback.txt 2>&1
grep -E "pipeline scan_chained_(f32_sum|f32_max|i32_sum|f64_sum) " $o/stats-sg-lookback.txt | sed 's/Binary Size.*Shared/Shared/'
sb() { name=$1; bin=$2; shift 2; env "$@" $bin --scan-only --ops sum,max --dtypes f32,i32 --min-log2 28 --max-log2 28 --reps 10 > $o/$name.txt 2>&1; echo "$name rc=$?"; grep -E "^scan|vkreduce-bench|FAIL|wrong|ERROR" $o/$name.txt; }
sb sg-lookback $b/bench/vkreduce-bench VKR_SCAN=single-pass
sb base .exp/bench-base VKR_SCAN=single-pass
sb sg-lookback-again $b/bench/vkreduce-bench VKR_SCAN=single-pass
tar czf $O/run6.tgz -C $o .
