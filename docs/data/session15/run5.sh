#!/usr/bin/env bash
# Session 15 run 5: J (f73cc14, fenced partials) against M (53c2a58, flagged partials for
# 4-byte accumulators) at 2^24 to 2^27, interleaved, three rounds: run 3 had M's f32 max and
# count-if at 2^26 0.6 us slower than session 14's S14-4 (another machine), a size run 2 did
# not cover. Run as `. .gpu/env.sh; bash docs/data/session15/run5.sh $OUT` with .gpu/ and
# .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
R="--reduce-only --ops sum,max,count --dtypes f32,i32,f64 --min-log2 24 --max-log2 27 --reps 20"
for round in 1 2 3; do
  for v in J M; do
    timeout 80 .exp/vkreduce-bench-$v $R --csv "$o/r-$v-$round.csv" > "$o/r-$v-$round.txt" 2>&1
    echo "$v $round rc=$? $(date +%T) $(grep -c WRONG $o/r-$v-$round.txt) wrong"
  done
  pack
done
for f in r-J-1 r-M-1 r-J-2 r-M-2 r-J-3 r-M-3; do
  echo "== $f"; grep -E "^reduce" "$o/$f.txt" | awk '{print $2, $3, $4, $5}' | tr '\n' ';'; echo
done
