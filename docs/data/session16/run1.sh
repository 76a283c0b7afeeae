#!/usr/bin/env bash
# Session 16 run 1. O = 9330da7 (session 15's last commit: flagged partials for 4-byte
# accumulators, the last arrival folds); P = O with the awaited tail (the grid's last
# workgroup folds the flagged partials as they land, with no arrival counter, and computes
# a partial itself after VKR_REDUCE_PATIENCE rounds); Pw = P with VKR_REDUCE=flagged (8-byte
# accumulators flagged too). P's reduction tests, by default and with every wait taken over
# (VKR_REDUCE_PATIENCE=1); the driver's registers; reductions 2^16 to 2^26, two rounds
# interleaved. Run as `. .gpu/env.sh; bash docs/data/session16/run1.sh $OUT` with .gpu/ and
# .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > "$o/gpu.txt" 2>&1
for pat in default 1; do
  e=X=1; [ $pat = 1 ] && e=VKR_REDUCE_PATIENCE=1
  env $e VKR_COMPILE_ON_FIRST_USE=1 timeout 120 .exp/test_kern_reduce-P > "$o/test_kern_reduce-$pat.txt" 2>&1
  echo "test_kern_reduce P patience=$pat rc=$? $(date +%T) $(grep -E 'PASSED|FAILED' "$o/test_kern_reduce-$pat.txt" | tr '\n' ' ')"
done
pack
for v in O P Pw; do
  e=X=1; b=$v; [ $v = Pw ] && e=VKR_REDUCE=flagged && b=P
  env $e VKR_COMPILE_ON_FIRST_USE=1 VKR_PIPELINE_STATS=1 timeout 60 .exp/vkreduce-bench-$b --reduce-only --ops sum,max,count \
    --dtypes f32,f64,i32,i64 --min-log2 20 --max-log2 20 --reps 2 > "$o/stats-$v.txt" 2>&1
  echo "$v: $(grep -E 'pipeline (reduce|count)_(f32|f64|i32|i64)(_sum|_max)? ' "$o/stats-$v.txt" | sed -E 's/pipeline ([a-z0-9_]+) .*Register Count=([0-9]+).*/\1=\2/' | tr '\n' ' ')"
done
pack
R="--reduce-only --ops sum,max,count --dtypes f32,i32,f64,i64 --min-log2 16 --max-log2 26 --reps 20"
for round in 1 2; do
  for v in O P Pw; do
    e=X=1; b=$v; [ $v = Pw ] && e=VKR_REDUCE=flagged && b=P
    env $e timeout 80 .exp/vkreduce-bench-$b $R --csv "$o/r-$v-$round.csv" > "$o/r-$v-$round.txt" 2>&1
    echo "$v $round rc=$? $(date +%T) $(grep -c WRONG $o/r-$v-$round.txt) wrong"
  done
  pack
done
for f in r-O-1 r-P-1 r-Pw-1; do
  echo "== $f"; grep -E "^reduce" "$o/$f.txt" | awk '$3 == "f32" || $3 == "f64" {if ($4 == "2^20" || $4 == "2^24") print $2, $3, $4, $5}' | tr '\n' ';'; echo
done
