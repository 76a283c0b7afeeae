#!/usr/bin/env bash
# Session 28 run 5 (on run 4's machine, still warm): is the one-part small jobs' +0.06 to
# +0.18 us of runs 3 and 4 the build, or the order (old always ran first)? Sums and count-if
# of f32, f64 and i64 from 2^10 to 2^24, new / old / old / new.
# Run as `. .gpu/env.sh; bash docs/data/session28/run5.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
for v in old new; do mkdir -p /tmp/s28$v; tar xJf .exp/s28$v.txz -C /tmp/s28$v; done
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 200 > "$o/smi.csv" 2>&1 &
smi=$!
i=0
for v in new old old new; do
  i=$((i + 1))
  timeout 60 /tmp/s28$v/bench/vkreduce-bench --reduce-only --ops sum,count --dtypes f32,f64,i64 --min-log2 10 --max-log2 24 \
    --reps 20 --times --csv "$o/reduce-$i-$v.csv" > "$o/reduce-$i-$v.txt" 2>&1
  echo "reduce $i $v rc=$? $(date +%T) $(grep -c WRONG $o/reduce-$i-$v.txt) wrong"; pack
done
kill $smi; pack
