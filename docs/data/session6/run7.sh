#!/usr/bin/env bash
# Session 6, run 7: the chunked single pass with its loops unrolled (no local memory), every
# op and dtype at 2^28, against reduce-then-scan and torch in the same run; checked against
# the CPU at 2^24 for every op and dtype.
set -u
O=${1:?}; o=$(mktemp -d); b=build-release/bench/vkreduce-bench
env VKR_PIPELINE_STATS=1 VKR_SCAN=single-pass VKR_SCAN_TILE=subgroup $b --reduce-only --ops sum --dtypes f32 --min-log2 10 --max-log2 10 --reps 1 > $o/stats-c8.txt 2>&1
echo "stats rc=$?"; grep -E "pipeline scan_chained_(f32|f64|i32|i64)_(sum|max) " $o/stats-c8.txt | sed 's/Binary Size.*Stack/Stack/'
sb() { name=$1; shift; env "$@" $b --scan-only --ops sum,prod,min,max --dtypes f32,i32,u32,f64,i64,u64 --min-log2 28 --max-log2 28 --reps 10 > $o/$name.txt 2>&1; echo "$name rc=$?"; grep -E "^scan|copy kernel|WRONG|spread" $o/$name.txt; }
sb chunked VKR_SCAN=single-pass VKR_SCAN_TILE=subgroup
sb rts
env VKR_SCAN=single-pass VKR_SCAN_TILE=subgroup $b --scan-only --ops sum,prod,min,max --dtypes f32,i32,u32,f64,i64,u64 --min-log2 24 --max-log2 24 --reps 3 > $o/chunked-check.txt 2>&1; echo "check rc=$?"; grep -E "WRONG" $o/chunked-check.txt; grep -c "^scan" $o/chunked-check.txt
python3 bench/torch_bench.py --min-log2 28 --max-log2 28 --dtypes f32,f64,i32,i64 --reps 10 --cummin-max-log2 10 > $o/torch.txt 2>&1; echo "torch rc=$?"
grep -E "scan|copy" $o/torch.txt
tar czf $O/run7.tgz -C $o .
