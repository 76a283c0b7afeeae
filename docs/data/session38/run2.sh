#!/usr/bin/env bash
# Session 38 run 2 (the same H200 as run 1, warm): every scan op and dtype at 2^28 of rev
# (ca1a5e1), inclusive and exclusive, beside torch's cumsum and cumprod. Run as one command
# line through the device tool, with .gpu/ and .exp/ carried; reproduced here as a script.
# Usage: `. .gpu/env.sh; bash docs/data/session38/run2.sh $OUT`
OUT=${1:?}
mkdir -p /tmp/v; tar xJf .exp/s38rev.txz -C /tmp/v; b=/tmp/v/bench/vkreduce-bench
timeout 220 $b --scan-only --min-log2 28 --max-log2 28 --reps 20 --csv $OUT/scan-incl.csv > $OUT/scan-incl.txt 2>&1
echo incl rc=$? $(grep -c WRONG $OUT/scan-incl.txt) wrong
timeout 220 $b --scan-only --exclusive --min-log2 28 --max-log2 28 --reps 20 --csv $OUT/scan-excl.csv > $OUT/scan-excl.txt 2>&1
echo excl rc=$? $(grep -c WRONG $OUT/scan-excl.txt) wrong
timeout 60 python3 bench/torch_bench.py --kinds scan --dtypes f32,f64,i32,i64 --min-log2 28 --max-log2 28 --reps 20 \
  --csv $OUT/torch-scan.csv > $OUT/torch-scan.txt 2>&1
echo torch rc=$?
