#!/usr/bin/env bash
# Session 16 run 7. U = 1663db5; V = U with one copy of the tree's code for both of pass 3's
# trees (a loop of two steps, [[dont_unroll]]), so that the last workgroup runs tree code its
# own tree has just fetched; V3 = V with three flagged loads ahead instead of two. Reductions
# 2^16 to 2^26, two rounds interleaved. Run as `. .gpu/env.sh; bash
# docs/data/session16/run7.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
R="--reduce-only --ops sum,max,count --dtypes f32,i32,f64 --min-log2 16 --max-log2 26 --reps 20"
for round in 1 2; do
  for v in U V V3; do
    timeout 60 .exp/vkreduce-bench-$v $R --csv "$o/r-$v-$round.csv" > "$o/r-$v-$round.txt" 2>&1
    echo "$v $round rc=$? $(date +%T) $(grep -c WRONG $o/r-$v-$round.txt) wrong"
  done
  pack
done
python3 - "$o" <<'PY'
import csv, sys
def load(v, r):
    return {(x['op'], x['dtype'], x['n']): float(x['us']) for x in csv.DictReader(open(f'{sys.argv[1]}/r-{v}-{r}.csv')) if x['kind'] == 'reduce'}
u = [load('U', r) for r in (1, 2)]
for v in ('V', 'V3'):
    o = [load(v, r) for r in (1, 2)]
    ratios = [(o[0][k] + o[1][k]) / (u[0][k] + u[1][k]) for k in u[0]]
    print(f'{v} mean time / U: {sum(ratios) / len(ratios):.4f}')
PY
