#!/usr/bin/env bash
# Session 6, run 2: the single pass with row-coalesced tile addressing (probe rowsaddr: the
# slots' vectors taken from four coalesced 4 KiB rows; wrong output, the timing of that access
# pattern), with and without the look-back (rowsaddr-nolb).
set -u
O=${1:?}; o=$(mktemp -d)
st() { name=$1; bin=$2; shift 2; env VKR_PIPELINE_STATS=1 VKR_SCAN=single-pass "$@" $bin --reduce-only --ops sum --dtypes f32 --min-log2 10 --max-log2 10 --reps 1 > $o/stats-$name.txt 2>&1
  echo "stats $name rc=$?"; grep -E "pipeline scan_chained_(f32_sum|f64_sum|i32_sum) " $o/stats-$name.txt | sed 's/Binary Size.*Shared/Shared/'; }
st rowsaddr-sg .exp/bench-rowsaddr VKR_SCAN_TILE=subgroup
st rowsaddr-nolb-sg .exp/bench-rowsaddr-nolb VKR_SCAN_TILE=subgroup
sb() { name=$1; bin=$2; shift 2; env "$@" $bin --scan-only --ops sum --dtypes f32,i32,f64 --min-log2 28 --max-log2 28 --reps 10 > $o/$name.txt 2>&1; echo "$name rc=$?"; grep -E "^scan|copy kernel|WRONG|spread" $o/$name.txt; }
sb rowsaddr-nolb-bl .exp/bench-rowsaddr-nolb VKR_SCAN=single-pass
sb rowsaddr-nolb-sg .exp/bench-rowsaddr-nolb VKR_SCAN=single-pass VKR_SCAN_TILE=subgroup
sb rowsaddr-bl .exp/bench-rowsaddr VKR_SCAN=single-pass
sb rowsaddr-sg .exp/bench-rowsaddr VKR_SCAN=single-pass VKR_SCAN_TILE=subgroup
sb nolb-sg .exp/bench-nolb VKR_SCAN=single-pass VKR_SCAN_TILE=subgroup
tar czf $O/run2.tgz -C $o .
