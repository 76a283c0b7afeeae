#!/usr/bin/env bash
# Session 20 run 4: the final build fin2 (tiles by workgroup id for every dtype on GPUs, the
# 32-bit kernels taking their id through shared memory: probe ws of run S20-3) against
# 1488f7a (base): every scan op and dtype at 2^28 (base, fin2, then fin2 and base again for
# sum and max of four dtypes), f32 and f64 sums from 2^20 to 2^27, torch's scans, the
# driver's registers for fin2's single pass, fin2's engine scan tests on the H200, the plot.
# Run as `. .gpu/env.sh; bash docs/data/session20/run4.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
tar xJf .exp/bins.txz -C .exp
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 200 > "$o/smi.csv" 2>&1 &
smi=$!
VKR_PIPELINE_STATS=1 timeout 100 .exp/vkreduce-bench-fin2 --scan-only --ops sum --dtypes f32 \
  --min-log2 10 --max-log2 10 --reps 1 > "$o/stats-fin2.txt" 2>&1
grep -E "pipeline scan_chained_(f32|i32|f64|i64)_(sum|max) " "$o/stats-fin2.txt" | cut -c1-70
scan() { # build name ops dtypes [min-log2]
  timeout 200 .exp/vkreduce-bench-$1 --scan-only --ops $3 --dtypes $4 \
    --min-log2 ${5:-28} --max-log2 28 --reps 20 --csv "$o/scan-$2.csv" > "$o/scan-$2.txt" 2>&1
  echo "scan $2 rc=$? $(date +%T) $(grep -c WRONG $o/scan-$2.txt) wrong"
  grep -E "^scan" "$o/scan-$2.txt" | awk '{print $2, $3, $4, $5}' | tr '\n' ';'; echo
  pack
}
all_ops=sum,prod,min,max; all_dtypes=f32,f64,i32,u32,i64,u64
scan base base-all $all_ops $all_dtypes
scan fin2 fin2-all $all_ops $all_dtypes
scan fin2 fin2-2 sum,max f32,i32,f64,i64
scan base base-2 sum,max f32,i32,f64,i64
scan fin2 fin2-sizes sum f32,f64 20
scan base base-sizes sum f32,f64 20
timeout 150 python3 bench/torch_bench.py --kinds scan --min-log2 28 --max-log2 28 --reps 20 \
  --dtypes $all_dtypes --csv "$o/torch-scan.csv" > "$o/torch-scan.txt" 2>&1
echo "torch scan rc=$? $(date +%T)"; grep -E "^scan" "$o/torch-scan.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo; pack
timeout 150 .exp/test_kern_scan-fin2 > "$o/test_kern_scan-fin2.txt" 2>&1
echo "test_kern_scan fin2 rc=$? $(date +%T)"; tail -n 2 "$o/test_kern_scan-fin2.txt"; pack
python3 - "$o" <<'PY'
import csv, sys
o = sys.argv[1]
def us(path):
    return {(r['op'], r['dtype']): r['us'] for r in csv.DictReader(open(path)) if r['kind'] == 'scan' and r['n'] == str(1 << 28)}
base, fin, torch = us(f'{o}/scan-base-all.csv'), us(f'{o}/scan-fin2-all.csv'), us(f'{o}/torch-scan.csv')
with open(f'{o}/scan-s20.csv', 'w') as f:
    f.write('scan,base_us,final_us,torch_us\n')
    for d in 'f32,f64,i32,u32,i64,u64'.split(','):
        for op in 'sum,prod,min,max'.split(','):
            f.write(f"{d} {op},{base.get((op, d), '')},{fin.get((op, d), '')},{torch.get((op, d), '')}\n")
PY
python3 bench/plot_bars.py "$o/scan-s20.csv" "$o/scan-s20.png" --columns base_us,final_us,torch_us \
  --title 'Scans at 2^28 on the H200 (run S20-4): 1488f7a (base), the final build, torch (cummin/cummax not timed at this size)'
kill $smi; pack
