#!/usr/bin/env bash
# Session 16 run 4: where the reduction's extra microseconds go, by the timeline probe.
# T = run 3's probe (9330da7 + timeline-probe.patch); Ts = T with pass 3 alone compiled
# into reduce.comp (PASS3_ONLY: the prologue's branches on the pass and the other passes'
# code gone); Tn = T with the strided fold's vector loads Nontemporal (SPIR-V memory
# operand, by GL_EXT_spirv_intrinsics); Tsn = both. Each: f32 and f64 sum and max, 2^16 to
# 2^26, its timeline summary. Run as `. .gpu/env.sh; bash docs/data/session16/run4.sh $OUT`
# with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
for round in 1 2; do
for v in T Ts Tn Tsn; do
  mkdir -p $o/tl-$v-$round
  VKR_TIMELINE_DIR=$o/tl-$v-$round timeout 120 .exp/vkreduce-bench-$v --reduce-only --ops sum,max --dtypes f32,f64 --min-log2 16 \
    --max-log2 26 --reps 20 --csv "$o/$v-$round.csv" > "$o/$v-$round.txt" 2>&1
  echo "$v $round rc=$? $(date +%T) $(grep -c WRONG $o/$v-$round.txt) wrong"
  python3 docs/data/session16/timeline.py $o/tl-$v-$round > $o/timeline-$v-$round.txt 2>&1
done
done
rm -rf $o/tl-*-2; pack
for v in T Ts Tn Tsn; do echo "== $v"; grep -A2 -E "== tl-sum-f32-(24).bin" $o/timeline-$v-1.txt | tail -2; grep -E "^reduce" "$o/$v-1.txt" | awk '$4 == "2^16" || $4 == "2^20" || $4 == "2^24" || $4 == "2^26" {print $2, $3, $4, $5}' | tr '\n' ';'; echo; done
