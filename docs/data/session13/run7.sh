#!/usr/bin/env bash
# Session 13 run 7: is it reduce.comp's other passes? Rs: pass 3 only (the other paths compiled
# out); Rsbd: that, without the fences around the arrival (unsafe) and with the subgroup tree.
# Registers, then f32 and f64 sums 2^20 to 2^25 beside old (G: 78391bd plus the read kernel's
# two times on stderr), two rounds.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
for v in Rs Rsbd; do
  VKR_COMPILE_ON_FIRST_USE=1 VKR_PIPELINE_STATS=1 timeout 30 .exp/vkreduce-bench-$v --reduce-only --ops sum --dtypes f32 \
    --min-log2 20 --max-log2 20 --reps 2 2>&1 | grep "pipeline reduce" | cut -c1-200
done
for round in 1 2; do
  for v in G Rs Rsbd; do
    timeout 60 .exp/vkreduce-bench-$v --reduce-only --ops sum --dtypes f32,f64 --min-log2 20 --max-log2 25 --reps 20 \
      > "$o/s-$v-$round.txt" 2> "$o/s-$v-$round.err"
    echo "$v $round rc=$? $(date +%T)"
  done
done
tar czf "$out/run.tgz" -C "$o" .
for round in 1 2; do for v in G Rs Rsbd; do echo "== $v $round"; grep -E "^reduce" "$o/s-$v-$round.txt" | awk '{print $3, $4, $5}' | tr '\n' ' '; echo; done; done
grep "^read" "$o/s-G-1.err" | awk '{print $2, $4, $6}' | tr '\n' ' '; echo
