#!/usr/bin/env bash
# Session 13 run 5: does a workgroup barrier or shared memory cost the read kernel what pass 0
# costs more? The read kernel as it is (G), with a barrier at its end (RB), with a word per
# invocation through shared memory behind a barrier (RS), with the reduction's shared-memory
# tree over those words (RT); each prints its times at 1056 and at 2112 workgroups. f32 sums
# 2^20 to 2^24 beside them, two rounds.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
for round in 1 2; do
  for v in G RB RS RT; do
    timeout 60 .exp/vkreduce-bench-$v --reduce-only --ops sum --dtypes f32 --min-log2 20 --max-log2 24 --reps 20 \
      > "$o/q-$v-$round.txt" 2> "$o/q-$v-$round.err"
    echo "$v $round rc=$? $(date +%T)"
  done
done
tar czf "$out/run.tgz" -C "$o" .
for round in 1 2; do for v in G RB RS RT; do echo "== $v $round"; grep -E "^reduce" "$o/q-$v-$round.txt" | awk '{print $4, $5}' | tr '\n' ' '; echo; grep "^read" "$o/q-$v-$round.err" | awk '{print $2, $4, $6}' | tr '\n' ' '; echo; done; done
