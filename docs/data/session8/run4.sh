#!/usr/bin/env bash
# Session 8, run 4: the final build (float min/max scans in key space, f64 keys as int64)
# with its default choice for every scan op and dtype at 2^28 (each checked at 2^24), torch
# beside it; single-pass forced for float min/max (checked); a 4-row chunked tile (r4) for
# the 64-bit single pass, whose kernel takes 80 registers with 8 rows.
set -u
O=${1:?}; o=$O/r; mkdir -p $o; b=build-release; t0=$(date +%s)
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -lms 200 > $o/smi.csv 2>&1 &
smi=$!
run() { name=$1; shift; timeout 280 "$@" --csv $o/$name.csv > $o/$name.txt 2>&1
  echo "$name rc=$? $(( $(date +%s) - t0 ))s"; grep -E '^scan|copy kernel|WRONG' $o/$name.txt | tr -s ' ' | sed 's/^/  /'; }
run default $b/bench/vkreduce-bench --scan-only --ops sum,prod,min,max --dtypes f32,f64,i32,u32,i64,u64 --min-log2 28 --max-log2 28 --reps 10 --times
run sp-float-minmax env VKR_SCAN=single-pass $b/bench/vkreduce-bench --scan-only --ops min,max --dtypes f32,f64 --min-log2 28 --max-log2 28 --reps 10 --times
VKR_SCAN=single-pass VKR_PIPELINE_STATS=1 timeout 60 .exp/bins/r4 --reduce-only --ops sum --dtypes f32 --min-log2 10 --max-log2 10 --reps 1 > $o/stats-r4.txt 2>&1
echo "r4: $(grep -E "pipeline scan_chained_(f32|f64|i64)_(sum|max) " $o/stats-r4.txt | sed 's/Binary Size.*Stack Size=0; //; s/Shared.*//; s/pipeline scan_chained_//' | tr '\n' '|')"
run r4 env VKR_SCAN=single-pass .exp/bins/r4 --scan-only --ops sum,max --dtypes f64,i64,f32 --min-log2 28 --max-log2 28 --reps 10 --times
timeout 120 python3 bench/torch_bench.py --min-log2 28 --max-log2 28 --dtypes f32,f64,i32,i64 --reps 10 --cummin-max-log2 10 --csv $o/torch.csv > $o/torch.txt 2>&1
echo "torch rc=$? $(( $(date +%s) - t0 ))s"; grep -E "scan|copy" $o/torch.txt | head -12
kill $smi
tar czf $O/run4.tgz -C $o . && rm -rf $o
