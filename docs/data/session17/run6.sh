#!/usr/bin/env bash
# Session 17 run 6. B = 2208a9d plus min and max by atomics (reduce.comp's ATOMIC_EXTREMES:
# each workgroup takes its value into a table word by an atomic max, waits for the answer,
# then counts its arrival; the last one reads the word again); B-p = the same binary with
# VKR_REDUCE=partials (min and max with flagged or fenced partials as before, and no summed
# arrivals). B's reduction tests; registers; min, max (and sum, count) of f32, i32, f64,
# i64, 2^16 to 2^26, two rounds interleaved. Run as `. .gpu/env.sh; bash
# docs/data/session17/run6.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
VKR_COMPILE_ON_FIRST_USE=1 timeout 60 .exp/test_kern_reduce-B > "$o/test_kern_reduce-B.txt" 2>&1
echo "test_kern_reduce B rc=$? $(date +%T) $(grep -E 'PASSED|FAILED' "$o/test_kern_reduce-B.txt" | tr '\n' ' ')"
VKR_COMPILE_ON_FIRST_USE=1 VKR_PIPELINE_STATS=1 timeout 40 .exp/vkreduce-bench-B --reduce-only --ops min,max \
  --dtypes f32,i32,f64,i64 --min-log2 20 --max-log2 20 --reps 2 > "$o/stats-B.txt" 2>&1
echo "B: $(grep -E 'pipeline reduce_(extreme_)?(f32|i32|f64|i64)_(min|max)(_one)? ' "$o/stats-B.txt" | sed -E 's/pipeline ([a-z0-9_]+) .*Register Count=([0-9]+).*/\1=\2/' | tr '\n' ' ')"
pack
R="--reduce-only --ops min,max,sum --dtypes f32,i32,f64,i64 --min-log2 16 --max-log2 26 --reps 20"
for round in 1 2; do
  for v in B B-p; do
    env=X=1; [ $v = B-p ] && env=VKR_REDUCE=partials
    env $env timeout 75 .exp/vkreduce-bench-B $R --csv "$o/r-$v-$round.csv" > "$o/r-$v-$round.txt" 2>&1
    echo "$v $round rc=$? $(date +%T) $(grep -c WRONG $o/r-$v-$round.txt) wrong"
  done
  pack
done
python3 - "$o" <<'PY'
import csv, sys
def load(v, r):
    return {(x['op'], x['dtype'], x['n']): (float(x['us']), float(x['of_read_same_bytes'])) for x in csv.DictReader(open(f'{sys.argv[1]}/r-{v}-{r}.csv')) if x['kind'] == 'reduce'}
try:
    runs = {v: [load(v, r) for r in (1, 2)] for v in ('B', 'B-p')}
    b, p = runs['B'], runs['B-p']
    for op in ('min', 'max', 'sum'):
        ks = [k for k in p[0] if k[0] == op]
        ratios = [(b[0][k][0] + b[1][k][0]) / (p[0][k][0] + p[1][k][0]) for k in ks]
        print(f'{op}: B mean time / B-p: {sum(ratios) / len(ratios):.4f}')
    for k in sorted(p[0], key=lambda k: (k[0], k[1], int(k[2]))):
        if k[0] != 'sum' and int(k[2]) in (1 << 16, 1 << 20, 1 << 22, 1 << 23, 1 << 24, 1 << 25, 1 << 26):
            cells = ' '.join(f'{v} {(runs[v][0][k][0] + runs[v][1][k][0]) / 2:.2f} ({(runs[v][0][k][1] + runs[v][1][k][1]) / 2:.3f})' for v in ('B', 'B-p'))
            print(f'  {k[0]} {k[1]} 2^{int(k[2]).bit_length() - 1}: {cells}')
except Exception as e:
    print('summary failed:', e)
PY
