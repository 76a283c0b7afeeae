#!/usr/bin/env bash
# Session 5, run 8: the shared-memory reduce and scan through the daemon (host-memory
# pipelines of this session), beside the PCIe ceilings measured in the same run.
set -u
O=${1:?}; o=$(mktemp -d); b=build-release
$b/bench/vkreduce-bench --pcie --reduce-only --min-log2 28 --max-log2 28 --ops sum --dtypes f32 --reps 5 > $o/pcie.txt 2>&1; echo "pcie rc=$?"
grep -iE "pcie|host|both|GB/s" $o/pcie.txt | head -12
sock=/tmp/vkr-s5.sock; rm -f $sock
$b/daemon/vkreduced --socket $sock 2> $o/daemon.log &
pid=$!
for _ in $(seq 600); do $b/client/vkreduce --socket $sock ping >/dev/null 2>&1 && break; sleep 0.1; done
$b/bench/vkreduce-shm-bench --socket $sock --mib 1024 --reps 5 > $o/shm.txt 2>&1; echo "shm rc=$?"
cat $o/shm.txt
kill $pid; wait $pid
tar czf $O/run8.tgz -C $o .
