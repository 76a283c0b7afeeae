#!/usr/bin/env bash
# Session 8, run 6: the 64-bit single pass recomputing each row's subgroup scan after the
# look-back instead of holding it (recompute probe: 16 registers of 64-bit prefixes fewer
# live through the look-back), against reduce-then-scan in the same run; checked at 2^24.
set -u
O=${1:?}; o=$O/r; mkdir -p $o; t0=$(date +%s)
B=.exp/bins/recompute
VKR_SCAN=single-pass VKR_PIPELINE_STATS=1 timeout 60 $B --reduce-only --ops sum --dtypes f32 --min-log2 10 --max-log2 10 --reps 1 > $o/stats.txt 2>&1
echo "recompute: $(grep -E "pipeline scan_chained_(f32|f64|i64)_(sum|max) " $o/stats.txt | sed 's/Binary Size.*Stack Size=0; //; s/Shared.*//; s/pipeline scan_chained_//' | tr '\n' '|')"
run() { name=$1; shift; timeout 150 "$@" --csv $o/$name.csv > $o/$name.txt 2>&1
  echo "$name rc=$? $(( $(date +%s) - t0 ))s"; grep -E '^scan|copy kernel|WRONG' $o/$name.txt | tr -s ' ' | sed 's/^/  /'; }
run sp env VKR_SCAN=single-pass $B --scan-only --ops sum,max --dtypes f64,i64 --min-log2 28 --max-log2 28 --reps 10 --times
run rts env VKR_SCAN=reduce-then-scan $B --scan-only --ops sum,max --dtypes f64,i64 --min-log2 28 --max-log2 28 --reps 10 --times
VKR_SCAN=single-pass timeout 60 $B --scan-only --ops sum,prod,min,max --dtypes f64,i64,u64 --min-log2 24 --max-log2 24 --reps 3 > $o/check.txt 2>&1
echo "check rc=$? wrong=$(grep -c WRONG $o/check.txt) rows=$(grep -c '^scan' $o/check.txt) $(( $(date +%s) - t0 ))s"
tar czf $O/run6.tgz -C $o . && rm -rf $o
