#!/usr/bin/env bash
# Session 6, run 5: the chunked single pass (subgroup rows, tile-local scan stored before the
# look-back, prefix applied from L2) with 8 rows per invocation (32 KiB tiles, build-release),
# 4 rows (c4) and 16 rows (c16); rts and torch in the same run; checked at 2^24.
set -u
O=${1:?}; o=$(mktemp -d); b=build-release/bench/vkreduce-bench
st() { name=$1; bin=$2; shift 2; env VKR_PIPELINE_STATS=1 VKR_SCAN=single-pass VKR_SCAN_TILE=subgroup "$@" $bin --reduce-only --ops sum --dtypes f32 --min-log2 10 --max-log2 10 --reps 1 > $o/stats-$name.txt 2>&1
  echo "stats $name rc=$?"; grep -E "pipeline scan_chained_(f32_sum|f64_sum|i32_sum|f32_max|f64_max) " $o/stats-$name.txt | sed 's/Binary Size.*Shared/Shared/'; }
st c8 $b
st c4 .exp/bench-c4
st c16 .exp/bench-c16
sb() { name=$1; bin=$2; shift 2; env "$@" $bin --scan-only --ops sum,max --dtypes f32,i32,f64,i64 --min-log2 28 --max-log2 28 --reps 10 > $o/$name.txt 2>&1; echo "$name rc=$?"; grep -E "^scan|copy kernel|WRONG|spread" $o/$name.txt; }
sb c8 $b VKR_SCAN=single-pass VKR_SCAN_TILE=subgroup
sb c4 .exp/bench-c4 VKR_SCAN=single-pass VKR_SCAN_TILE=subgroup
sb c16 .exp/bench-c16 VKR_SCAN=single-pass VKR_SCAN_TILE=subgroup
sb rts $b
sb c8-again $b VKR_SCAN=single-pass VKR_SCAN_TILE=subgroup
env VKR_SCAN=single-pass VKR_SCAN_TILE=subgroup $b --scan-only --ops sum,max,prod,min --dtypes f32,i32,f64,i64,u32,u64 --min-log2 24 --max-log2 24 --reps 3 > $o/c8-check.txt 2>&1; echo "c8-check rc=$?"; grep -E "WRONG" $o/c8-check.txt; grep -c "^scan" $o/c8-check.txt
python3 bench/torch_bench.py --min-log2 28 --max-log2 28 --dtypes f32,f64,i32,i64 --reps 10 --cummin-max-log2 10 > $o/torch.txt 2>&1; echo "torch rc=$?"
grep -E "scan|copy" $o/torch.txt
tar czf $O/run5.tgz -C $o .
