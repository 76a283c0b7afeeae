#!/usr/bin/env bash
# Session 16 run 2: the timeline probe. T = 9330da7 with timeline-probe.patch: lid 0 of each
# workgroup of pass 3 (and of the read kernel) stores its realtime clock at the start, after
# its strided fold, after its tree, after its arrival and (the last workgroup) after the fold
# of the partials and at the end; the benchmark dumps the last timed run of each row. The
# read kernel runs on the reductions' grid only (one wave). Run as `. .gpu/env.sh; bash
# docs/data/session16/run2.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r/tl"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
VKR_TIMELINE_DIR=$o/tl timeout 120 .exp/vkreduce-bench-T --reduce-only --ops sum,max --dtypes f32,f64 --min-log2 16 \
  --max-log2 26 --reps 20 --csv "$o/t.csv" > "$o/t.txt" 2>&1
echo "T rc=$? $(date +%T) $(grep -c WRONG $o/t.txt) wrong"
python3 docs/data/session16/timeline.py $o/tl > $o/timeline.txt 2>&1; echo "timeline rc=$?"
pack
grep -A12 -E "== tl-sum-f32-(16|20|24|26).bin" $o/timeline.txt
