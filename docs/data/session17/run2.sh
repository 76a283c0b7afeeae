#!/usr/bin/env bash
# Session 17 run 2. A = the working tree with summed arrivals (one-dispatch count-if of every
# dtype and sums of i32 and u32 add their sum and their arrival to one 64-bit word: no
# partials); the same binary with VKR_REDUCE=partials runs them with flagged partials as
# before (A-p). U = 1663db5 as a check that A-p is U. A's reduction tests; registers;
# reductions 2^16 to 2^26, two rounds interleaved. Run as `. .gpu/env.sh; bash
# docs/data/session17/run2.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
VKR_COMPILE_ON_FIRST_USE=1 timeout 60 .exp/test_kern_reduce-A > "$o/test_kern_reduce-A.txt" 2>&1
echo "test_kern_reduce A rc=$? $(date +%T) $(grep -E 'PASSED|FAILED' "$o/test_kern_reduce-A.txt" | tr '\n' ' ')"
VKR_COMPILE_ON_FIRST_USE=1 VKR_PIPELINE_STATS=1 timeout 40 .exp/vkreduce-bench-A --reduce-only --ops sum,count \
  --dtypes f32,i32,u32 --min-log2 20 --max-log2 20 --reps 2 > "$o/stats-A.txt" 2>&1
echo "A: $(grep -E 'pipeline (reduce|count)[a-z_]*(f32|i32|u32)(_sum)?(_one)? ' "$o/stats-A.txt" | sed -E 's/pipeline ([a-z0-9_]+) .*Register Count=([0-9]+).*/\1=\2/' | tr '\n' ' ')"
grep -m1 '^device:' "$o/stats-A.txt"
pack
R="--reduce-only --ops sum,max,count --dtypes f32,i32,u32,f64 --min-log2 16 --max-log2 26 --reps 20"
for round in 1 2; do
  for v in A A-p U; do
    env=""; bin=$v
    if [ "$v" = A-p ]; then env="VKR_REDUCE=partials"; bin=A; fi
    env $env timeout 75 .exp/vkreduce-bench-$bin $R --csv "$o/r-$v-$round.csv" > "$o/r-$v-$round.txt" 2>&1
    echo "$v $round rc=$? $(date +%T) $(grep -c WRONG $o/r-$v-$round.txt) wrong"
  done
  pack
done
python3 - "$o" <<'PY'
import csv, sys
def load(v, r):
    return {(x['op'], x['dtype'], x['n']): (float(x['us']), float(x['of_read_same_bytes'])) for x in csv.DictReader(open(f'{sys.argv[1]}/r-{v}-{r}.csv')) if x['kind'] == 'reduce'}
try:
    runs = {v: [load(v, r) for r in (1, 2)] for v in ('A', 'A-p', 'U')}
    base = runs['A-p']
    for v in ('A', 'U'):
        o = runs[v]
        ratios = [(o[0][k][0] + o[1][k][0]) / (base[0][k][0] + base[1][k][0]) for k in base[0]]
        print(f'{v} mean time / A-p: {sum(ratios) / len(ratios):.4f}')
    for k in sorted(base[0], key=lambda k: (k[0], k[1], int(k[2]))):
        if int(k[2]) in (1 << 16, 1 << 20, 1 << 22, 1 << 23, 1 << 24, 1 << 25, 1 << 26):
            cells = ' '.join(f'{v} {(runs[v][0][k][0] + runs[v][1][k][0]) / 2:.2f} ({(runs[v][0][k][1] + runs[v][1][k][1]) / 2:.3f})' for v in ('A', 'A-p', 'U'))
            print(f'  {k[0]} {k[1]} 2^{int(k[2]).bit_length() - 1}: {cells}')
except Exception as e:
    print('summary failed:', e)
PY
