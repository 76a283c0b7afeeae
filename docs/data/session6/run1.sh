#!/usr/bin/env bash
# Session 6, run 1: the single-pass tile pass's floor (probe nolb: no look-back, wrong output)
# against the full single pass and reduce-then-scan, each with the Blelloch and the subgroup
# tile scan; registers of each; torch in the same run.
set -u
O=${1:?}; o=$(mktemp -d); b=build-release/bench/vkreduce-bench
st() { name=$1; bin=$2; shift 2; env VKR_PIPELINE_STATS=1 VKR_SCAN=single-pass "$@" $bin --reduce-only --ops sum --dtypes f32 --min-log2 10 --max-log2 10 --reps 1 > $o/stats-$name.txt 2>&1
  echo "stats $name rc=$?"; grep -E "pipeline scan_(chained|apply|reduce)_(f32_sum|f64_sum|i32_sum) " $o/stats-$name.txt | sed 's/Binary Size.*Shared/Shared/'; }
st cur-bl $b
st cur-sg $b VKR_SCAN_TILE=subgroup
st nolb-bl .exp/bench-nolb
st nolb-sg .exp/bench-nolb VKR_SCAN_TILE=subgroup
sb() { name=$1; bin=$2; shift 2; env "$@" $bin --scan-only --ops sum --dtypes f32,i32,f64 --min-log2 28 --max-log2 28 --reps 10 > $o/$name.txt 2>&1; echo "$name rc=$?"; grep -E "^scan|copy kernel|WRONG|spread" $o/$name.txt; }
sb rts-bl $b
sb rts-sg $b VKR_SCAN_TILE=subgroup
sb sp-bl $b VKR_SCAN=single-pass
sb sp-sg $b VKR_SCAN=single-pass VKR_SCAN_TILE=subgroup
sb nolb-bl .exp/bench-nolb VKR_SCAN=single-pass
sb nolb-sg .exp/bench-nolb VKR_SCAN=single-pass VKR_SCAN_TILE=subgroup
sb rts-bl-again $b
python3 bench/torch_bench.py --min-log2 28 --max-log2 28 --dtypes f32,f64,i32 --reps 10 --cummin-max-log2 10 > $o/torch.txt 2>&1; echo "torch rc=$?"
grep -E "scan|copy" $o/torch.txt
tar czf $O/run1.tgz -C $o .
