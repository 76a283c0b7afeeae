#!/usr/bin/env bash
# Session 13 run 4: what in pass 0 costs ~3 us more than the read kernel at every size. All
# probes start from Rc (no arrival, no final fold; wrong results, timing only): Rc1 folds the
# read kernel's way (xor of the bits, two uvec4), Rc2 has no workgroup tree, Rc3 four loads in
# flight per iteration. f32 sums 2^20 to 2^24 beside old (78391bd), two rounds.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
for round in 1 2; do
  for v in old Rc Rc1 Rc2 Rc3; do
    b=.exp/vkreduce-bench-$v; [ $v = old ] && b=.exp/old/vkreduce-bench
    timeout 60 $b --reduce-only --ops sum --dtypes f32 --min-log2 20 --max-log2 24 --reps 20 \
      --csv "$o/p-$v-$round.csv" > "$o/p-$v-$round.txt" 2>&1
    echo "$v $round rc=$? $(date +%T)"
  done
done
tar czf "$out/run.tgz" -C "$o" .
for round in 1 2; do for v in old Rc Rc1 Rc2 Rc3; do echo "== $v $round"; grep -E "^reduce" "$o/p-$v-$round.txt"; done; done
