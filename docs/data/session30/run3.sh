#!/usr/bin/env bash
# Session 30 run 3: where run 2's limb tail loses its time. f32 and f64 sums from 2^15 to
# 2^25 of old and new (run 2's builds) on grids of 264, 528 and 1056 workgroups
# (VKR_REDUCE_WORKGROUPS): a cost that grows with the workgroups is the atomics'
# contention, one that does not is the last workgroup's.
# Run as `. .gpu/env.sh; bash docs/data/session30/run3.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
for v in old new; do mkdir -p /tmp/s30$v; tar xJf .exp/s30$v.txz -C /tmp/s30$v; done
pack() { tar czf "$out/run.tgz" -C "$o" .; }
for g in 264 528 1056; do
  for v in old new; do
    VKR_REDUCE_WORKGROUPS=$g timeout 60 /tmp/s30$v/bench/vkreduce-bench --reduce-only --ops sum --dtypes f32,f64 \
      --min-log2 15 --max-log2 25 --reps 20 --csv "$o/g$g-$v.csv" > "$o/g$g-$v.txt" 2>&1
    echo "g$g $v rc=$? $(date +%T) $(grep -c WRONG $o/g$g-$v.txt) wrong"; pack
  done
done
