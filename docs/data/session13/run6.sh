#!/usr/bin/env bash
# Session 13 run 6: the read kernel as it is (G), with invocation 0 of each workgroup storing a vector (RW), with one store in the whole dispatch (RW0).
# f32 sums 2^20 to 2^24 beside them, two rounds; each read kernel prints its times at 1056 and 2112 workgroups.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
for round in 1 2; do
  for v in G RW RW0; do
    timeout 60 .exp/vkreduce-bench-$v --reduce-only --ops sum --dtypes f32 --min-log2 20 --max-log2 24 --reps 20 \
      > "$o/q-$v-$round.txt" 2> "$o/q-$v-$round.err"
    echo "$v $round rc=$? $(date +%T)"
  done
done
tar czf "$out/run.tgz" -C "$o" .
for round in 1 2; do for v in G RW RW0; do echo "== $v $round"; grep -E "^reduce" "$o/q-$v-$round.txt" | awk '{print $4, $5}' | tr '\n' ' '; echo; grep "^read" "$o/q-$v-$round.err" | awk '{print $2, $4, $6}' | tr '\n' ' '; echo; done; done
