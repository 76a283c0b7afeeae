#!/usr/bin/env bash
# Session 15 run 2. J = f73cc14; K = run 1's flagged build (86ef029: the flagged tail as pass 4
# beside pass 3 in one pipeline); L = the flagged tail chosen by a specialization constant
# (FLAGGED_PARTIALS), so that each pipeline holds one tail; L2 = L with two flagged loads in
# flight per invocation instead of four. L with VKR_REDUCE=fenced runs the fenced tail. First
# the driver's register counts (VKR_PIPELINE_STATS), then L's reduction tests, then reductions
# 2^16 to 2^25, two rounds interleaved.
# Run as `. .gpu/env.sh; bash docs/data/session15/run2.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
for v in J K L L2; do
  for e in X=1 VKR_REDUCE=fenced; do
    VKR_COMPILE_ON_FIRST_USE=1 VKR_PIPELINE_STATS=1 env $e timeout 60 .exp/vkreduce-bench-$v --reduce-only --ops sum,max \
      --dtypes f32,f64,i32,i64 --min-log2 20 --max-log2 20 --reps 2 > "$o/stats-$v-${e%%=*}.txt" 2>&1
    echo "$v $e: $(grep -E 'pipeline (reduce|count)_(f32|f64|i32|i64)(_sum|_max)? ' "$o/stats-$v-${e%%=*}.txt" | sed -E 's/pipeline ([a-z0-9_]+) .*Register Count=([0-9]+).*/\1=\2/' | tr '\n' ' ')"
  done
done
pack
for t in 1 2; do
  VKR_COMPILE_ON_FIRST_USE=1 timeout 150 .exp/test_kern_reduce-L > "$o/test_kern_reduce-$t.txt" 2>&1
  echo "test_kern_reduce L $t rc=$? $(grep -E 'PASSED|FAILED' "$o/test_kern_reduce-$t.txt" | tr '\n' ' ')"
done
pack
run() { # name env binary args...
  local name=$1 envv=$2 bin=$3; shift 3
  env $envv timeout 100 .exp/vkreduce-bench-$bin "$@" --csv "$o/$name.csv" > "$o/$name.txt" 2>&1
  echo "$name rc=$? $(date +%T) $(grep -c WRONG $o/$name.txt) wrong; $(grep -o 'reduce partials: [a-z ]*' $o/$name.txt)"
}
R="--reduce-only --ops sum,max,count --dtypes f32,f64,i32,i64 --min-log2 16 --max-log2 25 --reps 20"
for round in 1 2; do
  run r-J-$round X=1 J $R
  run r-L-$round X=1 L $R
  run r-Lf-$round VKR_REDUCE=fenced L $R
  run r-L2-$round X=1 L2 $R
  run r-K-$round X=1 K $R
  pack
done
for f in r-J-1 r-L-1 r-Lf-1 r-L2-1 r-K-1; do
  echo "== $f"; grep -E "^reduce" "$o/$f.txt" | awk '$4 == "2^16" || $4 == "2^20" || $4 == "2^24" || $4 == "2^25" {print $2, $3, $4, $5, $NF}' | tr '\n' ';'; echo
done
