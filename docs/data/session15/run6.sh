#!/usr/bin/env bash
# Session 15 run 6: run 5 found M (53c2a58) 0.4 to 1.0 us slower than J (f73cc14) from 2^24 to
# 2^27, where run 2 had found L2 (24e1254 with two loads ahead) as fast as J. N is M's
# choice (flagged partials for 4-byte accumulators only) with L2's shader code for the tail
# (written inline in main, not in the functions M moved it into); Nf is N with
# VKR_REDUCE=fenced. 2^20 to 2^26, two rounds interleaved. Run as `. .gpu/env.sh; bash
# docs/data/session15/run6.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
R="--reduce-only --ops sum,max,count --dtypes f32,i32,f64 --min-log2 20 --max-log2 26 --reps 20"
for round in 1 2; do
  for v in J M N Nf; do
    e=X=1; b=$v; [ $v = Nf ] && e=VKR_REDUCE=fenced && b=N
    env $e timeout 50 .exp/vkreduce-bench-$b $R --csv "$o/r-$v-$round.csv" > "$o/r-$v-$round.txt" 2>&1
    echo "$v $round rc=$? $(date +%T) $(grep -c WRONG $o/r-$v-$round.txt) wrong"
  done
  pack
done
for f in r-J-1 r-M-1 r-N-1 r-Nf-1; do
  echo "== $f"; grep -E "^reduce" "$o/$f.txt" | awk '$4 == "2^20" || $4 == "2^24" || $4 == "2^26" {print $2, $3, $4, $5}' | tr '\n' ';'; echo
done
