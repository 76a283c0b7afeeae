#!/usr/bin/env bash
# Session 36 run 3: which of session 35's changes cost run 2's throughput (32 corked
# pipelining clients): base34 (6f3ff33), new1 (d170753), new1 with VKR_GPU_IRQ_CPUS=off, and
# noread (new1 without the loop's own reads of the GPU's timeline in on_loop_idle),
# quiet (new1 whose loop reads the timeline only on a turn that read no bytes), fresh
# daemons in rotation, three rounds; each thread's CPU time and context switches kept.
# Then the lone client (off the interrupt CPU) against new1 and quiet.
# Run as `. .gpu/env.sh; bash docs/data/session36/run3.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; o=/tmp/r3; mkdir -p $o
for v in base34 new1 noread quiet; do mkdir -p /tmp/$v; tar xJf .exp/s36$v.txz -C /tmp/$v; done
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
  for t in /proc/$pid/task/*; do echo "$(cat $t/comm) $(awk '{print "utime", $14, "stime", $15}' $t/stat) $(grep ctxt $t/status | tr '\n\t' '  ')"; done > "$o/$name-cpu.txt"
  LD_LIBRARY_PATH=$b/client:$LD_LIBRARY_PATH $b/client/vkreduce --socket $sock stats > "$o/$name-stats.txt" 2>&1
  kill $pid; wait $pid
  echo "$name loop-cpu=$(awk 'NR==1{print $3}' $o/$name-threads.txt) $(grep -o 'interrupts land.*CPUs [0-9,-]*' $o/$name.log)"
  grep -A3 -E '^(latency|throughput)' "$o/$name.txt" | grep -E '^\| [0-9]' | head -2; grep '^client:' "$o/$name.txt"
}
lscpu -e > $o/lscpu.txt 2>&1; grep . /sys/devices/system/cpu/cpu*/topology/thread_siblings_list > $o/siblings.txt 2>&1
for i in 1 2 3; do
  run base34 tp-base$i any "--no-latency --cork --clients 32"
  run new1 tp-new$i any "--no-latency --cork --clients 32"
  run new1 tp-off$i any "--no-latency --cork --clients 32" VKR_GPU_IRQ_CPUS=off
  run noread tp-noread$i any "--no-latency --cork --clients 32"
  run quiet tp-quiet$i any "--no-latency --cork --clients 32"
  pack
done
hot=$(irqs | awk '{m=1; for (i=2;i<=NF;i++) if ($i+0 > $m+0) m=i; print m-1}')
cold=$(( (hot + 7) % $(nproc) )); echo "interrupt CPU $hot, other CPU $cold"
for i in 1 2; do
  run new1 lat-new$i $cold --no-throughput
  run quiet lat-quiet$i $cold --no-throughput
done
rm -rf $cache; pack
