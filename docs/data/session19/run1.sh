#!/usr/bin/env bash
# Session 19 run 1. The chunked single-pass scan's publication fence moved from before the
# look-back to before the stores (lf), against HEAD's kernel (base) and a probe with no fence
# at all (nf: unsafe for in-place scans with fallbacks, the bound). Every scan of sum and max
# of f32, i32, f64 and i64 at 2^28, interleaved base, lf, nf, lf, base; torch's cumsum; lf's
# engine scan tests on the H200; then min and max reductions of u32, u64, f32 and i32 (2^16
# to 2^26) by atomics against VKR_REDUCE=partials (base binary), two rounds.
# Run as `. .gpu/env.sh; bash docs/data/session19/run1.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 200 > "$o/smi.csv" 2>&1 &
smi=$!
scan() { # name round
  timeout 150 .exp/vkreduce-bench-$1 --scan-only --ops sum,max --dtypes f32,i32,f64,i64 \
    --min-log2 28 --max-log2 28 --reps 20 --csv "$o/scan-$1-$2.csv" > "$o/scan-$1-$2.txt" 2>&1
  echo "scan $1 round $2 rc=$? $(date +%T) $(grep -c WRONG $o/scan-$1-$2.txt) wrong"
  grep -E "^scan" "$o/scan-$1-$2.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo
  pack
}
scan base 1; scan lf 1; scan nf 1; scan lf 2; scan base 2
timeout 120 python3 bench/torch_bench.py --kinds scan --min-log2 28 --max-log2 28 --reps 20 \
  --dtypes f32,i32,f64,i64 --csv "$o/torch-scan.csv" > "$o/torch-scan.txt" 2>&1
echo "torch scan rc=$? $(date +%T)"; grep -E "^scan" "$o/torch-scan.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo; pack
timeout 200 .exp/test_kern_scan-lf > "$o/test_kern_scan-lf.txt" 2>&1
echo "test_kern_scan lf rc=$? $(date +%T)"; tail -n 3 "$o/test_kern_scan-lf.txt"; pack
for round in 1 2; do
  for mode in atomics partials; do
    if [ $mode = partials ]; then export VKR_REDUCE=partials; else unset VKR_REDUCE; fi
    timeout 150 .exp/vkreduce-bench-base --reduce-only --ops min,max --dtypes u32,u64,f32,i32 \
      --min-log2 16 --max-log2 26 --reps 20 --csv "$o/minmax-$mode-$round.csv" > "$o/minmax-$mode-$round.txt" 2>&1
    echo "minmax $mode $round rc=$? $(date +%T) $(grep -c WRONG $o/minmax-$mode-$round.txt) wrong"; pack
  done
done
unset VKR_REDUCE
kill $smi; pack
