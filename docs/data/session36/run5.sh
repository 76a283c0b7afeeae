#!/usr/bin/env bash
# Session 36 run 5: the final build (final = this session's last code: the daemon reads its
# GPU's interrupt CPUs again every 10 s; the loop reads the timeline only on quiet turns) on
# the device: test_client_e2e; one daemon serving 25 s (two 10-s checks) to a lone client
# and then 32 corked clients, its log kept (no "moved" line expected: nothing moves the
# vectors here).
# Run as `. .gpu/env.sh; bash docs/data/session36/run5.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; o=/tmp/r5; mkdir -p $o
b=/tmp/final; mkdir -p $b; tar xJf .exp/s36final.txz -C $b
export LD_LIBRARY_PATH=$b/client:$LD_LIBRARY_PATH
pack() { tar czf "$out/run.tgz" -C "$o" .; }
VKREDUCED=$b/daemon/vkreduced timeout 70 $b/tests/test_client_e2e > "$o/test_client_e2e.txt" 2>&1
echo "test_client_e2e rc=$? $(tail -n 1 $o/test_client_e2e.txt)"
pack
cache=$(mktemp -d); sock=/tmp/vkr36.sock; rm -f $sock
$b/daemon/vkreduced --log-level debug --socket $sock --state-dir $cache 2> "$o/daemon.log" &
pid=$!
for _ in $(seq 600); do $b/client/vkreduce --socket $sock ping >/dev/null 2>&1 && break; sleep 0.1; done
t0=$(date +%s)
for i in 1 2 3; do
  timeout 60 $b/bench/vkreduce-daemon-bench --socket $sock --no-throughput > "$o/lat$i.txt" 2>&1
  echo "lat$i $(grep -A3 '^latency' $o/lat$i.txt | grep -E '^\| [0-9]') $(grep '^client:' $o/lat$i.txt)"
done
timeout 60 $b/bench/vkreduce-daemon-bench --socket $sock --no-latency --cork --clients 32 > "$o/tp.txt" 2>&1
echo "tp $(grep -E '^\| 32' $o/tp.txt)"
while [ $(( $(date +%s) - t0 )) -lt 25 ]; do sleep 1; done
cat /proc/$pid/task/*/stat | awk '{print $1, $2, $39}' > "$o/threads.txt"
grep Cpus_allowed_list /proc/$pid/task/*/status > "$o/threads-allowed.txt"
$b/client/vkreduce --socket $sock stats > "$o/stats.txt" 2>&1
kill $pid; wait $pid
grep -iE 'interrupt' $o/daemon.log; sort -u -k2 $o/threads-allowed.txt | awk '{print $2}' | sort | uniq -c
rm -rf $cache; pack
