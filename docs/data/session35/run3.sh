#!/usr/bin/env bash
# Session 35 run 3: is the synchronous client's slow mode a matter of which vCPU the client
# or the daemon's loop runs on? Run 2 had one bench at p50 57 us whose client never slept
# and whose daemon spent the same ~29 us per request as in the fast benches; the slow
# benches of runs 1 and 2 had the client (run 2) or the loop (run 1's new3) on CPU 14.
# Records the host's CPU topology and which CPUs take the GPU's interrupts, then one daemon
# (new2) with the bench client pinned to each CPU in turn, and daemons with the loop thread
# pinned to the CPU that took the most GPU interrupts and to another one.
# Run as `. .gpu/env.sh; bash docs/data/session35/run3.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; o=/tmp/r3; mkdir -p $o
b=/tmp/new2; mkdir -p $b; tar xJf .exp/s35new2.txz -C $b
export LD_LIBRARY_PATH=$b/client:$LD_LIBRARY_PATH
pack() { tar czf "$out/run.tgz" -C "$o" .; }
{ lscpu -e; lscpu; cat /proc/interrupts; for f in /proc/irq/*/smp_affinity_list; do echo "$f $(cat $f)"; done; } > "$o/cpu.txt" 2>&1
cache=$(mktemp -d); sock=/tmp/vkr35.sock
# Interrupts per CPU summed over every line that names nvidia (or all lines: "all").
irqs() { awk -v pat="$1" 'NR==1{n=NF; next} pat=="all" || tolower($0) ~ pat {for (i=2;i<=n+1;i++) if ($i ~ /^[0-9]+$/) c[i-2]+=$i} END{for (i=0;i<n;i++) printf "%d ", c[i]; print ""}' /proc/interrupts; }
start() { rm -f $sock; $b/daemon/vkreduced --socket $sock --state-dir $cache 2>> "$o/daemon.log" & pid=$!
  for _ in $(seq 600); do $b/client/vkreduce --socket $sock ping >/dev/null 2>&1 && break; sleep 0.1; done; }
bench() { # name cpu
  local n0 a0; n0=$(irqs nvidia); a0=$(irqs all)
  taskset -c $2 timeout 60 $b/bench/vkreduce-daemon-bench --socket $sock --no-throughput > "$o/lat-$1.txt" 2>&1
  echo "nvidia_irqs_before $n0" >> "$o/lat-$1.txt"; echo "nvidia_irqs_after $(irqs nvidia)" >> "$o/lat-$1.txt"
  echo "all_irqs_before $a0" >> "$o/lat-$1.txt"; echo "all_irqs_after $(irqs all)" >> "$o/lat-$1.txt"
  echo "lat $1 client-cpu=$2 loop-cpu=$(awk '{print $39}' /proc/$pid/stat) p50=$(awk '/^\| [0-9]/{print $2; exit}' $o/lat-$1.txt) $(grep '^client:' $o/lat-$1.txt)"
}
start
for cpu in $(seq 0 $(( $(nproc) - 1 ))); do bench c$cpu $cpu; done
cat /proc/$pid/task/*/stat | awk '{print $1, $2, $39}' > "$o/threads-1.txt"
kill $pid; wait $pid; pack
# The CPU whose nvidia interrupt count grew most during the first bench.
hot=$(awk '/^nvidia_irqs_before/{for(i=2;i<=NF;i++) b[i]=$i} /^nvidia_irqs_after/{m=-1; for(i=2;i<=NF;i++) if ($i-b[i]>m) {m=$i-b[i]; c=i-2}; print c}' $o/lat-c0.txt)
echo "hot cpu: $hot"
cool=$(( (hot + 5) % $(nproc) )); client=$(( (hot + 9) % $(nproc) ))
for k in 1 2; do
  start; taskset -pc $hot $pid >/dev/null; bench loop-hot$k $client; kill $pid; wait $pid
  start; taskset -pc $cool $pid >/dev/null; bench loop-cool$k $client; kill $pid; wait $pid
done
rm -rf $cache; pack
