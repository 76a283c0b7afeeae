#!/usr/bin/env bash
# Session 36 run 6: run 5 again with final2 (the daemon restricts every thread at start; it reads its
# GPU's interrupt CPUs again every 10 s; the loop reads the timeline only on quiet turns) on
# the device: test_client_e2e; one daemon serving 25 s (two 10-s checks) to a lone client
# and then 32 corked clients, its log kept (no "moved" line expected: nothing moves the
# vectors here).
# Run as `. .gpu/env.sh; bash docs/data/session36/run6.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; o=/tmp/r6; mkdir -p $o
b=/tmp/final2; mkdir -p $b; tar xJf .exp/s36final2.txz -C $b
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
grep -iE 'interrupt' $o/daemon.log; awk '{print $2}' $o/threads-allowed.txt | sort | uniq -c
pack
# Does the driver raise an interrupt for every submission, or only for a blocking wait? A
# completion thread that polls 1 s before it blocks never blocks on a 25-us batch.
irqs() { awk 'NR==1{n=NF; next} tolower($0) ~ /nvidia/ {for (i=2;i<=n+1;i++) t+=$i} END{print t+0}' /proc/interrupts; }
for cfg in "VKR_WAIT_SPIN_US=1000000" "VKR_WAIT_SPIN_US=0" "VKR_WAIT_SPIN_US=100"; do
  rm -f $sock
  env $cfg $b/daemon/vkreduced --socket $sock --state-dir $cache 2> "$o/spin-$cfg.log" &
  pid=$!
  for _ in $(seq 600); do $b/client/vkreduce --socket $sock ping >/dev/null 2>&1 && break; sleep 0.1; done
  n0=$(irqs)
  timeout 60 $b/bench/vkreduce-daemon-bench --socket $sock --no-throughput > "$o/spin-$cfg.txt" 2>&1
  n1=$(irqs)
  $b/client/vkreduce --socket $sock stats > "$o/spin-$cfg-stats.txt" 2>&1
  kill $pid; wait $pid
  batches=$(awk '$1=="batches"{print $2}' "$o/spin-$cfg-stats.txt")
  echo "$cfg irqs $((n1 - n0)) batches $batches $(grep -A3 '^latency' $o/spin-$cfg.txt | grep -E '^\| [0-9]') $(grep '^client:' $o/spin-$cfg.txt)"
done
rm -rf $cache; pack
