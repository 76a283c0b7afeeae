#!/usr/bin/env bash
# Session 20 run 2: the final build (fin: tiles by workgroup id for 64-bit dtypes, lane-fold
# aggregates for 64-bit min and max, f32 min and max single-pass) against HEAD before it
# (base, 1488f7a): every scan op and dtype at 2^28, then sum and max of f32, i32, f64, i64
# again in the other order; fin built with 4 and 6 chunk rows (r4, r6; 64-bit sum and max);
# torch's scans; fin's engine scan tests on the H200; the plot of the first table.
# Run as `. .gpu/env.sh; bash docs/data/session20/run2.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
tar xJf .exp/bins.txz -C .exp
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 200 > "$o/smi.csv" 2>&1 &
smi=$!
scan() { # build name ops dtypes
  timeout 200 .exp/vkreduce-bench-$1 --scan-only --ops $3 --dtypes $4 \
    --min-log2 28 --max-log2 28 --reps 20 --csv "$o/scan-$2.csv" > "$o/scan-$2.txt" 2>&1
  echo "scan $2 rc=$? $(date +%T) $(grep -c WRONG $o/scan-$2.txt) wrong"
  grep -E "^scan" "$o/scan-$2.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo
  pack
}
all_ops=sum,prod,min,max; all_dtypes=f32,f64,i32,u32,i64,u64
scan base base-all $all_ops $all_dtypes
scan fin fin-all $all_ops $all_dtypes
scan fin fin-2 sum,max f32,i32,f64,i64
scan base base-2 sum,max f32,i32,f64,i64
scan r4 r4 sum,max f64,i64
scan r6 r6 sum,max f64,i64
timeout 150 python3 bench/torch_bench.py --kinds scan --min-log2 28 --max-log2 28 --reps 20 \
  --dtypes $all_dtypes --csv "$o/torch-scan.csv" > "$o/torch-scan.txt" 2>&1
echo "torch scan rc=$? $(date +%T)"; grep -E "^scan" "$o/torch-scan.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo; pack
timeout 150 .exp/test_kern_scan-fin > "$o/test_kern_scan-fin.txt" 2>&1
echo "test_kern_scan fin rc=$? $(date +%T)"; tail -n 2 "$o/test_kern_scan-fin.txt"; pack
# One row per op and dtype: base, fin and torch at 2^28, for bench/plot_bars.py.
python3 - "$o" <<'PY'
import csv, sys
o = sys.argv[1]
def us(path):
    try:
        return {(r['op'], r['dtype']): r['us'] for r in csv.DictReader(open(path)) if r['kind'] == 'scan'}
    except OSError:
        return {}
base, fin, torch = us(f'{o}/scan-base-all.csv'), us(f'{o}/scan-fin-all.csv'), us(f'{o}/torch-scan.csv')
with open(f'{o}/scan-s20.csv', 'w') as f:
    f.write('scan,base_us,final_us,torch_us\n')
    for d in 'f32,f64,i32,u32,i64,u64'.split(','):
        for op in 'sum,prod,min,max'.split(','):
            f.write(f"{d} {op},{base.get((op, d), '')},{fin.get((op, d), '')},{torch.get((op, d), '')}\n")
PY
python3 bench/plot_bars.py "$o/scan-s20.csv" "$o/scan-s20.png" --columns base_us,final_us,torch_us \
  --title 'Scans at 2^28 on the H200 (run S20-2): 1488f7a (base), the final build, torch (cummin/cummax not timed at this size)'
kill $smi; pack
