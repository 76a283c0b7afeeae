#!/usr/bin/env bash
# Session 38 run 4 (the same H200, warm): 1 GiB of f32 in a client's shared memory, reduced
# and scanned (region to region) end to end through libvkreduce and a fresh rev daemon
# (vkreduce-shm-bench of the same build, carried as .exp/s38shm-bench); 32 corked clients'
# throughput on that daemon; sums at 2^10 to 2^20 beside torch's kernels.
# Usage: `. .gpu/env.sh; bash docs/data/session38/run4.sh $OUT` with .gpu/ and .exp/ carried.
OUT=${1:?}
mkdir -p /tmp/v; tar xJf .exp/s38rev.txz -C /tmp/v; b=/tmp/v
export LD_LIBRARY_PATH=$b/client:$LD_LIBRARY_PATH
sock=/tmp/vkr38s.sock; st=$(mktemp -d)
$b/daemon/vkreduced --socket $sock --state-dir $st 2> $OUT/daemon-shm.log & pid=$!
for _ in $(seq 600); do $b/client/vkreduce --socket $sock ping >/dev/null 2>&1 && break; sleep 0.05; done
timeout 150 .exp/s38shm-bench --socket $sock --mib 1024 --reps 10 > $OUT/shm.txt 2>&1
echo shm rc=$?
timeout 40 $b/bench/vkreduce-daemon-bench --socket $sock --no-latency --cork --clients 32 > $OUT/tp.txt 2>&1
kill $pid; wait $pid
timeout 120 $b/bench/vkreduce-bench --reduce-only --ops sum --dtypes f32,i32,f64,i64 --min-log2 10 --max-log2 20 \
  --reps 20 --csv $OUT/small.csv > $OUT/small.txt 2>&1
echo small rc=$?
timeout 60 python3 bench/torch_bench.py --kinds reduce --dtypes f32,i32,f64,i64 --min-log2 10 --max-log2 20 --reps 20 \
  --csv $OUT/torch-small.csv > $OUT/torch-small.txt 2>&1
