#!/usr/bin/env bash
# Session 37 run 1: blocked lanes (scan_chained.comp's LANES_BLOCKED, VKR_SCAN_LANES=blocked)
# against the default rows, one build (new = this session's first commit), at 2^28: sums and
# products of f64 and i64, inclusive and exclusive, in alternation; blocked at 16 rows for
# i64; i64 min and max; f32 and i32 sums and products; torch's cumsum and cumprod in the same run; the copy
# kernel through vkreduce-bench's rows.
# Run as `. .gpu/env.sh; bash docs/data/session37/run1.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; o=/tmp/r1; mkdir -p $o /tmp/new
tar xJf .exp/s37new.txz -C /tmp/new
pack() { tar czf "$out/run.tgz" -C "$o" .; }
scan() { # name dtypes lanes extra...
  local name=$1 dtypes=$2 lanes=$3; shift 3
  VKR_SCAN_LANES=$lanes timeout 120 /tmp/new/bench/vkreduce-bench --scan-only "$@" --ops ${OPS:-sum,prod} \
    --dtypes $dtypes --min-log2 28 --max-log2 28 --reps 20 --csv "$o/scan-$name.csv" > "$o/scan-$name.txt" 2>&1
  echo "$name rc=$? $(grep -c WRONG $o/scan-$name.txt) wrong: $(grep -E '^scan' $o/scan-$name.txt | awk '{print $2, $3, $5}' | tr '\n' ';')"
  pack
}
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
for round in 1 2; do
  scan rows64-$round f64,i64 rows
  scan blocked64-$round f64,i64 blocked
done
scan rows64-x f64,i64 rows --exclusive
scan blocked64-x f64,i64 blocked --exclusive
export VKR_SCAN_CHUNK_ROWS=16; scan blocked-i64-16 i64 blocked
export VKR_SCAN_CHUNK_ROWS=12; scan blocked-64-12 f64,i64 blocked
unset VKR_SCAN_CHUNK_ROWS
export OPS=min,max; scan rows-i64-minmax i64 rows; scan blocked-i64-minmax i64 blocked; unset OPS
scan rows32 f32,i32 rows
scan blocked32 f32,i32 blocked
timeout 150 python3 bench/torch_bench.py --kinds scan --dtypes f32,f64,i64 --min-log2 28 --max-log2 28 --reps 20 \
  --csv "$o/torch-scan.csv" > "$o/torch-scan.txt" 2>&1
echo "torch rc=$? $(grep -E 'cum' $o/torch-scan.txt | tr '\n' ';')"
grep -iE 'copy|^device' $o/scan-rows64-1.txt | head -3
pack
