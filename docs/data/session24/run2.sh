#!/usr/bin/env bash
# Session 24 run 2: tab (chunk rows per op and dtype: 12 for the f64 sum and product and the
# i64 and u64 products from the build with specialized rows, 8 compiled in for the rest)
# against fin (ce19fea: 8 rows for everything) in the same run, every scan op and dtype at
# 2^28 (fin only where the rows changed, and two controls: the 8-row modules are the same
# SPIR-V); tab's registers; torch's scans; tab's engine scan tests on the H200; then the f64
# sum and the i64 product at 10, 14 and 16 rows and the f32 and i32 sums and products at 9
# (VKR_SCAN_CHUNK_ROWS).
# Run as `. .gpu/env.sh; bash docs/data/session24/run2.sh $OUT` with .gpu/ and .exp/s24b.txz
# carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
b=/tmp/s24b; mkdir -p $b; tar xJf .exp/s24b.txz -C $b
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 200 > "$o/smi.csv" 2>&1 &
smi=$!
VKR_PIPELINE_STATS=1 timeout 60 $b/vkreduce-bench-tab --scan-only --ops sum --dtypes f32 \
  --min-log2 10 --max-log2 10 --reps 1 > "$o/stats-tab.txt" 2>&1
scan() { # build name rows ops dtypes
  VKR_SCAN_CHUNK_ROWS=$3 timeout 130 $b/vkreduce-bench-$1 --scan-only --ops $4 --dtypes $5 \
    --min-log2 28 --max-log2 28 --reps 20 --csv "$o/scan-$2.csv" > "$o/scan-$2.txt" 2>&1
  echo "scan $2 rc=$? $(date +%T) $(grep -c WRONG $o/scan-$2.txt) wrong"
  grep -E "^scan" "$o/scan-$2.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo
  pack
}
scan tab tab "" sum,prod,min,max f32,f64,i32,u32,i64,u64
# The 8-row modules are byte-identical to fin's (same SPIR-V): fin runs the pipelines whose
# rows changed, and the f32 sum and max as controls.
scan fin fin "" sum,prod f64,i64,u64
scan fin fin-32 "" sum,max f32
timeout 60 python3 bench/torch_bench.py --kinds scan --min-log2 28 --max-log2 28 --reps 20 \
  --dtypes f32,f64,i32,i64 --csv "$o/torch-scan.csv" > "$o/torch-scan.txt" 2>&1
echo "torch scan rc=$? $(date +%T)"; grep -E "^scan" "$o/torch-scan.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo; pack
python3 - "$o" <<'PY2'
import csv, sys
o = sys.argv[1]
def us(path):
    try:
        return {(r['op'], r['dtype']): r['us'] for r in csv.DictReader(open(path)) if r['kind'] == 'scan'}
    except OSError:
        return {}
fin, tab, torch = us(f'{o}/scan-fin.csv'), us(f'{o}/scan-tab.csv'), us(f'{o}/torch-scan.csv')
fin.update(us(f'{o}/scan-fin-32.csv'))
with open(f'{o}/scan-s24.csv', 'w') as f:
    f.write('scan,ce19fea_us,final_us,torch_us\n')
    for d in 'f32,i32,f64,i64,u64'.split(','):
        for op in 'sum,prod,min,max'.split(','):
            if d in ('f32', 'i32') and op in ('min', 'max'):
                continue
            f.write(f"{d} {op},{fin.get((op, d), '')},{tab.get((op, d), '')},{torch.get((op, d), '')}\n")
PY2
python3 bench/plot_bars.py "$o/scan-s24.csv" "$o/scan-s24.png" --columns ce19fea_us,final_us,torch_us \
  --title 'Scans at 2^28 on the H200 (run S24-2): ce19fea (8 rows), rows per op and dtype, torch'
pack
timeout 90 $b/test_kern_scan-tab > "$o/test_kern_scan-tab.txt" 2>&1
echo "test_kern_scan tab rc=$? $(date +%T)"; tail -n 2 "$o/test_kern_scan-tab.txt"
for rows in 10 14 16; do
  scan tab tab-r$rows $rows sum f64
  scan tab tab-r$rows-i64 $rows prod i64
done
scan tab tab-r9-32 9 sum,prod f32,i32
kill $smi; pack
