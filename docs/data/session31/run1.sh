#!/usr/bin/env bash
# Session 31 run 1 (probe): the atomic tails posted (one atomic per workgroup, its answer not
# awaited, no arrival: the result is never written, so each series reports WRONG at its check
# size, after its timings) against f849c11, two pairs in alternating order. i32 sum (summed
# arrivals), i32 and i64 max and f32 max (by atomics; f32 folds keys on the H200).
# One invocation per op and dtype: 2^18 to 2^24 (checked at 2^24, the last), then 2^25 alone.
# Run as `. .gpu/env.sh; bash docs/data/session31/run1.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
for v in base posted; do mkdir -p /tmp/$v; tar xJf .exp/$v.txz -C /tmp/$v; done
pack() { tar czf "$out/run.tgz" -C "$o" .; }
for k in 1 2; do
  order="base posted"; [ $k = 2 ] && order="posted base"
  for v in $order; do
    for c in i32:sum i32:max f32:max i64:max; do
      d=${c%:*}; op=${c#*:}
      for r in 18:24 25:25; do
        timeout 60 /tmp/$v/bench/vkreduce-bench --reduce-only --ops $op --dtypes $d --min-log2 ${r%:*} \
          --max-log2 ${r#*:} --reps 20 --csv "$o/r-$v-$k-$d-$op-${r%:*}.csv" > "$o/r-$v-$k-$d-$op-${r%:*}.txt" 2>&1
      done
      echo "$v-$k $c $(date +%T)"
    done
    pack
  done
done
