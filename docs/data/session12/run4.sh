#!/usr/bin/env bash
# Session 12 run 4: the final look-back (shuffle tree for 32-bit types only) against 17a0763:
# registers, and 2^28 scans of f32, i32, f64, i64 (sum, max), old new old new.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
new=build-release/bench/vkreduce-bench; old=.exp/old/vkreduce-bench
VKR_COMPILE_ON_FIRST_USE=1 VKR_PIPELINE_STATS=1 timeout 60 $new --scan-only --ops sum,max --dtypes f32,i32,f64,i64 \
  --min-log2 20 --max-log2 20 --reps 3 > "$o/stats-new.txt" 2>&1; echo "stats rc=$?"
for round in 1 2; do
  for v in old new; do
    timeout 100 ${!v} --scan-only --ops sum,max --dtypes f32,i32,f64,i64 --min-log2 28 --max-log2 28 --reps 10 \
      --csv "$o/scan-$v-$round.csv" > "$o/scan-$v-$round.txt" 2>&1
    echo "scan $v $round rc=$? wrong=$(grep -c WRONG "$o/scan-$v-$round.txt")"; pack
  done
done
grep 'scan_chained' "$o/stats-new.txt" | sed 's/pipeline \([a-z_0-9]*\) \[CS\]: Register Count=\([0-9]*\);.*Local Memory Size=\([0-9]*\);.*/\1 regs=\2 local=\3/'
for round in 1 2; do for v in old new; do echo "== scan $v $round"; grep -E "^scan" "$o/scan-$v-$round.txt"; done; done
