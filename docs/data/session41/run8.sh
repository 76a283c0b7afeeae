#!/usr/bin/env bash
# Session 41 run 8 (run 7 with the clocks logged every 100 ms, nvidia-smi): where in the daemon's path do the shm scan's 1.2-1.5 ms over its kernel go?
# The daemon's own statistics (`vkreduce stats`: per request, received -> submitted, submitted
# -> completion seen, -> the loop woke, -> replies written; and each command buffer's GPU time
# from timestamps) around 11 scans alone and then 11 reduces alone (vkreduce-shm-bench --only),
# beside the scan kernel timed by vkreduce-bench --pcie-ceilings in the same run.
# Usage: `. .gpu/env.sh; bash docs/data/session41/run7.sh $OUT` with .gpu/ and .exp/ carried
# (.exp/s41stats.txz: build-release of the commit the README names).
OUT=${1:?}; o=/tmp/r8; mkdir -p $o
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu,pstate --format=csv -lms 100 > $o/clocks.csv & smi=$!
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
b=/tmp/stats; mkdir -p $b; tar xJf .exp/s41stats.txz -C $b
export LD_LIBRARY_PATH=$b/client:$LD_LIBRARY_PATH
echo "bench $(date +%H:%M:%S.%N)" >> $o/marks.txt
timeout 120 $b/bench/vkreduce-bench --reduce-only --scan-only --pcie-ceilings --reps 10 > $o/ceilings.txt 2>&1
echo "ceilings rc=$?"; grep -E "^pcie (host to host|scan)" $o/ceilings.txt
sock=/tmp/vkr41.sock; st=$(mktemp -d)
$b/daemon/vkreduced --socket $sock --state-dir $st 2> $o/daemon.log & pid=$!
for _ in $(seq 600); do $b/client/vkreduce --socket $sock ping >/dev/null 2>&1 && break; sleep 0.05; done
$b/client/vkreduce --socket $sock stats > $o/stats-0.txt
echo "shm scan $(date +%H:%M:%S.%N)" >> $o/marks.txt
timeout 150 $b/bench/vkreduce-shm-bench --socket $sock --mib 1024 --reps 10 --only scan > $o/shm-scan.txt 2>&1
echo "shm scan rc=$?"; cat $o/shm-scan.txt
$b/client/vkreduce --socket $sock stats > $o/stats-1.txt
echo "shm reduce $(date +%H:%M:%S.%N)" >> $o/marks.txt
timeout 150 $b/bench/vkreduce-shm-bench --socket $sock --mib 1024 --reps 10 --only reduce > $o/shm-reduce.txt 2>&1
echo "shm reduce rc=$?"; cat $o/shm-reduce.txt
$b/client/vkreduce --socket $sock stats > $o/stats-2.txt
echo "end $(date +%H:%M:%S.%N)" >> $o/marks.txt
kill $pid; wait $pid
# Per request (ms): the differences of the counters over each phase, divided by its requests.
for phase in "scan 0 1" "reduce 1 2"; do
  set -- $phase
  join <(sort $o/stats-$2.txt) <(sort $o/stats-$3.txt) | awk -v what=$1 '
    { d[$1] = $3 - $2 } END {
      n = d["requests_timed"]; if (n == 0) n = 1
      printf "%s: %d timed requests, %d batches; per request (ms): queue %.3f, gpu (submit to completion seen) %.3f, wake %.3f, reply %.3f; per batch GPU time %.3f ms\n",
        what, d["requests_timed"], d["batches"], d["request_queue_ns_total"] / n / 1e6, d["request_gpu_ns_total"] / n / 1e6,
        d["request_wake_ns_total"] / n / 1e6, d["request_reply_ns_total"] / n / 1e6, d["gpu_ns_total"] / (d["batches"] ? d["batches"] : 1) / 1e6 }' | tee -a $o/per-request.txt
done
grep -E "gpu_ns_max|loop_" $o/stats-2.txt
kill $smi; tar czf $OUT/run8.tgz -C $o .
