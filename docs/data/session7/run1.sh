#!/usr/bin/env bash
# Session 7, run 1: the look-back gathered by ballots (sglb), the tile held in registers
# through the look-back (hold), both, against the committed kernel (base); probes nolb (no
# look-back) and nofix (look-back, no fix pass), wrong output; 2^28 f32/i32 sums, each twice,
# interleaved; registers; sglb and both checked at 2^24 for every op and dtype; torch.
set -u
O=${1:?}; o=$O/r; mkdir -p $o; B=.exp/bins
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
for v in base sglb hold both; do
  env VKR_PIPELINE_STATS=1 $B/$v --reduce-only --ops sum --dtypes f32 --min-log2 10 --max-log2 10 --reps 1 > $o/stats-$v.txt 2>&1
  echo "$v: $(grep -E "pipeline scan_chained_(f32|i32|f64)_(sum|max) " $o/stats-$v.txt | sed 's/Binary Size.*Stack/Stack/' | head -3)"
done
for round in 1 2; do
  for v in base sglb hold both nofix nolb; do
    $B/$v --scan-only --ops sum --dtypes f32,i32 --min-log2 28 --max-log2 28 --reps 10 > $o/$v-$round.txt 2>&1
    echo "$v-$round rc=$? $(grep -E '^scan|copy kernel|WRONG|spread' $o/$v-$round.txt | tr -s ' ' | tr '\n' '|')"
  done
done
for v in sglb both; do
  VKR_SCAN=single-pass $B/$v --scan-only --ops sum,prod,min,max --dtypes f32,i32,u32,f64,i64,u64 --min-log2 24 --max-log2 24 --reps 3 > $o/check-$v.txt 2>&1
  echo "check $v rc=$? wrong=$(grep -c WRONG $o/check-$v.txt) rows=$(grep -c '^scan' $o/check-$v.txt)"
done
python3 bench/torch_bench.py --min-log2 28 --max-log2 28 --dtypes f32,i32 --reps 10 --cummin-max-log2 10 > $o/torch.txt 2>&1; echo "torch rc=$?"
grep -E "scan|copy" $o/torch.txt | head
