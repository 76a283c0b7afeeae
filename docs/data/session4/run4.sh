#!/usr/bin/env bash
# Session 4, run 4: lone-request latency and 32-client throughput, the loop reading the
# timeline itself (new) against HEAD (before), interleaved.
set -u
O=${1:?}; o=$(mktemp -d); b=build-release
one() { local name=$1 daemon=$2 flags=$3 sock=/tmp/vkr-lat.sock; rm -f $sock
  $daemon --socket $sock 2> $o/$name.log & local pid=$!
  for _ in $(seq 600); do $b/client/vkreduce --socket $sock ping >/dev/null 2>&1 && break; sleep 0.1; done
  $b/bench/vkreduce-daemon-bench --socket $sock $flags > $o/$name.txt 2>&1 & local bp=$!
  sleep 0.4; ps -L -o tid,psr,pcpu,comm -p $pid > $o/$name-threads.txt 2>&1; wait $bp
  $b/client/vkreduce --socket $sock stats > $o/$name-stats.txt 2>&1
  kill $pid; wait $pid; echo "$name: $(grep -A2 'p50' $o/$name.txt | tail -1) $(grep -E '^\| *32' $o/$name.txt | head -1)"; }
for r in 1 2 3 4 5; do
  one lat-before-$r .exp/vkreduced-before "--no-throughput --iters 20000"
  one lat-new-$r $b/daemon/vkreduced "--no-throughput --iters 20000"
done
for r in 1 2; do
  one tput-before-$r .exp/vkreduced-before "--no-latency --cork --clients 32"
  one tput-new-$r $b/daemon/vkreduced "--no-latency --cork --clients 32"
done
nproc > $o/cpus.txt; lscpu >> $o/cpus.txt 2>&1
tar czf $O/run4.tgz -C $o .
