#!/usr/bin/env bash
# Session 20 run 3: why tiles by workgroup id made 32-bit scans slower (run S20-1). The
# driver's registers per invocation for the single pass, of fin (84b4559) by default and
# with VKR_SCAN_TILES=workgroup, and of ws (fin with probe-ws.patch: the workgroup id passed
# through shared memory behind the same barrier as the counter's ticket); then scans at
# 2^28 of sum and max of f32 and i32 by fin (counter), fin by workgroup id and ws by
# workgroup id, two rounds interleaved; 64-bit sum and max by fin and ws at their default.
# Run as `. .gpu/env.sh; bash docs/data/session20/run3.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
tar xJf .exp/bins.txz -C .exp
pack() { tar czf "$out/run.tgz" -C "$o" .; }
stats() { # name build [env...]
  local name=$1 b=$2; shift 2
  env VKR_PIPELINE_STATS=1 "$@" timeout 100 .exp/vkreduce-bench-$b --scan-only --ops sum \
    --dtypes f32 --min-log2 10 --max-log2 10 --reps 1 > "$o/stats-$name.txt" 2>&1
  echo "stats $name rc=$?"; grep -E "pipeline scan_chained_(f32|i32|f64|i64)_(sum|max) " "$o/stats-$name.txt" | head -8
}
stats fin fin; stats fin-wg fin VKR_SCAN_TILES=workgroup; stats ws-wg ws VKR_SCAN_TILES=workgroup; pack
scan() { # name build ops dtypes [env...]
  local name=$1 b=$2 ops=$3 dt=$4; shift 4
  env "$@" timeout 150 .exp/vkreduce-bench-$b --scan-only --ops $ops --dtypes $dt \
    --min-log2 28 --max-log2 28 --reps 20 --csv "$o/scan-$name.csv" > "$o/scan-$name.txt" 2>&1
  echo "scan $name rc=$? $(date +%T) $(grep -c WRONG $o/scan-$name.txt) wrong"
  grep -E "^scan" "$o/scan-$name.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo
  pack
}
for r in 1 2; do
  scan fin-$r fin sum,max f32,i32
  scan fin-wg-$r fin sum,max f32,i32 VKR_SCAN_TILES=workgroup
  scan ws-wg-$r ws sum,max f32,i32 VKR_SCAN_TILES=workgroup
done
scan fin-64 fin sum,max f64,i64
scan ws-64 ws sum,max f64,i64
pack
