#!/usr/bin/env bash
# Session 4, run 2: four vectors per slot in the single-pass scan, without the stage.
set -u
o=${1:?}; b=build-release
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 50 > $o/clocks.csv 2>&1 & smi=$!
sb() { local name=$1 bin=$2; shift 2
  echo "$name start $(date +%T.%N)" >> $o/times.txt
  env "$@" $bin --scan-only --ops sum,max --dtypes f32,i32,f64 --min-log2 26 --max-log2 28 --reps 10 > $o/$name.txt 2>&1
  echo "$name rc=$?"; }
sb sp1 .exp/bench-v1 VKR_SCAN=single-pass
sb sp3 .exp/bench-v3 VKR_SCAN=single-pass
sb sp4-nolookback .exp/bench-v4 VKR_SCAN=single-pass
sb rts $b/bench/vkreduce-bench VKR_SCAN=reduce-then-scan
sb sp3-again .exp/bench-v3 VKR_SCAN=single-pass
sb sp3-p16 .exp/bench-v3 VKR_SCAN=single-pass VKR_SCAN_PATIENCE=16
kill $smi
for f in $o/sp*.txt $o/rts.txt; do echo "== $f"; grep "^scan" $f; done
