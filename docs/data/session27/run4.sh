#!/usr/bin/env bash
# Session 27 run 4: the series run 3 did not reach before its time limits (the same binary):
# inclusive i64 prod, min, max and every u64 scan; exclusive i64 min, max and every u64 scan.
# Run as `. .gpu/env.sh; bash docs/data/session27/run4.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
b=/tmp/s27b; mkdir -p $b; tar xJf .exp/s27b.txz -C $b
pack() { tar czf "$out/run.tgz" -C "$o" .; }
s() { # name ops dtypes [--exclusive]
  timeout 80 $b/bench/vkreduce-bench --scan-only ${4:-} --ops $2 --dtypes $3 --min-log2 28 --max-log2 28 --reps 20 \
    --times --csv "$o/scan-$1.csv" > "$o/scan-$1.txt" 2>&1
  echo "scan $1 rc=$? $(date +%T) $(grep -c WRONG $o/scan-$1.txt) wrong"
  grep -E "^scan" "$o/scan-$1.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo; pack
}
s incl-u64 sum,prod,min,max u64
s excl-u64 sum,prod,min,max u64 --exclusive
s incl-i64 prod,min,max i64
s excl-i64 min,max i64 --exclusive
