#!/usr/bin/env bash
# Session 4, run 1: where the single-pass scan's time goes (stage, look-back), PCIe both ways.
set -u
o=${1:?}; b=build-release
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
sb() { local name=$1 bin=$2; shift 2
  env "$@" $bin --scan-only --ops sum,max --dtypes f32,i32,f64 --min-log2 26 --max-log2 28 --reps 10 > $o/$name.txt 2>&1
  echo "$name rc=$?"; }
sb rts $b/bench/vkreduce-bench VKR_SCAN=reduce-then-scan
sb sp0 $b/bench/vkreduce-bench VKR_SCAN=single-pass
sb sp1 .exp/bench-v1 VKR_SCAN=single-pass
sb sp2-nolookback .exp/bench-v2 VKR_SCAN=single-pass
sb sp1-sub .exp/bench-v1 VKR_SCAN=single-pass VKR_SCAN_TILE=subgroup
sb sp1-p16 .exp/bench-v1 VKR_SCAN=single-pass VKR_SCAN_PATIENCE=16
python3 bench/torch_bench.py --min-log2 28 --max-log2 28 --dtypes f32,f64,i32 --reps 10 --latency --cummin-max-log2 10 > $o/torch.txt 2>&1
echo "torch rc=$?"
sock=/tmp/vkr.sock; rm -f $sock
$b/daemon/vkreduced --socket $sock 2> $o/daemon.log & pid=$!
for _ in $(seq 600); do $b/client/vkreduce --socket $sock ping >/dev/null 2>&1 && break; sleep 0.1; done
$b/bench/vkreduce-shm-bench --socket $sock --mib 1024 --reps 5 > $o/shm.txt 2>&1; echo "shm rc=$?"
kill $pid; wait $pid
grep -h "scan\|sum\|max" $o/sp*.txt $o/rts.txt | head -0
for f in $o/*.txt; do echo "== $f"; grep -v "^#" $f | tail -25; done
