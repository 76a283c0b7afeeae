#!/usr/bin/env bash
# Session 16 run 3: run 2's timeline probe (T), now with the command buffer's own
# timestamps of the last timed run in each dump, by default and with VKR_REDUCE=fenced.
# Run as `. .gpu/env.sh; bash docs/data/session16/run3.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
for v in T Tf; do
  e=X=1; [ $v = Tf ] && e=VKR_REDUCE=fenced
  mkdir -p $o/tl-$v
  env $e VKR_TIMELINE_DIR=$o/tl-$v timeout 120 .exp/vkreduce-bench-T --reduce-only --ops sum,max --dtypes f32,f64 --min-log2 16 \
    --max-log2 26 --reps 20 --csv "$o/$v.csv" > "$o/$v.txt" 2>&1
  echo "$v rc=$? $(date +%T) $(grep -c WRONG $o/$v.txt) wrong"
  python3 docs/data/session16/timeline.py $o/tl-$v > $o/timeline-$v.txt 2>&1; echo "timeline rc=$?"
done
pack
for v in T Tf; do grep -A3 -E "== tl-sum-f32-(16|24|26).bin" $o/timeline-$v.txt; done
