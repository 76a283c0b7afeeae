#!/usr/bin/env bash
# Session 20 run 5: probe ex (the final build with, for exact operations, the earlier tiles'
# prefix joined to each lane's prefix once, so that each element's output costs one
# operation instead of two) against fin2: scans at 2^28 of sum, prod and max of i32, i64,
# u64 and max of f32, fin2 and ex interleaved by dtype; ex's engine scan tests on the H200.
# Run as `. .gpu/env.sh; bash docs/data/session20/run5.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
tar xJf .exp/bins.txz -C .exp
pack() { tar czf "$out/run.tgz" -C "$o" .; }
scan() { # build name ops dtypes
  timeout 100 .exp/vkreduce-bench-$1 --scan-only --ops $3 --dtypes $4 \
    --min-log2 28 --max-log2 28 --reps 20 --csv "$o/scan-$2.csv" > "$o/scan-$2.txt" 2>&1
  echo "scan $2 rc=$? $(date +%T) $(grep -c WRONG $o/scan-$2.txt) wrong"
  grep -E "^scan" "$o/scan-$2.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo
  pack
}
for d in i64 u64 i32; do
  scan fin2 fin2-$d sum,prod,max $d
  scan ex ex-$d sum,prod,max $d
done
scan ex ex-f32 max f32
scan fin2 fin2-f32 max f32
timeout 100 .exp/test_kern_scan-ex > "$o/test_kern_scan-ex.txt" 2>&1
echo "test_kern_scan ex rc=$? $(date +%T)"; tail -n 2 "$o/test_kern_scan-ex.txt"; pack
