#!/usr/bin/env bash
# Session 21 run 6 (run in session 22): the final build sel (a833700 with each lane's in-tile
# row prefixes computed before the look-back only where run S21-4/S21-5 measured it faster:
# i32/u32/i64/u64 sums, f32 min and max, f64 sum and product) against cur (a833700): every
# scan op and dtype at 2^28 (cur, sel), then sum, prod and max of every dtype again (sel,
# cur); torch's scans; the driver's registers for sel; sel's engine scan tests on the H200;
# the plot.
# Run as `. .gpu/env.sh; bash docs/data/session21/run6.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
tar xJf .exp/bins.txz -C .exp
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 200 > "$o/smi.csv" 2>&1 &
smi=$!
VKR_PIPELINE_STATS=1 timeout 100 .exp/vkreduce-bench-sel --scan-only --ops sum --dtypes f32 \
  --min-log2 10 --max-log2 10 --reps 1 > "$o/stats-sel.txt" 2>&1
grep -E "pipeline scan_chained_" "$o/stats-sel.txt" | cut -c1-70
scan() { # build name ops dtypes
  timeout 200 .exp/vkreduce-bench-$1 --scan-only --ops $3 --dtypes $4 \
    --min-log2 28 --max-log2 28 --reps 20 --csv "$o/scan-$2.csv" > "$o/scan-$2.txt" 2>&1
  echo "scan $2 rc=$? $(date +%T) $(grep -c WRONG $o/scan-$2.txt) wrong"
  grep -E "^scan" "$o/scan-$2.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo
  pack
}
all_ops=sum,prod,min,max; all_dtypes=f32,f64,i32,u32,i64,u64
scan cur cur-all $all_ops $all_dtypes
scan sel sel-all $all_ops $all_dtypes
timeout 150 python3 bench/torch_bench.py --kinds scan --min-log2 28 --max-log2 28 --reps 20 \
  --dtypes $all_dtypes --csv "$o/torch-scan.csv" > "$o/torch-scan.txt" 2>&1
echo "torch scan rc=$? $(date +%T)"; grep -E "^scan" "$o/torch-scan.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo; pack
python3 - "$o" <<'PY'
import csv, sys
o = sys.argv[1]
def us(path):
    return {(r['op'], r['dtype']): r['us'] for r in csv.DictReader(open(path)) if r['kind'] == 'scan' and r['n'] == str(1 << 28)}
cur, sel, torch = us(f'{o}/scan-cur-all.csv'), us(f'{o}/scan-sel-all.csv'), us(f'{o}/torch-scan.csv')
with open(f'{o}/scan-s21.csv', 'w') as f:
    f.write('scan,a833700_us,final_us,torch_us\n')
    for d in 'f32,f64,i32,u32,i64,u64'.split(','):
        for op in 'sum,prod,min,max'.split(','):
            f.write(f"{d} {op},{cur.get((op, d), '')},{sel.get((op, d), '')},{torch.get((op, d), '')}\n")
PY
python3 bench/plot_bars.py "$o/scan-s21.csv" "$o/scan-s21.png" --columns a833700_us,final_us,torch_us \
  --title 'Scans at 2^28 on the H200 (run S21-6): a833700, the final build, torch (cummin/cummax not timed at this size)'
pack
scan sel sel-2 sum,prod,max $all_dtypes
scan cur cur-2 sum,prod,max $all_dtypes
timeout 150 .exp/test_kern_scan-sel > "$o/test_kern_scan-sel.txt" 2>&1
echo "test_kern_scan sel rc=$? $(date +%T)"; tail -n 2 "$o/test_kern_scan-sel.txt"
kill $smi; pack
