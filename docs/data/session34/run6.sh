#!/usr/bin/env bash
# Session 34 run 6: why one synchronous client's p50 was 66 us on run 5's H100 host (34 us
# on session 27's H200 host): run 5's daemon stats put 20 us per request between the
# completion thread seeing the batch complete and the loop answering it (0.4 us on the
# H200 host), as if the loop slept through its polling window. Each row a fresh daemon
# (run 5's build): the default twice, the loop polling 200 us instead of 50
# (VKR_LOOP_SPIN_US=200), and no copy helpers (VKR_COPY_THREADS=0); with the host's CPU
# described first. Run as `. .gpu/env.sh; bash docs/data/session34/run6.sh $OUT` with .gpu/
# and .exp/ (s34final.txz) carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
b=/tmp/final; mkdir -p $b; tar xJf .exp/s34final.txz -C $b
pack() { tar czf "$out/run.tgz" -C "$o" .; }
{ nproc; lscpu; cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor; cat /proc/loadavg; } > "$o/cpu.txt" 2>&1
cfgs=('lat-a:::--no-throughput' 'spin200:VKR_LOOP_SPIN_US=200::--no-throughput'
  'copy0:VKR_COPY_THREADS=0::--no-throughput' 'lat-b:::--no-throughput')
BUILD=$b NO_TAR=1 timeout 200 bash bench/run-daemon-h200.sh "$o/daemon" "${cfgs[@]}" > "$o/daemon.txt" 2>&1
echo "daemon rc=$? $(date +%T)"; pack
