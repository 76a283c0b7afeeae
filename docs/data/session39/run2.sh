#!/usr/bin/env bash
# Session 39 run 2 (the same H100, warm): run 1's files did not come back (too many); its
# f64/i64 min/max at 2^24 again, and the daemon's 32-client throughput three times and a lone
# client's latency, packed into one archive.
# Usage: `. .gpu/env.sh; bash docs/data/session39/run2.sh $OUT` with .gpu/ and .exp/ carried.
OUT=${1:?}; o=/tmp/r2; mkdir -p $o
mkdir -p /tmp/v; tar xJf .exp/s39rev.txz -C /tmp/v; b=/tmp/v
minmax() { # name, then environment for the bench
  local name=$1; shift
  env "$@" timeout 100 $b/bench/vkreduce-bench --reduce-only --ops sum,min,max --dtypes f64,i64 --min-log2 24 \
    --max-log2 24 --reps 50 --csv $o/minmax-$name.csv > $o/minmax-$name.txt 2>&1
  echo "minmax $name rc=$? $(grep -c WRONG $o/minmax-$name.txt) wrong"
}
for i in 1 2 3; do minmax default-$i VKR_X=1; done
minmax wg2112 VKR_REDUCE_WORKGROUPS=2112
minmax wg528 VKR_REDUCE_WORKGROUPS=528
tar czf $OUT/run2.tgz -C $o .
export LD_LIBRARY_PATH=$b/client:$LD_LIBRARY_PATH
sock=/tmp/vkr39b.sock; st=$(mktemp -d)
$b/daemon/vkreduced --socket $sock --state-dir $st 2> $o/daemon.log & pid=$!
for _ in $(seq 600); do $b/client/vkreduce --socket $sock ping >/dev/null 2>&1 && break; sleep 0.05; done
for i in 1 2 3; do
  timeout 40 $b/bench/vkreduce-daemon-bench --socket $sock --no-latency --cork --clients 32 > $o/tp-$i.txt 2>&1
  echo "tp $i rc=$? $(tail -n 2 $o/tp-$i.txt | head -1)"
done
timeout 40 $b/bench/vkreduce-daemon-bench --socket $sock --no-throughput > $o/lat.txt 2>&1
echo "lat rc=$?"; grep -A2 'p50' $o/lat.txt | head -4
kill $pid; wait $pid
tar czf $OUT/run2.tgz -C $o .
