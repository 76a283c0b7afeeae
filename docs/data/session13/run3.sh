#!/usr/bin/env bash
# Session 13 run 3: the read kernel on one wave (1056 workgroups) and on two (2112), printed
# apart, beside f32 and f64 sums on one wave (the default) and on two (VKR_REDUCE_WORKGROUPS),
# 2^22 to 2^26, two rounds.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
for round in 1 2; do
  for w in 1056 2112; do
    env=(); [ $w = 2112 ] && env=(VKR_REDUCE_WORKGROUPS=2112)  # the default is one wave, 1056
    env "${env[@]}" timeout 60 .exp/vkreduce-bench-G --reduce-only --ops sum --dtypes f32,f64 --min-log2 22 \
      --max-log2 26 --reps 20 --csv "$o/grid-$w-$round.csv" > "$o/grid-$w-$round.txt" 2> "$o/grid-$w-$round.err"
    echo "grid $w $round rc=$? $(date +%T)"
  done
done
tar czf "$out/run.tgz" -C "$o" .
for round in 1 2; do for w in 1056 2112; do echo "== $w $round"; grep -E "^reduce" "$o/grid-$w-$round.txt"; grep "^read" "$o/grid-$w-$round.err"; done; done
