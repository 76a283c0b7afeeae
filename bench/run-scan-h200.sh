#!/usr/bin/env bash
# Scan-only run on the GPU machine (../shared/GPU.md): the single-pass scan at several
# look-back patiences against reduce-then-scan and torch.cumsum, side by side, then the
# shared-memory scan through the daemon with each algorithm. Builds nothing.
#
#   . .gpu/env.sh; bench/run-scan-h200.sh OUTDIR
set -u
out=${1:?usage: bench/run-scan-h200.sh OUTDIR}
b=${BUILD:-build-release}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > "$out/gpu.txt" 2>&1
VKR_SCAN=single-pass "$b/tests/test_kern_scan" > "$out/test_kern_scan_single.txt" 2>&1
echo "test_kern_scan single-pass rc=$?"
scan_bench() { # NAME ENV... : the bench with those variables set
  local name=$1; shift
  env "$@" "$b/bench/vkreduce-bench" --scan-only --ops ${OPS:-sum,max} --dtypes ${DTYPES:-f32,f64,i32,i64} \
    --min-log2 ${MIN_LOG2:-20} --reps 10 --csv "$out/$name.csv" > "$out/$name.txt" 2>&1
  echo "$name rc=$?"
}
scan_bench rts VKR_SCAN=reduce-then-scan
for p in ${PATIENCES:-2 8 32}; do scan_bench "single-p$p" VKR_SCAN=single-pass VKR_SCAN_PATIENCE=$p; done
python3 bench/torch_bench.py --min-log2 ${MIN_LOG2:-20} --dtypes f32,f64,i32,i64 --reps 10 --csv "$out/torch.csv" > "$out/torch.txt" 2>&1
echo "torch rc=$?"
for algo in reduce-then-scan single-pass; do
  sock=/tmp/vkr-scan.sock
  rm -f "$sock"
  VKR_SCAN=$algo "$b/daemon/vkreduced" --socket "$sock" 2> "$out/daemon-$algo.log" &
  pid=$!
  for _ in $(seq 1200); do "$b/client/vkreduce" --socket "$sock" ping >/dev/null 2>&1 && break; sleep 0.1; done
  "$b/bench/vkreduce-shm-bench" --socket "$sock" --mib 1024 --reps 5 > "$out/shm-$algo.txt" 2>&1
  echo "shm $algo rc=$?"
  kill "$pid"; wait "$pid"
done
tar czf "$out/../scan-run.tgz" -C "$out" . && rm -rf "${out:?}"/* && mv "$out/../scan-run.tgz" "$out/"
