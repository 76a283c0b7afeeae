#!/usr/bin/env bash
# Session 17 run 1. U = 1663db5 (e607c9b's kernels); S = U with the workgroup tree's last
# step by shuffles (subgroup 0 folds the subgroups' values by an xor butterfly, no serial
# fold by invocation 0 and no last barrier); W5, W10 = S with reductions in workgroups of 512
# and 1024 invocations (528 and 264 workgroups on the H200: fewer partials for the last
# workgroup to fold, one round of loads). Tests of S and W10; registers; reductions 2^16 to
# 2^26, two rounds interleaved. Run as `. .gpu/env.sh; bash docs/data/session17/run1.sh $OUT`
# with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
for v in S W10; do
  VKR_COMPILE_ON_FIRST_USE=1 timeout 60 .exp/test_kern_reduce-$v > "$o/test_kern_reduce-$v.txt" 2>&1
  echo "test_kern_reduce $v rc=$? $(date +%T) $(grep -E 'PASSED|FAILED' "$o/test_kern_reduce-$v.txt" | tr '\n' ' ')"
done
for v in U S W5 W10; do
  VKR_COMPILE_ON_FIRST_USE=1 VKR_PIPELINE_STATS=1 timeout 40 .exp/vkreduce-bench-$v --reduce-only --ops sum,max,count \
    --dtypes f32,f64,i32 --min-log2 20 --max-log2 20 --reps 2 > "$o/stats-$v.txt" 2>&1
  echo "$v: $(grep -E 'pipeline (reduce|count)_(f32|f64|i32)(_sum|_max)?(_one)? ' "$o/stats-$v.txt" | sed -E 's/pipeline ([a-z0-9_]+) .*Register Count=([0-9]+).*/\1=\2/' | tr '\n' ' ')"
done
pack
R="--reduce-only --ops sum,max,count --dtypes f32,i32,f64 --min-log2 16 --max-log2 26 --reps 20"
for round in 1 2; do
  for v in U S W5 W10; do
    timeout 75 .exp/vkreduce-bench-$v $R --csv "$o/r-$v-$round.csv" > "$o/r-$v-$round.txt" 2>&1
    echo "$v $round rc=$? $(date +%T) $(grep -c WRONG $o/r-$v-$round.txt) wrong"
  done
  pack
done
python3 - "$o" <<'PY'
import csv, sys
def load(v, r):
    return {(x['op'], x['dtype'], x['n']): float(x['us']) for x in csv.DictReader(open(f'{sys.argv[1]}/r-{v}-{r}.csv')) if x['kind'] == 'reduce'}
try:
    u = [load('U', r) for r in (1, 2)]
    for v in ('S', 'W5', 'W10'):
        o = [load(v, r) for r in (1, 2)]
        ratios = [(o[0][k] + o[1][k]) / (u[0][k] + u[1][k]) for k in u[0]]
        print(f'{v} mean time / U: {sum(ratios) / len(ratios):.4f}')
        for k in sorted(u[0], key=lambda k: (k[0], k[1], int(k[2]))):
            if int(k[2]) in (1 << 16, 1 << 20, 1 << 23, 1 << 24, 1 << 26):
                print(f'  {k[0]} {k[1]} 2^{int(k[2]).bit_length() - 1}: U {(u[0][k] + u[1][k]) / 2:.2f} {v} {(o[0][k] + o[1][k]) / 2:.2f}')
except Exception as e:
    print('summary failed:', e)
PY
