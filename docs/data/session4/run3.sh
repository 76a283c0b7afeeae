#!/usr/bin/env bash
# Session 4, run 3: PCIe ceilings (copy engine and copy kernel, each way and both at once),
# the shared-memory scan, and lone-request latency, reset-at-recycle against before, interleaved.
set -u
o=${1:?}; b=build-release
$b/bench/vkreduce-bench --pcie --min-log2 28 --max-log2 28 --reduce-only --ops sum --dtypes f32 --reps 5 > $o/pcie.txt 2>&1; echo "pcie rc=$?"
lat() { local name=$1 daemon=$2 sock=/tmp/vkr-lat.sock; rm -f $sock
  $daemon --socket $sock 2> $o/$name.log & local pid=$!
  for _ in $(seq 600); do $b/client/vkreduce --socket $sock ping >/dev/null 2>&1 && break; sleep 0.1; done
  $b/bench/vkreduce-daemon-bench --socket $sock --no-throughput --iters 20000 > $o/$name.txt 2>&1
  $b/client/vkreduce --socket $sock stats > $o/$name-stats.txt 2>&1
  if [ "$name" = new-1 ]; then $b/bench/vkreduce-shm-bench --socket $sock --mib 1024 --reps 5 > $o/shm.txt 2>&1; fi
  kill $pid; wait $pid; echo "$name: $(grep -i p50 $o/$name.txt | head -2 | tr '\n' ' ')"; }
for r in 1 2 3; do lat before-$r .exp/vkreduced-before; lat new-$r $b/daemon/vkreduced; done
python3 bench/torch_bench.py --min-log2 10 --max-log2 10 --dtypes f32 --reps 5 --latency > $o/torch.txt 2>&1
cat $o/pcie.txt $o/shm.txt; tail -4 $o/torch.txt
cd $o && tar czf run3.tgz *.txt *.log
