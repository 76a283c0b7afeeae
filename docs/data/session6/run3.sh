#!/usr/bin/env bash
# Session 6, run 3: where the look-back's ~200 us go (all with rows addressing, wrong output):
# va: the in-block tree fold without its barrier levels; vb: the look-back cut to one round
# trip and a barrier; rowsaddr again for the same run.
set -u
O=${1:?}; o=$(mktemp -d)
st() { name=$1; bin=$2; shift 2; env VKR_PIPELINE_STATS=1 VKR_SCAN=single-pass "$@" $bin --reduce-only --ops sum --dtypes f32 --min-log2 10 --max-log2 10 --reps 1 > $o/stats-$name.txt 2>&1
  echo "stats $name rc=$?"; grep -E "pipeline scan_chained_(f32_sum|f64_sum|i32_sum) " $o/stats-$name.txt | sed 's/Binary Size.*Shared/Shared/'; }
st va .exp/bench-va
st vb .exp/bench-vb
sb() { name=$1; bin=$2; shift 2; env "$@" $bin --scan-only --ops sum --dtypes f32,i32 --min-log2 28 --max-log2 28 --reps 10 > $o/$name.txt 2>&1; echo "$name rc=$?"; grep -E "^scan|copy kernel|WRONG|spread" $o/$name.txt; }
for i in 1 2; do
sb va-bl-$i .exp/bench-va VKR_SCAN=single-pass
sb vb-bl-$i .exp/bench-vb VKR_SCAN=single-pass
sb rowsaddr-bl-$i .exp/bench-rowsaddr VKR_SCAN=single-pass
done
tar czf $O/run3.tgz -C $o .
