#!/usr/bin/env bash
# Session 14 run 5: integer count-if by key ranges (I, the commit after 932f7e5) against F
# (932f7e5, a switch per element for integers), every dtype 2^10 to 2^28, two rounds
# interleaved, after the reduction tests of I. Run as `. .gpu/env.sh; bash
# docs/data/session14/run5.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
VKR_COMPILE_ON_FIRST_USE=1 timeout 120 .exp/test_kern_reduce-I > "$o/test_kern_reduce.txt" 2>&1
echo "test_kern_reduce rc=$? $(grep -E 'PASSED|FAILED' "$o/test_kern_reduce.txt" | tr '\n' ' ')"
for round in 1 2; do
  for v in F I; do
    timeout 100 .exp/vkreduce-bench-$v --reduce-only --ops count --min-log2 10 --max-log2 28 --reps 20 \
      --csv "$o/c-$v-$round.csv" > "$o/c-$v-$round.txt" 2>&1
    echo "$v $round rc=$? $(date +%T) $(grep -c WRONG $o/c-$v-$round.txt) wrong"; pack
  done
done
for round in 1 2; do for v in F I; do echo "== $v $round"; grep -E "^reduce" "$o/c-$v-$round.txt" | awk '$4 == "2^20" || $4 == "2^22" || $4 == "2^24" || $4 == "2^26" || $4 == "2^28" {print $3, $4, $5, $NF}' | tr '\n' ';'; echo; done; done
