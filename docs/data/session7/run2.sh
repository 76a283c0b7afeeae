#!/usr/bin/env bash
# Session 7, run 2: pipe (each workgroup loads its next tile before the current tile's
# look-back; the tile's own scan kept in shared memory), pipe4 (the same with 16 KiB tiles),
# hold (the tile kept in registers through the look-back, stored once) and base (as
# committed, 69fcc13); 2^28 scans; pipe and pipe4 checked at 2^24 for every op and dtype;
# registers; torch.
set -u
O=${1:?}; o=$(mktemp -d); B=.exp/bins
t0=$(date +%s)
for v in pipe pipe4; do
  env VKR_PIPELINE_STATS=1 $B/$v --reduce-only --ops sum --dtypes f32 --min-log2 10 --max-log2 10 --reps 1 > $o/stats-$v.txt 2>&1
  echo "$v: $(grep -E "pipeline scan_chained_(f32|i32|f64)_(sum|max) " $o/stats-$v.txt | sed 's/Binary Size.*Stack/Stack/' | tr '\n' '|')"
done
echo "stats done $(( $(date +%s) - t0 )) s"
s() { name=$1; v=$2; shift 2; timeout 90 $B/$v --scan-only --min-log2 28 --max-log2 28 --reps 10 "$@" > $o/$name.txt 2>&1
  echo "$name rc=$? $(( $(date +%s) - t0 ))s $(grep -E '^scan|copy kernel|WRONG|spread' $o/$name.txt | tr -s ' ' | tr '\n' '|')"; }
s base-1 base --ops sum --dtypes f32,i32
s pipe-1 pipe --ops sum,prod,min,max --dtypes f32,i32,u32
s pipe4-1 pipe4 --ops sum --dtypes f32,i32
s hold-1 hold --ops sum,prod,min,max --dtypes f32,i32,u32
s pipe-2 pipe --ops sum --dtypes f32,i32
s hold-2 hold --ops sum --dtypes f32,i32
s base-2 base --ops sum --dtypes f32,i32
for v in pipe pipe4; do
  VKR_SCAN=single-pass timeout 120 $B/$v --scan-only --ops sum,prod,min,max --dtypes f32,i32,u32,f64,i64,u64 --min-log2 24 --max-log2 24 --reps 3 > $o/check-$v.txt 2>&1
  echo "check $v rc=$? wrong=$(grep -c WRONG $o/check-$v.txt) rows=$(grep -c '^scan' $o/check-$v.txt) $(( $(date +%s) - t0 ))s"
done
python3 bench/torch_bench.py --min-log2 28 --max-log2 28 --dtypes f32,i32 --reps 10 --cummin-max-log2 10 > $o/torch.txt 2>&1; echo "torch rc=$? $(( $(date +%s) - t0 ))s"
grep -E "scan|copy" $o/torch.txt | head
tar czf $O/run2.tgz -C $o .
