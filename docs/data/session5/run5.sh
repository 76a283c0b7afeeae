#!/usr/bin/env bash
# Session 5, run 5: probe "park" (.exp/bench-park): the single-pass tile kept in a 16 KiB
# shared-memory stage through the look-back instead of in registers, against the current
# single-pass (fallback slot by slot), reduce-then-scan and torch.
set -u
O=${1:?}; o=$(mktemp -d); b=build-release
st() { name=$1; bin=$2; shift 2; env VKR_PIPELINE_STATS=1 VKR_SCAN=single-pass "$@" $bin --reduce-only --ops sum --dtypes f32 --min-log2 10 --max-log2 10 --reps 1 > $o/stats-$name.txt 2>&1
  echo "stats $name rc=$?"; grep -E "pipeline scan_chained_(f32_sum|f64_sum|f32_max|f64_max|i64_max) " $o/stats-$name.txt | sed 's/Binary Size.*Shared/Shared/'; }
st park-bl .exp/bench-park
st park-sg .exp/bench-park VKR_SCAN_TILE=subgroup
sb() { name=$1; bin=$2; shift 2; env "$@" $bin --scan-only --ops sum,max --dtypes f32,f64,i32,i64 --min-log2 28 --max-log2 28 --reps 10 > $o/$name.txt 2>&1; echo "$name rc=$?"; grep -E "^scan|vkreduce-bench|FAIL|wrong" $o/$name.txt; }
sb rts $b/bench/vkreduce-bench
sb park-bl .exp/bench-park VKR_SCAN=single-pass
sb cur-bl $b/bench/vkreduce-bench VKR_SCAN=single-pass
sb park-sg .exp/bench-park VKR_SCAN=single-pass VKR_SCAN_TILE=subgroup
VKR_SCAN=single-pass .exp/test-park > $o/test-park.txt 2>&1; echo "test_kern_scan park rc=$?"; tail -2 $o/test-park.txt
python3 bench/torch_bench.py --min-log2 28 --max-log2 28 --dtypes f32,f64,i32,i64 --reps 10 --cummin-max-log2 10 > $o/torch.txt 2>&1; echo "torch rc=$?"
grep -E "scan" $o/torch.txt
tar czf $O/run5.tgz -C $o .
