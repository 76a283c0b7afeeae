#!/usr/bin/env bash
# Session 30 run 8: run 7's a3 (three flagged partials' loads ahead) against old again, four
# pairs (old / a3 alternating), sums and products of f32 and products of i32, 2^15 to 2^25.
# Run as `. .gpu/env.sh; bash docs/data/session30/run8.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
mkdir -p /tmp/s30old /tmp/a3; tar xJf .exp/s30old.txz -C /tmp/s30old; tar xJf .exp/a3.txz -C /tmp/a3
pack() { tar czf "$out/run.tgz" -C "$o" .; }
for k in 1 2 3 4; do
  for v in old a3; do
    b=/tmp/$v; [ $v = old ] && b=/tmp/s30old
    timeout 60 $b/bench/vkreduce-bench --reduce-only --ops sum,prod --dtypes f32,i32 --min-log2 15 --max-log2 25 \
      --reps 20 --csv "$o/r-$v-$k.csv" > "$o/r-$v-$k.txt" 2>&1
    echo "$v-$k rc=$? $(date +%T) $(grep -c WRONG $o/r-$v-$k.txt) wrong"; pack
  done
done
