#!/usr/bin/env bash
# Session 4, run 7: coalesced tiles in reduce-then-scan (scan.comp), every op and dtype at
# 2^28, beside torch; the scan tests on the H200 first.
set -u
O=${1:?}; o=$(mktemp -d); b=build-release
$b/tests/test_kern_scan > $o/test_kern_scan.txt 2>&1; echo "test_kern_scan rc=$?"
$b/bench/vkreduce-bench --scan-only --min-log2 28 --max-log2 28 --reps 10 --csv $o/scan.csv > $o/scan.txt 2>&1; echo "bench rc=$?"
grep -E "^(device|scan)" $o/scan.txt
python3 bench/torch_bench.py --min-log2 28 --max-log2 28 --dtypes f32,f64,i32,i64 --reps 10 --cummin-max-log2 10 --csv $o/torch.csv > $o/torch.txt 2>&1; echo "torch rc=$?"
grep scan $o/torch.txt
tar czf $O/run7.tgz -C $o .
