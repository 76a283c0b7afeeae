#!/usr/bin/env bash
# Session 4, run 3b: lone-request latency, reset-at-recycle against before, interleaved.
set -u
O=${1:?}; o=$(mktemp -d); b=build-release
lat() { local name=$1 daemon=$2 sock=/tmp/vkr-lat.sock; rm -f $sock
  $daemon --socket $sock 2> $o/$name.log & local pid=$!
  for _ in $(seq 600); do $b/client/vkreduce --socket $sock ping >/dev/null 2>&1 && break; sleep 0.1; done
  $b/bench/vkreduce-daemon-bench --socket $sock --no-throughput --iters 20000 > $o/$name.txt 2>&1
  $b/client/vkreduce --socket $sock stats > $o/$name-stats.txt 2>&1
  kill $pid; wait $pid; echo "$name: $(grep -A2 'p50' $o/$name.txt | tail -1)"; }
for r in 1 2 3; do lat before-$r .exp/vkreduced-before; lat new-$r $b/daemon/vkreduced; done
python3 bench/torch_bench.py --min-log2 10 --max-log2 10 --dtypes f32 --reps 5 --latency > $o/torch.txt 2>&1
tail -1 $o/torch.txt
tar czf $O/run3b.tgz -C $o .
