#!/usr/bin/env bash
# Session 13 run 2: where a mid-size reduction's fixed cost goes. 78391bd (old) against probes:
# Rb without the fences around the arrival (unsafe), Rc without the arrival and the last
# workgroup's fold (wrong result: timing only), Rd with the workgroup tree by subgroup xor
# shuffles. Sizes 2^20 to 2^25, f32 and f64 sums, two rounds, beside the read kernel. Then the
# restructured look-back with both of run 1's ideas off (N) against old, 2^28 sums.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
date +%T
for round in 1 2; do
  for v in old Rb Rd; do
    b=.exp/vkreduce-bench-$v; [ $v = old ] && b=.exp/old/vkreduce-bench
    timeout 60 $b --reduce-only --ops sum --dtypes f32,f64 --min-log2 20 --max-log2 25 --reps 20 \
      --csv "$o/red-$v-$round.csv" > "$o/red-$v-$round.txt" 2>&1
    echo "red $v $round rc=$? wrong=$(grep -c WRONG "$o/red-$v-$round.txt") $(date +%T)"
  done
  for d in f32 f64; do
    timeout 60 .exp/vkreduce-bench-Rc --reduce-only --ops sum --dtypes $d --min-log2 20 --max-log2 24 --reps 20 \
      --csv "$o/red-Rc-$d-$round.csv" > "$o/red-Rc-$d-$round.txt" 2>&1
    echo "red Rc $d $round rc=$? $(date +%T)"
  done
  pack
done
for round in 1 2; do
  for v in old N; do
    b=.exp/vkreduce-bench-$v; [ $v = old ] && b=.exp/old/vkreduce-bench
    timeout 60 $b --scan-only --ops sum --dtypes f32,i32 --min-log2 28 --max-log2 28 --reps 10 \
      --csv "$o/scan-$v-$round.csv" > "$o/scan-$v-$round.txt" 2>&1
    echo "scan $v $round rc=$? wrong=$(grep -c WRONG "$o/scan-$v-$round.txt") $(date +%T)"; pack
  done
done
for round in 1 2; do for v in old Rb Rd Rc-f32 Rc-f64; do echo "== red $v $round"; grep -E "^reduce" "$o/red-$v-$round.txt"; done; done
for round in 1 2; do for v in old N; do echo "== scan $v $round"; grep -E "^scan" "$o/scan-$v-$round.txt"; done; done
