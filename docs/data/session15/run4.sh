#!/usr/bin/env bash
# Session 15 run 4: the final build (M) through the daemon: a reduce of 1 GiB f32 in a
# client's shared memory (one-dispatch, flagged partials) and a scan of it into a second
# region, end to end through libvkreduce, beside the PCIe copies in the same run.
# .exp/m/ holds build-release's daemon/vkreduced, client/vkreduce, client/libvkreduce.so.0
# and bench/vkreduce-shm-bench of that commit (the bench finds the library at
# $ORIGIN/../client). Run as `. .gpu/env.sh; bash docs/data/session15/run4.sh $OUT` with
# .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
b=.exp/m
sock=/tmp/vkr-s15.sock; rm -f "$sock"
$b/daemon/vkreduced --socket "$sock" 2> "$o/daemon.log" &
pid=$!
for _ in $(seq 1200); do $b/client/vkreduce --socket "$sock" ping >/dev/null 2>&1 && break; sleep 0.1; done
for round in 1 2; do
  timeout 60 $b/bench/vkreduce-shm-bench --socket "$sock" --mib 1024 --reps 10 > "$o/shm-1024-$round.txt" 2>&1; echo "shm round $round rc=$?"
done
$b/client/vkreduce --socket "$sock" stats > "$o/stats.txt" 2>&1
kill $pid; wait $pid
pack
timeout 90 .exp/vkreduce-bench-M --reduce-only --scan-only --pcie --max-log2 28 --reps 10 > "$o/pcie.txt" 2>&1; echo "pcie rc=$?"
pack
cat "$o"/shm-*.txt; grep -i "pcie" "$o/pcie.txt"; grep -ci "error" "$o/daemon.log"
