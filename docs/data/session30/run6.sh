#!/usr/bin/env bash
# Session 30 run 6: a probe of run 4's limb tail (9af4a3e, not kept), to place the 1.2 us it
# costs over the i64 sum's tail: A is run 4's tail; B without the double-double butterfly
# (lane 0 rounds its own limbs only: wrong sums); C with one limb atomic per workgroup in
# place of two or three (wrong sums); D both. Sums of f32, f64 and i64 from 2^15 to 2^24,
# old (f17c446) / A / B / C / D, twice.
# Run as `. .gpu/env.sh; bash docs/data/session30/run6.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
mkdir -p /tmp/s30old; tar xJf .exp/s30old.txz -C /tmp/s30old
for v in A B C D; do mkdir -p /tmp/p$v; tar xJf .exp/p$v.txz -C /tmp/p$v; done
pack() { tar czf "$out/run.tgz" -C "$o" .; }
for k in 1 2; do
  for v in old A B C D; do
    b=/tmp/p$v; [ $v = old ] && b=/tmp/s30old
    timeout 60 $b/bench/vkreduce-bench --reduce-only --ops sum --dtypes f32,f64,i64 --min-log2 15 --max-log2 24 \
      --reps 20 --csv "$o/sum-$v-$k.csv" > "$o/sum-$v-$k.txt" 2>&1
    echo "sum $v-$k rc=$? $(date +%T)"; pack
  done
done
