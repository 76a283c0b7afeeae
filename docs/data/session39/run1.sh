#!/usr/bin/env bash
# Session 39 run 1: session 38's run 6 (PCIe both ways as two copies) with a prototype of a
# staged shared-memory scan beside it (vkreduce-bench --pcie: chunks brought up, worked on
# and sent back in a pipeline of steps, three variants at three chunk sizes, checked byte for
# byte); torch's PCIe copies in the same run; f64 and i64 min/max at 2^24 five times over
# (is S38-3's f64 min at 0.949 of read noise?), and with 2112 and 528 workgroups; the daemon
# of this build end to end (1 GiB in shared memory, 32 corked clients, one client).
# Usage: `. .gpu/env.sh; bash docs/data/session39/run1.sh $OUT` with .gpu/ and .exp/ carried.
OUT=${1:?}
mkdir -p /tmp/v; tar xJf .exp/s39rev.txz -C /tmp/v; b=/tmp/v
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for i in 1 2; do
  timeout 120 $b/bench/vkreduce-bench --reduce-only --scan-only --pcie --reps 10 > $OUT/pcie-$i.txt 2>&1
  echo "pcie $i rc=$?"; grep -E '^pcie|WRONG' $OUT/pcie-$i.txt
done
timeout 120 python3 bench/torch_bench.py --latency --kinds reduce --dtypes f32 --min-log2 10 --max-log2 10 --reps 20 \
  > $OUT/torch-latency.txt 2>&1
echo "torch rc=$?"; grep -E 'GB/s|item' $OUT/torch-latency.txt
minmax() { # name, then environment for the bench
  local name=$1; shift
  env "$@" timeout 100 $b/bench/vkreduce-bench --reduce-only --ops sum,min,max --dtypes f64,i64 --min-log2 24 \
    --max-log2 24 --reps 50 --csv $OUT/minmax-$name.csv > $OUT/minmax-$name.txt 2>&1
  echo "minmax $name rc=$? $(grep -c WRONG $OUT/minmax-$name.txt) wrong"
}
for i in 1 2 3; do minmax default-$i VKR_X=1; done
minmax wg2112 VKR_REDUCE_WORKGROUPS=2112
minmax wg528 VKR_REDUCE_WORKGROUPS=528
for i in 4 5; do minmax default-$i VKR_X=1; done
export LD_LIBRARY_PATH=$b/client:$LD_LIBRARY_PATH
sock=/tmp/vkr39.sock; st=$(mktemp -d)
$b/daemon/vkreduced --socket $sock --state-dir $st 2> $OUT/daemon.log & pid=$!
for _ in $(seq 600); do $b/client/vkreduce --socket $sock ping >/dev/null 2>&1 && break; sleep 0.05; done
timeout 150 $b/bench/vkreduce-shm-bench --socket $sock --mib 1024 --reps 10 > $OUT/shm.txt 2>&1
echo "shm rc=$?"; cat $OUT/shm.txt
timeout 40 $b/bench/vkreduce-daemon-bench --socket $sock --no-latency --cork --clients 32 > $OUT/tp.txt 2>&1
echo "tp rc=$?"; tail -n 2 $OUT/tp.txt
timeout 40 $b/bench/vkreduce-daemon-bench --socket $sock --no-throughput > $OUT/lat.txt 2>&1
echo "lat rc=$?"; tail -n 2 $OUT/lat.txt
kill $pid; wait $pid
grep -E 'built|pipelines' $OUT/daemon.log | head -3
