#!/usr/bin/env bash
# Session 41 run 3: is the copy kernel's host-to-host ceiling (42 GB/s each way on an H100
# host, the in-place shm scan's) set by how many bytes the shader cores keep in flight? The
# copy kernel over 1 GiB with 66 to 4224 workgroups (VKR_REDUCE_WORKGROUPS; 2112 by default on
# an H100), then the in-place shm scan and reduce end to end through a daemon, and torch's
# PCIe copies, all in the same run.
# Usage: `. .gpu/env.sh; bash docs/data/session41/run3.sh $OUT` with .gpu/ and .exp/ carried
# (.exp/s41new.txz: build-release of the commit the README names).
OUT=${1:?}; o=/tmp/r3; mkdir -p $o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
b=/tmp/new; mkdir -p $b; tar xJf .exp/s41new.txz -C $b
export LD_LIBRARY_PATH=$b/client:$LD_LIBRARY_PATH
for w in 2112 66 132 264 528 1056 4224 2112; do
  VKR_REDUCE_WORKGROUPS=$w timeout 60 $b/bench/vkreduce-bench --reduce-only --scan-only --pcie-ceilings --reps 10 \
    > $o/ceilings-$w.txt 2>&1
  echo "workgroups $w rc=$?"; grep -E '^pcie ' $o/ceilings-$w.txt
done
tar czf $OUT/run3.tgz -C $o .
sock=/tmp/vkr41.sock; st=$(mktemp -d)
$b/daemon/vkreduced --socket $sock --state-dir $st 2> $o/daemon.log & pid=$!
for _ in $(seq 600); do $b/client/vkreduce --socket $sock ping >/dev/null 2>&1 && break; sleep 0.05; done
timeout 150 $b/bench/vkreduce-shm-bench --socket $sock --mib 1024 --reps 10 > $o/shm.txt 2>&1
echo "shm rc=$?"; grep -E 'GB/s' $o/shm.txt
kill $pid; wait $pid
tar czf $OUT/run3.tgz -C $o .
timeout 120 python3 bench/torch_bench.py --latency --kinds reduce --dtypes f32 --min-log2 10 --max-log2 10 --reps 20 \
  > $o/torch.txt 2>&1
echo "torch rc=$?"; grep -E 'host' $o/torch.txt
tar czf $OUT/run3.tgz -C $o .
