#!/usr/bin/env bash
# Session 21 run 7 (run in session 22): the final build fin (sel of run S21-6, with lane 0 of
# the 64-bit scans that compute their row prefixes after the look-back storing through a call
# of its own again, as in a833700) against cur (a833700): every scan op and dtype at 2^28
# (cur, fin), then the rows that changed form in S21-6 again (fin, cur); torch's scans; the
# driver's registers for fin; fin's engine scan tests on the H200; the plot.
# Run as `. .gpu/env.sh; bash docs/data/session21/run7.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
tar xJf .exp/bins.txz -C .exp
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 200 > "$o/smi.csv" 2>&1 &
smi=$!
VKR_PIPELINE_STATS=1 timeout 100 .exp/vkreduce-bench-fin --scan-only --ops sum --dtypes f32 \
  --min-log2 10 --max-log2 10 --reps 1 > "$o/stats-fin.txt" 2>&1
grep -E "pipeline scan_chained_(f32|i32|f64|i64)_[a-z]* " "$o/stats-fin.txt" | cut -c1-60
scan() { # build name ops dtypes
  timeout 200 .exp/vkreduce-bench-$1 --scan-only --ops $3 --dtypes $4 \
    --min-log2 28 --max-log2 28 --reps 20 --csv "$o/scan-$2.csv" > "$o/scan-$2.txt" 2>&1
  echo "scan $2 rc=$? $(date +%T) $(grep -c WRONG $o/scan-$2.txt) wrong"
  grep -E "^scan" "$o/scan-$2.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo
  pack
}
all_ops=sum,prod,min,max; all_dtypes=f32,f64,i32,u32,i64,u64
scan cur cur-all $all_ops $all_dtypes
scan fin fin-all $all_ops $all_dtypes
timeout 150 python3 bench/torch_bench.py --kinds scan --min-log2 28 --max-log2 28 --reps 20 \
  --dtypes $all_dtypes --csv "$o/torch-scan.csv" > "$o/torch-scan.txt" 2>&1
echo "torch scan rc=$? $(date +%T)"; grep -E "^scan" "$o/torch-scan.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo; pack
python3 - "$o" <<'PY'
import csv, sys
o = sys.argv[1]
def us(path):
    return {(r['op'], r['dtype']): r['us'] for r in csv.DictReader(open(path)) if r['kind'] == 'scan' and r['n'] == str(1 << 28)}
cur, fin, torch = us(f'{o}/scan-cur-all.csv'), us(f'{o}/scan-fin-all.csv'), us(f'{o}/torch-scan.csv')
with open(f'{o}/scan-s21.csv', 'w') as f:
    f.write('scan,a833700_us,final_us,torch_us\n')
    for d in 'f32,f64,i32,u32,i64,u64'.split(','):
        for op in 'sum,prod,min,max'.split(','):
            f.write(f"{d} {op},{cur.get((op, d), '')},{fin.get((op, d), '')},{torch.get((op, d), '')}\n")
PY
python3 bench/plot_bars.py "$o/scan-s21.csv" "$o/scan-s21.png" --columns a833700_us,final_us,torch_us \
  --title 'Scans at 2^28 on the H200 (run S21-7): a833700, the final build, torch (cummin/cummax not timed at this size)'
pack
scan fin fin-2 sum,prod,max f32,i32,i64,u64
scan cur cur-2 sum,prod,max f32,i32,i64,u64
timeout 150 .exp/test_kern_scan-fin > "$o/test_kern_scan-fin.txt" 2>&1
echo "test_kern_scan fin rc=$? $(date +%T)"; tail -n 2 "$o/test_kern_scan-fin.txt"
kill $smi; pack
