#!/usr/bin/env bash
# Session 5, run 7: probe persistent: single-pass workgroups on device memory take tiles until
# none is left and load the next tile before scanning the current; against .exp/bench-base.
set -u
O=${1:?}; o=$(mktemp -d); b=build-release
VKR_PIPELINE_STATS=1 VKR_SCAN=single-pass $b/bench/vkreduce-bench --reduce-only --ops sum --dtypes f32 --min-log2 10 --max-log2 10 --reps 1 > $o/stats-persistent.txt 2>&1
grep -E "pipeline scan_chained_(f32_sum|f32_max|f64_sum) " $o/stats-persistent.txt | sed 's/Binary Size.*Shared/Shared/'
sb() { name=$1; bin=$2; shift 2; env "$@" $bin --scan-only --ops sum,max --dtypes f32,i32,f64 --min-log2 28 --max-log2 28 --reps 10 > $o/$name.txt 2>&1; echo "$name rc=$?"; grep -E "^scan|vkreduce-bench|FAIL|wrong|ERROR" $o/$name.txt; }
sb persistent $b/bench/vkreduce-bench VKR_SCAN=single-pass
sb base .exp/bench-base VKR_SCAN=single-pass
VKR_SCAN=single-pass $b/bench/vkreduce-bench --scan-only --ops sum,max --dtypes i32,f64 --min-log2 24 --max-log2 25 --reps 3 > $o/check.txt 2>&1; echo "check 2^24 rc=$?"; grep -iE "wrong|fail|error|mismatch" $o/check.txt | head -5
tar czf $O/run7.tgz -C $o .
