#!/usr/bin/env bash
# Session 37 run 2: is run 1's slow default (f64 inclusive sum 1945 us against 1623 in
# S36-4, f32 sum 980 against 810 in S34-5) the blocked lanes' dead code in the
# scan_chained_rows build, or the machine? new (11297db: blocked lanes compiled in, off) against
# rev (its revert: scan_chained.comp as in 2dfcf52), in alternation, two rounds: sums and
# products of f64, i64 and f32 at 2^28, with VKR_PIPELINE_STATS=1 (registers and spills).
# Run as `. .gpu/env.sh; bash docs/data/session37/run2.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; o=/tmp/r2; mkdir -p $o
for v in new rev; do mkdir -p /tmp/$v; tar xJf .exp/s37$v.txz -C /tmp/$v; done
pack() { tar czf "$out/run.tgz" -C "$o" .; }
scan() { # name build dtypes extra...
  local name=$1 build=$2 dtypes=$3; shift 3
  VKR_PIPELINE_STATS=1 timeout 120 /tmp/$build/bench/vkreduce-bench --scan-only "$@" --ops sum,prod \
    --dtypes $dtypes --min-log2 28 --max-log2 28 --reps 20 --csv "$o/scan-$name.csv" > "$o/scan-$name.txt" 2>&1
  echo "$name rc=$? $(grep -c WRONG $o/scan-$name.txt) wrong: $(grep -E '^scan' $o/scan-$name.txt | awk '{print $2, $3, $5}' | tr '\n' ';')"
  pack
}
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
for round in 1 2; do
  scan rev-$round rev f64,i64,f32
  scan new-$round new f64,i64,f32
done
scan rev-x rev f64 --exclusive
scan new-x new f64 --exclusive
grep -iE 'copy kernel' $o/scan-rev-1.txt | head -1
grep -iE 'scan_chained.*(sum|prod).*(f64|f32)' $o/scan-rev-1.txt | head -8
grep -iE 'scan_chained.*(sum|prod).*(f64|f32)' $o/scan-new-1.txt | head -8
pack
