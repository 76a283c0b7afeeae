#!/usr/bin/env bash
# Session 19 run 2. Run 1 found that the fence right after a tile's publication is worth
# 68 us at 2^28 f32 (without it, 753 us; after the look-back instead, 820). f2: HEAD's kernel
# with the same fence after the two other publications on the critical path (a block's
# aggregate, a block's inclusive prefix), by the publishing invocation only. f2v: f2, with
# the workgroup no longer waiting at a barrier for that invocation's fence before its
# look-back (the barrier and the other invocations' fences move to before the stores; the
# look-back's own barriers keep the order). r: HEAD's kernel with a chunked tile's aggregate
# computed before its rows' scans (each lane folds its vectors, one subgroup scan per chunk),
# the rows' scans after the publication. r2: r with the rows' scans after the look-back. rf2:
# r with f2's fences. Also r's single pass for f32 and f64 max (VKR_SCAN=single-pass; by
# default they take reduce-then-scan). Every scan of sum and max of
# f32, i32, f64 and i64 at 2^28, two rounds of base, f2, f2v, r, r2, rf2; torch's cumsum; f2v's
# and rf2's engine scan tests on the H200.
# Run as `. .gpu/env.sh; bash docs/data/session19/run2.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
[ -f .exp/bins.txz ] && tar xJf .exp/bins.txz -C .exp  # the binaries travel packed (the 64 MiB carry limit)
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
for round in 1 2; do for v in base f2 f2v r r2 rf2; do scan $v $round; done; done
VKR_SCAN=single-pass timeout 100 .exp/vkreduce-bench-r --scan-only --ops max --dtypes f32,f64 \
  --min-log2 28 --max-log2 28 --reps 20 --csv "$o/scan-r-sp.csv" > "$o/scan-r-sp.txt" 2>&1
echo "scan r single-pass max rc=$? $(date +%T) $(grep -c WRONG $o/scan-r-sp.txt) wrong"
grep -E "^scan" "$o/scan-r-sp.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo; pack
timeout 120 python3 bench/torch_bench.py --kinds scan --min-log2 28 --max-log2 28 --reps 20 \
  --dtypes f32,i32,f64,i64 --csv "$o/torch-scan.csv" > "$o/torch-scan.txt" 2>&1
echo "torch scan rc=$? $(date +%T)"; grep -E "^scan" "$o/torch-scan.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo; pack
for v in f2v rf2; do
  timeout 200 .exp/test_kern_scan-$v > "$o/test_kern_scan-$v.txt" 2>&1
  echo "test_kern_scan $v rc=$? $(date +%T)"; tail -n 2 "$o/test_kern_scan-$v.txt"; pack
done
kill $smi; pack
