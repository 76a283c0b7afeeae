#!/usr/bin/env bash
# Session 14 run 3: float count-if by key ranges with no NaN test per element (C: the tree
# of 7dfbfb3 plus that change) against N (7dfbfb3), every dtype 2^20 to 2^28, two rounds
# interleaved; then C's 64-bit count-if on one wave (VKR_REDUCE_WORKGROUPS=1056) against
# its default two. .exp/vkreduce-bench-C and .exp/test_kern_reduce-C are build-release's at
# the commit that made the change. Run as `. .gpu/env.sh; bash docs/data/session14/run3.sh
# $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
VKR_COMPILE_ON_FIRST_USE=1 timeout 120 .exp/test_kern_reduce-C > "$o/test_kern_reduce.txt" 2>&1
echo "test_kern_reduce rc=$? $(grep -E 'PASSED|FAILED' "$o/test_kern_reduce.txt" | tr '\n' ' ')"
for round in 1 2; do
  for v in N C; do
    timeout 100 .exp/vkreduce-bench-$v --reduce-only --ops count --min-log2 20 --max-log2 28 --reps 20 \
      --csv "$o/c-$v-$round.csv" > "$o/c-$v-$round.txt" 2>&1
    echo "$v $round rc=$? $(date +%T) $(grep -c WRONG $o/c-$v-$round.txt) wrong"; pack
  done
done
VKR_REDUCE_WORKGROUPS=1056 timeout 100 .exp/vkreduce-bench-C --reduce-only --ops count --dtypes f64,i64 --min-log2 22 --max-log2 28 \
  --reps 20 --csv "$o/c-C-1wave.csv" > "$o/c-C-1wave.txt" 2>&1; echo "1wave rc=$?"; pack
for round in 1 2; do for v in N C; do echo "== $v $round"; grep -E "^reduce" "$o/c-$v-$round.txt" | awk '{print $3, $4, $5, $NF}' | tr '\n' ';'; echo; done; done
echo "== C one wave"; grep -E "^reduce" "$o/c-C-1wave.txt" | awk '{print $3, $4, $5, $NF}' | tr '\n' ';'; echo
