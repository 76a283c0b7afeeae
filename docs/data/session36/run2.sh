#!/usr/bin/env bash
# Session 36 run 2: (1) the daemon's throughput with 32 corked pipelining clients, session
# 34's last build (base34 = 6f3ff33) against this session's (new1 = d170753), fresh daemons
# in alternation, three each: run 1 measured 1.49 and 1.61 M req/s where session 34 had 1.92
# and 1.93 on an H100 host, and session 35 changed the loop (it reads the GPU's timeline when
# idle). (2) One synchronous client pinned off the CPU that takes the GPU's interrupts and on
# it, against a daemon avoiding that CPU and one told not to.
# Run as `. .gpu/env.sh; bash docs/data/session36/run2.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; o=/tmp/r2; mkdir -p $o
for v in base34 new1; do mkdir -p /tmp/$v; tar xJf .exp/s36$v.txz -C /tmp/$v; done
pack() { tar czf "$out/run.tgz" -C "$o" .; }
cache=$(mktemp -d); sock=/tmp/vkr36.sock
irqs() { awk 'NR==1{n=NF; next} tolower($0) ~ /nvidia/ {for (i=2;i<=n+1;i++) c[i-2]+=$i} END{for (i=0;i<n;i++) printf "%d ", c[i]; print ""}' /proc/interrupts; }
run() { # build name client-cpu bench-flags env...
  local v=$1 name=$2 cpu=$3 flags=$4; shift 4; local b=/tmp/$v
  rm -f $sock
  env "$@" $b/daemon/vkreduced --socket $sock --state-dir $cache 2> "$o/$name.log" &
  local pid=$!
  for _ in $(seq 600); do LD_LIBRARY_PATH=$b/client:$LD_LIBRARY_PATH $b/client/vkreduce --socket $sock ping >/dev/null 2>&1 && break; sleep 0.1; done
  local n0; n0=$(irqs)
  local pin=""; [ "$cpu" = any ] || pin="taskset -c $cpu"
  LD_LIBRARY_PATH=$b/client:$LD_LIBRARY_PATH timeout 60 $pin $b/bench/vkreduce-daemon-bench --socket $sock $flags > "$o/$name.txt" 2>&1
  echo "nvidia_irqs_before $n0" >> "$o/$name.txt"; echo "nvidia_irqs_after $(irqs)" >> "$o/$name.txt"
  cat /proc/$pid/task/*/stat | awk '{print $1, $2, $39}' > "$o/$name-threads.txt"
  LD_LIBRARY_PATH=$b/client:$LD_LIBRARY_PATH $b/client/vkreduce --socket $sock stats > "$o/$name-stats.txt" 2>&1
  kill $pid; wait $pid
  echo "$name loop-cpu=$(awk 'NR==1{print $3}' $o/$name-threads.txt) $(grep -o 'interrupts land.*CPUs [0-9,-]*' $o/$name.log)"
  grep -A3 -E '^(latency|throughput)' "$o/$name.txt" | grep -E '^\| [0-9]' | head -2; grep '^client:' "$o/$name.txt"
}
for i in 1 2 3; do
  run base34 tp-base$i any "--no-latency --cork --clients 32"
  run new1 tp-new$i any "--no-latency --cork --clients 32"
done
pack
# The CPU that took the most GPU interrupts, and one that took none.
hot=$(irqs | awk '{m=1; for (i=2;i<=NF;i++) if ($i+0 > $m+0) m=i; print m-1}')
cold=$(( (hot + 7) % $(nproc) ))
echo "interrupt CPU $hot, other CPU $cold"
for i in 1 2; do
  run new1 lat-avoid-off$i $cold --no-throughput
  run new1 lat-avoid-on$i $hot --no-throughput
  run new1 lat-off-off$i $cold --no-throughput VKR_GPU_IRQ_CPUS=off
  run new1 lat-off-on$i $hot --no-throughput VKR_GPU_IRQ_CPUS=off
done
rm -rf $cache; pack
