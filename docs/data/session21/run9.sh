#!/usr/bin/env bash
# Session 21 run 9 (run in session 22): lf (probe-lf.patch on f459972: sums and products of
# i64 and u64 publish a chunked tile's aggregate from each lane's fold and one subgroup scan,
# before the rows' scans, as their min and max do; exact in any shape) against fin (92774f1,
# the same shaders as f459972): the driver's registers for lf; sum, prod and max of i64 and
# u64 at 2^28, two rounds interleaved (fin, lf, lf, fin); torch's int64 scans; lf's engine
# scan tests on the H200.
# Run as `. .gpu/env.sh; bash docs/data/session21/run9.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
VKR_PIPELINE_STATS=1 timeout 100 .exp/vkreduce-bench-lf --scan-only --ops sum --dtypes f32 \
  --min-log2 10 --max-log2 10 --reps 1 > "$o/stats-lf.txt" 2>&1
grep -E "pipeline scan_chained_(i64|u64)_[a-z]* " "$o/stats-lf.txt" | cut -c1-60
scan() { # build name
  timeout 200 .exp/vkreduce-bench-$1 --scan-only --ops sum,prod,max --dtypes i64,u64 \
    --min-log2 28 --max-log2 28 --reps 20 --csv "$o/scan-$2.csv" > "$o/scan-$2.txt" 2>&1
  echo "scan $2 rc=$? $(date +%T) $(grep -c WRONG $o/scan-$2.txt) wrong"
  grep -E "^scan" "$o/scan-$2.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo
  pack
}
scan fin fin-1; scan lf lf-1; scan lf lf-2; scan fin fin-2
timeout 100 python3 bench/torch_bench.py --kinds scan --min-log2 28 --max-log2 28 --reps 20 \
  --dtypes i64 --csv "$o/torch-scan.csv" > "$o/torch-scan.txt" 2>&1
echo "torch scan rc=$? $(date +%T)"; grep -E "^scan" "$o/torch-scan.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo; pack
timeout 100 .exp/test_kern_scan-lf > "$o/test_kern_scan-lf.txt" 2>&1
echo "test_kern_scan lf rc=$? $(date +%T)"; tail -n 2 "$o/test_kern_scan-lf.txt"
pack
