#!/usr/bin/env bash
# Session 7, run 4: keep (the tile's own scan kept in shared memory through the look-back,
# stored once with its prefix), keep16 (the same with 64 KiB tiles), hold6 (the final
# kernel with 24 KiB tiles) and hold (the final build, a8c...: held in registers); 2^28
# sums, each twice, interleaved; registers; keep checked at 2^24 for every op and dtype.
set -u
O=${1:?}; o=$(mktemp -d); B=.exp/bins; t0=$(date +%s)
for v in keep keep16 hold6; do
  env VKR_PIPELINE_STATS=1 $B/$v --reduce-only --ops sum --dtypes f32 --min-log2 10 --max-log2 10 --reps 1 > $o/stats-$v.txt 2>&1
  echo "$v: $(grep -E "pipeline scan_chained_(f32|i32)_(sum|max) " $o/stats-$v.txt | sed 's/Binary Size.*Stack/Stack/' | tr '\n' '|')"
done
for round in 1 2; do
  for v in keep hold keep16 hold6; do
    timeout 90 $B/$v --scan-only --ops sum --dtypes f32,i32 --min-log2 28 --max-log2 28 --reps 10 > $o/$v-$round.txt 2>&1
    echo "$v-$round rc=$? $(( $(date +%s) - t0 ))s $(grep -E '^scan|copy kernel|WRONG|spread' $o/$v-$round.txt | tr -s ' ' | tr '\n' '|')"
  done
done
VKR_SCAN=single-pass timeout 120 $B/keep --scan-only --ops sum,prod,min,max --dtypes f32,i32,u32,f64,i64,u64 --min-log2 24 --max-log2 24 --reps 3 > $o/check-keep.txt 2>&1
echo "check keep rc=$? wrong=$(grep -c WRONG $o/check-keep.txt) rows=$(grep -c '^scan' $o/check-keep.txt) $(( $(date +%s) - t0 ))s"
tar czf $O/run4.tgz -C $o .
