#!/usr/bin/env bash
# Session 23 run 3: fin (the final shader: every lane's local scans before the look-back for
# 8-byte types, LOCAL_SCAN_EARLY; 32-bit types as before) for every scan op and dtype at
# 2^28, with r8 (8716055) for the sums and products of i64 and f64 and i64 max in the same
# run; fin's registers; torch's scans; fin's engine scan tests on the H200. (A short run: the
# session's device time was nearly spent; r8 and ls of every op are in runs S23-1, S23-2.)
# Run as `. .gpu/env.sh; bash docs/data/session23/run3.sh $OUT` with .gpu/ and .exp/s23.txz
# carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
b=/tmp/s23; mkdir -p $b; tar xJf .exp/s23.txz -C $b
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 200 > "$o/smi.csv" 2>&1 &
smi=$!
VKR_PIPELINE_STATS=1 timeout 60 $b/vkreduce-bench-fin --scan-only --ops sum --dtypes f32 \
  --min-log2 10 --max-log2 10 --reps 1 > "$o/stats-fin.txt" 2>&1
scan() { # build name ops dtypes
  timeout 130 $b/vkreduce-bench-$1 --scan-only --ops $3 --dtypes $4 \
    --min-log2 28 --max-log2 28 --reps 20 --csv "$o/scan-$2.csv" > "$o/scan-$2.txt" 2>&1
  echo "scan $2 rc=$? $(date +%T) $(grep -c WRONG $o/scan-$2.txt) wrong"
  grep -E "^scan" "$o/scan-$2.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo
  pack
}
scan fin fin sum,prod,min,max f32,f64,i32,u32,i64,u64
scan r8 r8 sum,prod,max i64,f64
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
fin, r8, torch = us(f'{o}/scan-fin.csv'), us(f'{o}/scan-r8.csv'), us(f'{o}/torch-scan.csv')
with open(f'{o}/scan-s23.csv', 'w') as f:
    f.write('scan,8716055_us,final_us,torch_us\n')
    for d in 'f32,i32,f64,i64,u64'.split(','):
        for op in 'sum,prod,min,max'.split(','):
            if d in ('f32', 'i32') and op != 'sum':
                continue
            f.write(f"{d} {op},{r8.get((op, d), '')},{fin.get((op, d), '')},{torch.get((op, d), '')}\n")
PY2
python3 bench/plot_bars.py "$o/scan-s23.csv" "$o/scan-s23.png" --columns 8716055_us,final_us,torch_us \
  --title 'Scans at 2^28 on the H200 (run S23-3): 8716055 where timed, the final build, torch'
pack
timeout 70 $b/test_kern_scan-fin > "$o/test_kern_scan-fin.txt" 2>&1
echo "test_kern_scan fin rc=$? $(date +%T)"; tail -n 2 "$o/test_kern_scan-fin.txt"
kill $smi; pack
