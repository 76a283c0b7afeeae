#!/usr/bin/env bash
# Session 37 run 3: does the parked rows' code (scan_chained.comp's PARK_ROWS, a
# specialization constant that is 0 by default) cost the scan_chained_rows build's default
# path, as the blocked lanes' did in run 2? rev (03072bf) against nopark (the same with
# PARK_ROWS a plain constant 0 in every build: a patched worktree, not committed), in
# alternation, two rounds: sums and products of f64, i64 and f32 at 2^28, exclusive f64, with
# VKR_PIPELINE_STATS=1.
# Run as `. .gpu/env.sh; bash docs/data/session37/run3.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; o=/tmp/r3; mkdir -p $o
for v in rev nopark; do mkdir -p /tmp/$v; tar xJf .exp/s37$v.txz -C /tmp/$v; done
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
  scan nopark-$round nopark f64,i64,f32
done
scan rev-x rev f64 --exclusive
scan nopark-x nopark f64 --exclusive
grep -iE 'copy kernel' $o/scan-rev-1.txt | head -1
for b in rev nopark; do grep -E 'pipeline scan_chained_(f64|i64|f32)_(sum|prod)(_excl)? ' $o/scan-$b-1.txt $o/scan-$b-x.txt | awk -F'[][]' '{print $1, $3}' | cut -c1-160; done
pack
