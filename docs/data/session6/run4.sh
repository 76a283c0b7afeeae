#!/usr/bin/env bash
# Session 6, run 4: single pass with one vector per slot (sv1: rows-coalesced tile accesses,
# 8 KiB tiles), and store-then-fix (stf: the tile-local scan stored before the look-back, the
# prefix applied to it afterwards from L2; stf2: the same with two vectors per slot). rts and
# torch in the same run. stf checked against the CPU at 2^24.
set -u
O=${1:?}; o=$(mktemp -d)
st() { name=$1; bin=$2; shift 2; env VKR_PIPELINE_STATS=1 VKR_SCAN=single-pass "$@" $bin --reduce-only --ops sum --dtypes f32 --min-log2 10 --max-log2 10 --reps 1 > $o/stats-$name.txt 2>&1
  echo "stats $name rc=$?"; grep -E "pipeline scan_chained_(f32_sum|f64_sum|i32_sum|f32_max) " $o/stats-$name.txt | sed 's/Binary Size.*Shared/Shared/'; }
st stf .exp/bench-stf
st stf-sg .exp/bench-stf VKR_SCAN_TILE=subgroup
st sv1 .exp/bench-sv1
sb() { name=$1; bin=$2; shift 2; env "$@" $bin --scan-only --ops sum --dtypes f32,i32,f64 --min-log2 28 --max-log2 28 --reps 10 > $o/$name.txt 2>&1; echo "$name rc=$?"; grep -E "^scan|copy kernel|WRONG|spread" $o/$name.txt; }
sb stf .exp/bench-stf VKR_SCAN=single-pass
sb stf-sg .exp/bench-stf VKR_SCAN=single-pass VKR_SCAN_TILE=subgroup
sb sv1 .exp/bench-sv1 VKR_SCAN=single-pass
sb stf2 .exp/bench-stf2 VKR_SCAN=single-pass
sb rts build-release/bench/vkreduce-bench
sb stf-again .exp/bench-stf VKR_SCAN=single-pass
env VKR_SCAN=single-pass .exp/bench-stf --scan-only --ops sum,max --dtypes f32,i32,f64,i64 --min-log2 24 --max-log2 28 --reps 5 > $o/stf-check.txt 2>&1; echo "stf-check rc=$?"; grep -E "^scan|WRONG|spread" $o/stf-check.txt
python3 bench/torch_bench.py --min-log2 28 --max-log2 28 --dtypes f32,f64,i32 --reps 10 --cummin-max-log2 10 > $o/torch.txt 2>&1; echo "torch rc=$?"
grep -E "scan|copy" $o/torch.txt
tar czf $O/run4.tgz -C $o .
