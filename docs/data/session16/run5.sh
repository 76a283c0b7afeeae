#!/usr/bin/env bash
# Session 16 run 5. O = 9330da7; U2 = O with one-dispatch pipelines (reduce.comp's
# ONE_DISPATCH specialization constant: pass 3 alone in its own pipelines), the flagged
# partials folded two loads ahead as before; U5, U8 = U2 with five and eight loads ahead (one
# round over 1,280 and 2,048 partials). U2's reduction tests; the driver's registers;
# reductions 2^16 to 2^26, two rounds interleaved. Run as `. .gpu/env.sh; bash
# docs/data/session16/run5.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
VKR_COMPILE_ON_FIRST_USE=1 timeout 120 .exp/test_kern_reduce-U2 > "$o/test_kern_reduce-U2.txt" 2>&1
echo "test_kern_reduce U2 rc=$? $(date +%T) $(grep -E 'PASSED|FAILED' "$o/test_kern_reduce-U2.txt" | tr '\n' ' ')"
for v in O U2 U5 U8; do
  VKR_COMPILE_ON_FIRST_USE=1 VKR_PIPELINE_STATS=1 timeout 60 .exp/vkreduce-bench-$v --reduce-only --ops sum,max,count \
    --dtypes f32,f64,i32 --min-log2 20 --max-log2 20 --reps 2 > "$o/stats-$v.txt" 2>&1
  echo "$v: $(grep -E 'pipeline (reduce|count)_(f32|f64|i32)(_sum|_max)?(_one)? ' "$o/stats-$v.txt" | sed -E 's/pipeline ([a-z0-9_]+) .*Register Count=([0-9]+).*/\1=\2/' | tr '\n' ' ')"
done
pack
R="--reduce-only --ops sum,max,count --dtypes f32,i32,f64 --min-log2 16 --max-log2 26 --reps 20"
for round in 1 2; do
  for v in O U2 U5 U8; do
    timeout 80 .exp/vkreduce-bench-$v $R --csv "$o/r-$v-$round.csv" > "$o/r-$v-$round.txt" 2>&1
    echo "$v $round rc=$? $(date +%T) $(grep -c WRONG $o/r-$v-$round.txt) wrong"
  done
  pack
done
for f in r-O-1 r-U2-1 r-U5-1 r-U8-1; do
  echo "== $f"; grep -E "^reduce" "$o/$f.txt" | awk '$3 == "f32" || $3 == "f64" {if ($4 == "2^20" || $4 == "2^24") print $2, $3, $4, $5}' | tr '\n' ';'; echo
done
