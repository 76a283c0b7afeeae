#!/usr/bin/env bash
# Session 9 run 5: the shared-memory scan beside the PCIe copies, same run, three rounds.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
b=build-release
sock=/tmp/vkr-s9.sock; rm -f "$sock"
"$b/daemon/vkreduced" --socket "$sock" 2> "$o/daemon.log" &
pid=$!
for _ in $(seq 1200); do "$b/client/vkreduce" --socket "$sock" ping >/dev/null 2>&1 && break; sleep 0.1; done
for round in 1 2 3; do
  timeout 120 "$b/bench/vkreduce-bench" --reduce-only --scan-only --pcie --max-log2 28 --reps 10 > "$o/pcie-$round.txt" 2>&1; echo "pcie $round rc=$?"
  timeout 120 "$b/bench/vkreduce-shm-bench" --socket "$sock" --mib 1024 --reps 5 > "$o/shm-$round.txt" 2>&1; echo "shm $round rc=$?"
  timeout 60 .exp/bins/pcie2q 1024 > "$o/pcie2q-$round.txt" 2>&1; echo "pcie2q $round rc=$?"
done
kill "$pid"; wait "$pid"
for round in 1 2 3; do echo "== round $round"; grep pcie "$o/pcie-$round.txt"; cat "$o/shm-$round.txt"; grep -E "alone|host->host|two queues" "$o/pcie2q-$round.txt"; done
tar czf "$out/run.tgz" -C "$o" . && rm -rf "$o"
