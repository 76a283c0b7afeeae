#!/usr/bin/env bash
# One full benchmark run on the GPU machine (../shared/GPU.md), everything side by side in
# the same run: the kernels against the device's copy bandwidth and torch, then the daemon
# batched and unbatched. Builds nothing: bring build-release/ (and .gpu/) along.
#
#   . .gpu/env.sh; bench/run-h200.sh OUTDIR
#   . .gpu/env.sh; ONLY=daemon bench/run-h200.sh OUTDIR   # the daemon rows and torch's latency
set -u
out=${1:?usage: bench/run-h200.sh OUTDIR}
b=${BUILD:-build-release}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,memory.total --format=csv > "$out/gpu.txt" 2>&1

if [ "${ONLY:-}" != daemon ]; then
echo "== engine tests on this device"
for t in gpu kern_reduce kern_scan; do
  "$b/tests/test_$t" > "$out/test_$t.txt" 2>&1
  echo "test_$t rc=$?"
done
VKR_SCAN=single-pass "$b/tests/test_kern_scan" > "$out/test_kern_scan_single.txt" 2>&1
echo "test_kern_scan single-pass rc=$?"

echo "== kernels"
"$b/bench/vkreduce-bench" --all --reps 20 --csv "$out/vkreduce.csv" > "$out/vkreduce.txt" 2>&1
echo "rc=$?"
echo "== single-pass scan, for comparison with reduce-then-scan"
VKR_SCAN=single-pass "$b/bench/vkreduce-bench" --scan-only --dtypes f32,i64 --min-log2 20 \
  --reps 20 --csv "$out/vkreduce-single.csv" > "$out/vkreduce-single.txt" 2>&1
echo "rc=$?"
echo "== torch"
python3 bench/torch_bench.py --reps 20 --csv "$out/torch.csv" --latency > "$out/torch.txt" 2>&1
echo "rc=$?"
else
echo "== torch, latency only"
python3 bench/torch_bench.py --dtypes f32 --min-log2 10 --max-log2 10 --cummin-max-log2 10 --latency \
  > "$out/torch.txt" 2>&1
echo "rc=$?"
fi

echo "== daemon: latency and throughput, each row a fresh daemon"
# batched: libvkreduce as it comes (pipelined reduces through the shared-memory arena);
# inline: the arena off (VKR_CLIENT_ARENA_KIB=0); shm: every request names one registered
# region; cork: each client sends its window's refill in one write (vkr_cork).
NO_TAR=1 bench/run-daemon-h200.sh "$out/daemon" 'batched:::' 'batched-cork:::--no-latency --cork' \
  'inline-cork:VKR_CLIENT_ARENA_KIB=0::--no-latency --cork' 'shm-cork:::--no-latency --cork --shm' \
  'cork-window-16:::--no-latency --cork --window 16' 'latency-again:::--no-throughput' \
  'loop-spin-0:VKR_LOOP_SPIN_US=0::--no-throughput' \
  'unbatched::--max-batch-jobs 1:--no-latency --cork' > "$out/daemon.txt" 2>&1
echo "rc=$?"
echo "== shared memory: 1 GiB through the client library"
sock=/tmp/vkr-bench.sock
rm -f "$sock"
"$b/daemon/vkreduced" --socket "$sock" 2> "$out/daemon-shm.log" &
pid=$!
for _ in $(seq 1200); do "$b/client/vkreduce" --socket "$sock" ping >/dev/null 2>&1 && break; sleep 0.1; done  # the first start compiles every pipeline
"$b/bench/vkreduce-shm-bench" --socket "$sock" --mib 1024 --reps 10 > "$out/shm.txt" 2>&1
echo "shm rc=$?"
kill "$pid"
wait "$pid"
python3 bench/plot_daemon.py "$out" "$out/plots"
echo "daemon plots rc=$?"

if [ "${ONLY:-}" != daemon ]; then
  echo "== plots"
  python3 bench/plot_bench.py "$out/vkreduce.csv" "$out/torch.csv" "$out/plots"
fi
# The device tool brings back only a few files: pack everything into one.
tar czf "$out/../h200-run.tgz" -C "$out" . && rm -rf "${out:?}"/* && mv "$out/../h200-run.tgz" "$out/"
