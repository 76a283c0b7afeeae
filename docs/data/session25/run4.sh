#!/usr/bin/env bash
# Session 25 run 4: exclusive scans (vkreduce-bench --exclusive, new this session) of the
# build "x" (the final table, with the exclusive f32 min and max kept at 8 rows, where 9 gave
# them 80 registers in run S25-3's statistics): the exclusive f32 min and max at 8 and 9
# rows, then every exclusive op of f32, i32, f64 and i64 with the table against 8 rows
# everywhere (VKR_SCAN_CHUNK_ROWS=8 picks the modules compiled at 8 rows, byte for byte
# ce19fea's).
# Run as `. .gpu/env.sh; bash docs/data/session25/run4.sh $OUT` with .gpu/ and .exp/s25x.txz
# carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
b=/tmp/s25x; mkdir -p $b; tar xJf .exp/s25x.txz -C $b
pack() { tar czf "$out/run.tgz" -C "$o" .; }
scan() { # name rows ops dtypes
  VKR_SCAN_CHUNK_ROWS=$2 timeout 130 $b/vkreduce-bench-x --scan-only --exclusive --ops $3 --dtypes $4 \
    --min-log2 28 --max-log2 28 --reps 20 --csv "$o/scan-$1.csv" > "$o/scan-$1.txt" 2>&1
  echo "scan $1 rc=$? $(date +%T) $(grep -c WRONG $o/scan-$1.txt) wrong"
  grep -E "^scan" "$o/scan-$1.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo
  pack
}
scan x-f32mm "" min,max f32
scan r9-f32mm 9 min,max f32
scan x "" sum,prod,min,max f32,i32,f64,i64
scan r8 8 sum,prod,min,max f32,i32,f64,i64
