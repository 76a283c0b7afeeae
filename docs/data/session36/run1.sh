#!/usr/bin/env bash
# Session 36 run 1 (written as session 35 run 4): the daemon keeping its threads off the CPUs that take the GPU's
# interrupts (new3, daemon/irq_cpus.c) against VKR_GPU_IRQ_CPUS=off, fresh daemons in
# alternation, the client placed by the scheduler as a user's would be; then 32 pipelining
# clients with each; the end-to-end tests (their own daemons, new3) on the device.
# Run as `. .gpu/env.sh; bash docs/data/session36/run1.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; o=/tmp/r4; mkdir -p $o
b=/tmp/new3; mkdir -p $b; tar xJf .exp/s36new1.txz -C $b
export LD_LIBRARY_PATH=$b/client:$LD_LIBRARY_PATH
pack() { tar czf "$out/run.tgz" -C "$o" .; }
cache=$(mktemp -d); sock=/tmp/vkr36.sock
irqs() { awk 'NR==1{n=NF; next} tolower($0) ~ /nvidia/ {for (i=2;i<=n+1;i++) c[i-2]+=$i} END{for (i=0;i<n;i++) printf "%d ", c[i]; print ""}' /proc/interrupts; }
run() { # name bench-flags env...
  local name=$1 flags=$2; shift 2
  rm -f $sock
  env "$@" $b/daemon/vkreduced --socket $sock --state-dir $cache 2> "$o/$name.log" &
  local pid=$!
  for _ in $(seq 600); do $b/client/vkreduce --socket $sock ping >/dev/null 2>&1 && break; sleep 0.1; done
  local n0; n0=$(irqs)
  timeout 60 $b/bench/vkreduce-daemon-bench --socket $sock $flags > "$o/$name.txt" 2>&1
  echo "nvidia_irqs_before $n0" >> "$o/$name.txt"; echo "nvidia_irqs_after $(irqs)" >> "$o/$name.txt"
  cat /proc/$pid/task/*/stat | awk '{print $1, $2, $39}' > "$o/$name-threads.txt"
  $b/client/vkreduce --socket $sock stats > "$o/$name-stats.txt" 2>&1
  kill $pid; wait $pid
  echo "$name loop-cpu=$(awk 'NR==1{print $3}' $o/$name-threads.txt) $(grep -o 'interrupts land.*CPUs [0-9,-]*' $o/$name.log)"
  grep -A3 -E '^(latency|throughput)' "$o/$name.txt" | grep -E '^\| [0-9]' | head -2; grep '^client:' "$o/$name.txt"
}
for i in 1 2 3 4; do
  run avoid$i --no-throughput
  run off$i --no-throughput VKR_GPU_IRQ_CPUS=off
done
pack
# 32 pipelining clients (and the lone client again) with each, one daemon apiece.
run avoid-tp "--cork --clients 32"
run off-tp "--cork --clients 32" VKR_GPU_IRQ_CPUS=off
pack
# Exclusive f64 scans gained 0.3-1.0% at 16 rows in run 2 where inclusive ones gained 6%:
# other row counts for them with rows scanned in their chunk.
scan() { # name rows extra
  VKR_SCAN_CHUNK_ROWS=$2 timeout 150 $b/bench/vkreduce-bench --scan-only $3 --ops sum,prod --dtypes f64 \
    --min-log2 28 --max-log2 28 --reps 20 --csv "$o/scan-$1.csv" > "$o/scan-$1.txt" 2>&1
  echo "scan $1 rc=$? $(grep -c WRONG $o/scan-$1.txt) wrong: $(grep -E '^scan' $o/scan-$1.txt | awk '{print $2, $3, $5}' | tr '\n' ';')"
  pack
}
scan x14 14 --exclusive

VKREDUCED=$b/daemon/vkreduced timeout 70 $b/tests/test_client_e2e > "$o/test_client_e2e.txt" 2>&1
echo "test_client_e2e rc=$? $(tail -n 1 $o/test_client_e2e.txt)"
rm -rf $cache; pack
