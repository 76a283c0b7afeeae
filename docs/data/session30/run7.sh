#!/usr/bin/env bash
# Session 30 run 7: the flagged tail's loads ahead. The last workgroup folds 1,056 flagged
# partials, two loads ahead per invocation (reduce.comp's fold_flagged: 512 per round, three
# rounds); a5 issues five (1,280 per round: one round), a3 three (two rounds); otherwise the
# final build (a4ea1ae). Sums and products of f32 and i32 (the ops with flagged partials)
# from 2^15 to 2^25, old (f17c446, the same reduction code) / a5 / a3, twice; the first
# pass with VKR_PIPELINE_STATS=1 (registers).
# Run as `. .gpu/env.sh; bash docs/data/session30/run7.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
mkdir -p /tmp/s30old; tar xJf .exp/s30old.txz -C /tmp/s30old
for v in a5 a3; do mkdir -p /tmp/$v; tar xJf .exp/$v.txz -C /tmp/$v; done
pack() { tar czf "$out/run.tgz" -C "$o" .; }
for k in 1 2; do
  for v in old a5 a3; do
    b=/tmp/$v; [ $v = old ] && b=/tmp/s30old
    VKR_PIPELINE_STATS=$([ $k = 1 ] && echo 1 || echo 0) timeout 60 $b/bench/vkreduce-bench --reduce-only --ops sum,prod \
      --dtypes f32,i32 --min-log2 15 --max-log2 25 --reps 20 --csv "$o/r-$v-$k.csv" > "$o/r-$v-$k.txt" 2>&1
    echo "$v-$k rc=$? $(date +%T) $(grep -c WRONG $o/r-$v-$k.txt) wrong"; pack
  done
done
grep -hE "pipeline reduce_(f32|i32)_(sum|prod)_one " "$o"/r-*-1.txt
