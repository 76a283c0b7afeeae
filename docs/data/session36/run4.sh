#!/usr/bin/env bash
# Session 36 run 4: the f64 sum and product scans of the final build of session 35 (new1 =
# d170753, with the review's signed-zero fixes in scan_chained.comp, never timed) against
# session 34's (base34 = 6f3ff33), inclusive and exclusive, two rounds, at 2^28; torch's
# cumsum and cumprod of f64 in the same run; the copy kernel through vkreduce-bench's rows.
# Run as `. .gpu/env.sh; bash docs/data/session36/run4.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; o=/tmp/r4; mkdir -p $o
for v in base34 new1; do mkdir -p /tmp/$v; tar xJf .exp/s36$v.txz -C /tmp/$v; done
pack() { tar czf "$out/run.tgz" -C "$o" .; }
scan() { # name build extra
  timeout 120 /tmp/$2/bench/vkreduce-bench --scan-only $3 --ops sum,prod --dtypes f64 \
    --min-log2 28 --max-log2 28 --reps 20 --csv "$o/scan-$1.csv" > "$o/scan-$1.txt" 2>&1
  echo "scan $1 rc=$? $(grep -c WRONG $o/scan-$1.txt) wrong: $(grep -E '^scan' $o/scan-$1.txt | awk '{print $2, $3, $5}' | tr '\n' ';')"
  pack
}
for round in 1 2; do
  scan base$round base34 ""
  scan new$round new1 ""
  scan base-x$round base34 --exclusive
  scan new-x$round new1 --exclusive
done
timeout 120 python3 bench/torch_bench.py --kinds scan --dtypes f64 --min-log2 28 --max-log2 28 --reps 20 \
  --csv "$o/torch-scan.csv" > "$o/torch-scan.txt" 2>&1
echo "torch rc=$? $(grep -E 'cum' $o/torch-scan.txt | tr '\n' ';')"
grep -iE 'copy' $o/scan-new1.txt | head -3
pack
