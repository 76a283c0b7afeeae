#!/usr/bin/env bash
# Session 25 run 3: the final build "g" (rows per op and dtype from runs S25-1 and S25-2: 10
# for the i64 and u64 sums, 9 for every min and max but f64's, 9 for the f32 sum and product,
# 14 for the f64 sum and product and the 64-bit integer products, 8 for the rest) against
# ce19fea ("fin": 8 rows everywhere) in the same run, every scan op and dtype at 2^28; torch's
# scans; g's registers and engine scan tests on the H200.
# Run as `. .gpu/env.sh; bash docs/data/session25/run3.sh $OUT` with .gpu/ and .exp/s25g.txz
# carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
b=/tmp/s25g; mkdir -p $b; tar xJf .exp/s25g.txz -C $b
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 200 > "$o/smi.csv" 2>&1 &
smi=$!
VKR_PIPELINE_STATS=1 timeout 60 $b/vkreduce-bench-g --scan-only --ops sum --dtypes f32 --min-log2 10 \
  --max-log2 10 --reps 1 2>&1 | grep scan_chained_ | sed 's/Binary.*Local/Local/' > "$o/stats-g.txt"
scan() { # build name ops dtypes
  timeout 130 $b/vkreduce-bench-$1 --scan-only --ops $3 --dtypes $4 \
    --min-log2 28 --max-log2 28 --reps 20 --csv "$o/scan-$2.csv" > "$o/scan-$2.txt" 2>&1
  echo "scan $2 rc=$? $(date +%T) $(grep -c WRONG $o/scan-$2.txt) wrong"
  grep -E "^scan" "$o/scan-$2.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo
  pack
}
scan g g sum,prod,min,max f32,f64,i32,u32,i64,u64
scan fin fin sum,prod,min,max f32,f64,i32,u32,i64,u64
timeout 60 python3 bench/torch_bench.py --kinds scan --min-log2 28 --max-log2 28 --reps 20 \
  --dtypes f32,f64,i32,i64 --csv "$o/torch-scan.csv" > "$o/torch-scan.txt" 2>&1
echo "torch scan rc=$? $(date +%T)"; grep -E "^scan" "$o/torch-scan.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo; pack
python3 - "$o" <<'PY'
import csv, sys
o = sys.argv[1]
def us(path):
    try:
        return {(r['op'], r['dtype']): r['us'] for r in csv.DictReader(open(path)) if r['kind'] == 'scan'}
    except OSError:
        return {}
fin, g, torch = us(f'{o}/scan-fin.csv'), us(f'{o}/scan-g.csv'), us(f'{o}/torch-scan.csv')
with open(f'{o}/scan-s25.csv', 'w') as f:
    f.write('scan,ce19fea_us,final_us,torch_us\n')
    for d in 'f32,i32,u32,f64,i64,u64'.split(','):
        for op in 'sum,prod,min,max'.split(','):
            f.write(f"{d} {op},{fin.get((op, d), '')},{g.get((op, d), '')},{torch.get((op, d), '')}\n")
PY
python3 bench/plot_bars.py "$o/scan-s25.csv" "$o/scan-s25.png" --columns ce19fea_us,final_us,torch_us \
  --title 'Scans at 2^28 on the H200 (run S25-3): ce19fea (8 rows), rows per op and dtype, torch'
pack
timeout 90 $b/test_kern_scan-g > "$o/test_kern_scan-g.txt" 2>&1
echo "test_kern_scan g rc=$? $(date +%T)"; tail -n 2 "$o/test_kern_scan-g.txt"
kill $smi; pack
