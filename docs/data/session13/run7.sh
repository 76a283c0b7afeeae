#!/usr/bin/env bash
# Session 13 run 7 (built, not run: no device was lent again). Is it reduce.comp's module? Rs:
# pass 3 only (the other paths compiled out); Rsbd: that, without the fences around the
# arrival (unsafe) and with the subgroup tree; Rn: Rc (no arrival, no fold) with the partial
# stored through a plain buffer, so that the module has no coherent access at all; Rn2: the
# kernel as it is with SharedAccs and Arrivals not declared coherent (formally unsafe).
# Registers, then f32 and f64 sums 2^20 to 2^25 beside old (G: 78391bd plus the read
# kernel's two times on stderr), two rounds. Each .exp/vkreduce-bench-X is the tree with the
# probe X of probes-reduce.patch applied, built by `docs/data/session13/build-probes.sh G Rs
# Rsbd Rn Rn2` on the development machine; run as `. .gpu/env.sh; bash
# docs/data/session13/run7.sh $OUT` with `.gpu/` and `.exp/` carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
for v in Rs Rsbd Rn Rn2; do
  VKR_COMPILE_ON_FIRST_USE=1 VKR_PIPELINE_STATS=1 timeout 30 .exp/vkreduce-bench-$v --reduce-only --ops sum --dtypes f32 \
    --min-log2 20 --max-log2 20 --reps 2 2>&1 | grep "pipeline reduce" | cut -c1-200
done
for round in 1 2; do
  for v in G Rs Rsbd Rn Rn2; do
    dt=f32,f64; [ $v = Rn ] && dt=f32  # Rn is wrong by design: it stops at the check (2^24)
    timeout 60 .exp/vkreduce-bench-$v --reduce-only --ops sum --dtypes $dt --min-log2 20 --max-log2 25 --reps 20 \
      > "$o/s-$v-$round.txt" 2> "$o/s-$v-$round.err"
    echo "$v $round rc=$? $(date +%T)"
  done
done
tar czf "$out/run.tgz" -C "$o" .
for round in 1 2; do for v in G Rs Rsbd Rn Rn2; do echo "== $v $round"; grep -E "^reduce" "$o/s-$v-$round.txt" | awk '{print $3, $4, $5}' | tr '\n' ' '; echo; done; done
grep "^read" "$o/s-G-1.err" | awk '{print $2, $4, $6}' | tr '\n' ' '; echo
