#!/usr/bin/env bash
# Session 14 run 1: reduce.comp variants (probes.patch; built by build-probes.sh Q0 Qr Qd Qv Qvd Qrvd):
# Q0 HEAD; Qr input vectors declared restrict; Qd subgroup-shuffle workgroup tree; Qv the
# arrival as one release/acquire atomic of the Vulkan memory model, no separate fences; Qvd
# Qv+Qd; Qrvd all three. Registers, then f32 and f64 sums and f32 max, 2^20 to 2^25, two rounds.
# Run as `. .gpu/env.sh; bash docs/data/session14/run1.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
vs="Q0 Qr Qd Qv Qvd Qrvd"
for v in $vs; do
  echo "$v $(VKR_COMPILE_ON_FIRST_USE=1 VKR_PIPELINE_STATS=1 timeout 30 .exp/vkreduce-bench-$v --reduce-only --ops sum --dtypes f32 \
    --min-log2 20 --max-log2 20 --reps 2 2>&1 | grep "pipeline reduce" | cut -c1-120)"
done
for round in 1 2; do
  for v in $vs; do
    timeout 60 .exp/vkreduce-bench-$v --reduce-only --ops sum,max --dtypes f32,f64 --min-log2 20 --max-log2 25 --reps 20 \
      --csv "$o/s-$v-$round.csv" > "$o/s-$v-$round.txt" 2>&1
    echo "$v $round rc=$? $(date +%T) $(grep -c WRONG $o/s-$v-$round.txt) wrong"
  done
done
tar czf "$out/run.tgz" -C "$o" .
for round in 1 2; do for v in $vs; do echo "== $v $round"; grep -E "^reduce" "$o/s-$v-$round.txt" | awk '{print $2, $3, $4, $5, $NF}' | tr '\n' ' '; echo; done; done
