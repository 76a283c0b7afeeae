#!/usr/bin/env bash
# Session 16 run 6. U = the one-dispatch pipelines as committed (run 5's U2); PU = U with the
# awaited tail (run 1's P on top of U: the grid's last workgroup folds the flagged partials as
# they land, no arrival counter); PUw = PU with VKR_REDUCE=flagged (8-byte accumulators
# flagged and awaited too). One round of each, 2^16 to 2^26; the build with the lowest mean
# time relative to U (by more than 1%) is then swept (U if none): its reduction tests where
# it is not U, every op and dtype 2^10 to 2^28 against the read kernel, torch's reductions
# over the same sizes, and the plot, drawn here. Run as `. .gpu/env.sh; bash
# docs/data/session16/run6.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > "$o/gpu.txt" 2>&1
R="--reduce-only --ops sum,max,count --dtypes f32,i32,f64 --min-log2 16 --max-log2 26 --reps 20"
envof() { [ $1 = PUw ] && echo VKR_REDUCE=flagged || echo X=1; }
binof() { [ $1 = U ] && echo U || echo PU; }
for v in U PU PUw; do
  env $(envof $v) timeout 60 .exp/vkreduce-bench-$(binof $v) $R --csv "$o/ab-$v.csv" > "$o/ab-$v.txt" 2>&1
  echo "$v rc=$? $(date +%T) $(grep -c WRONG $o/ab-$v.txt) wrong"
done
pack
win=$(python3 - "$o" <<'PY'
import csv, sys
def load(v):
    return {(r['op'], r['dtype'], r['n']): float(r['us']) for r in csv.DictReader(open(f'{sys.argv[1]}/ab-{v}.csv')) if r['kind'] == 'reduce'}
u = load('U'); best, best_v = 0.99, 'U'
for v in ('PU', 'PUw'):
    o = load(v); ratios = [o[k] / u[k] for k in u if k in o]
    m = sum(ratios) / len(ratios); print(f'{v} mean time / U: {m:.4f}', file=sys.stderr)
    if m < best: best, best_v = m, v
print(best_v)
PY
)
echo "swept: $win"; e=$(envof $win); b=$(binof $win)
if [ $win != U ]; then
  for pat in default 1; do
    p=X=1; [ $pat = 1 ] && p=VKR_REDUCE_PATIENCE=1
    env $e $p VKR_COMPILE_ON_FIRST_USE=1 timeout 60 .exp/test_kern_reduce-PU > "$o/test_kern_reduce-$pat.txt" 2>&1
    echo "test_kern_reduce PU $e patience=$pat rc=$? $(grep -E 'PASSED|FAILED' "$o/test_kern_reduce-$pat.txt" | tr '\n' ' ')"
  done
fi
env $e timeout 240 .exp/vkreduce-bench-$b --reduce-only --min-log2 10 --max-log2 28 --reps 20 \
  --csv "$o/reduce-all.csv" > "$o/reduce-all.txt" 2>&1
echo "reduce-all $win rc=$? $(date +%T) $(grep -c WRONG $o/reduce-all.txt) wrong; $(grep -o 'reduce partials: [a-z0-9 (),-]*' $o/reduce-all.txt)"; pack
timeout 150 python3 bench/torch_bench.py --kinds reduce --min-log2 10 --max-log2 28 --reps 20 \
  --csv "$o/torch-reduce.csv" > "$o/torch-reduce.txt" 2>&1; echo "torch rc=$? $(date +%T)"; pack
python3 docs/data/session16/plot_s16.py "$o" "$o" > "$o/plot.txt" 2>&1; echo "plot rc=$? $(tail -2 $o/plot.txt)"; pack
grep -E "^reduce" "$o/reduce-all.txt" | awk '$4 == "2^20" || $4 == "2^24" || $4 == "2^25" || $4 == "2^28" {print $2, $3, $4, $5, $NF}' | tr '\n' ';'
