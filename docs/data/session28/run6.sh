#!/usr/bin/env bash
# Session 28 run 6: the final build, spread small jobs in SPIR-V modules of their own (meson's
# _spread builds; every other module byte for byte the old build's), against 55c0a72: sums and count-if
# of f32, f64 and i64 from 2^10 to 2^24, new / old / old / new; the engine's reduction tests.
# Run as `. .gpu/env.sh; bash docs/data/session28/run6.sh $OUT` with .gpu/ and .exp/ carried.
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
timeout 90 /tmp/s28new/test_kern_reduce > "$o/test_kern_reduce.txt" 2>&1
echo "test_kern_reduce rc=$? $(date +%T)"; tail -n 1 "$o/test_kern_reduce.txt"
kill $smi; pack
