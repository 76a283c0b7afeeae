#!/usr/bin/env bash
# Scan-only run on the GPU machine (../shared/GPU.md), side by side in one run: every op and
# dtype at 2^28 with the engine's default choice, inclusive and exclusive (their pipelines
# differ: the driver's registers, and so the tile rows kern_scan_chunk_rows picks), then with
# each algorithm forced (to check the default per op and dtype), every single-pass kernel
# checked against the CPU at 2^24,
# torch.cumsum/cumprod, the shared-memory scan through the daemon, and nvidia-smi's clock log
# (the SM clock is what made series slow before session 7). Builds nothing.
#
#   . .gpu/env.sh; bench/run-scan-h200.sh OUTDIR
#   LOG2=26 DTYPES=f64,i64 bench/run-scan-h200.sh OUTDIR    # another size, fewer dtypes
set -u
out=${1:?usage: bench/run-scan-h200.sh OUTDIR}
b=${BUILD:-build-release}
log2=${LOG2:-28}
dtypes=${DTYPES:-f32,f64,i32,u32,i64,u64}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > "$out/gpu.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -lms 200 \
  > "$out/smi.csv" 2>&1 &
smi=$!
scan_bench() { # NAME [--exclusive] ENV... : the bench with those variables set
  local name=$1 excl=; shift
  if [ "${1:-}" = --exclusive ]; then excl=--exclusive; shift; fi
  env "$@" "$b/bench/vkreduce-bench" --scan-only $excl --ops sum,prod,min,max --dtypes "$dtypes" \
    --min-log2 "$log2" --max-log2 "$log2" --reps 10 --times --csv "$out/$name.csv" > "$out/$name.txt" 2>&1
  echo "$name rc=$?"
}
scan_bench default
scan_bench exclusive --exclusive
scan_bench single-pass VKR_SCAN=single-pass
scan_bench reduce-then-scan VKR_SCAN=reduce-then-scan
VKR_SCAN=single-pass "$b/bench/vkreduce-bench" --scan-only --ops sum,prod,min,max --dtypes "$dtypes" \
  --min-log2 24 --max-log2 24 --reps 3 > "$out/check-single-pass.txt" 2>&1
echo "single-pass checked at 2^24: rc=$? wrong=$(grep -c WRONG "$out/check-single-pass.txt")"
python3 bench/torch_bench.py --min-log2 "$log2" --max-log2 "$log2" --dtypes f32,f64,i32,i64 --reps 10 \
  --cummin-max-log2 10 --csv "$out/torch.csv" > "$out/torch.txt" 2>&1
echo "torch rc=$?"
sock=/tmp/vkr-scan.sock
rm -f "$sock"
"$b/daemon/vkreduced" --socket "$sock" 2> "$out/daemon.log" &
pid=$!
for _ in $(seq 1200); do "$b/client/vkreduce" --socket "$sock" ping >/dev/null 2>&1 && break; sleep 0.1; done
"$b/bench/vkreduce-shm-bench" --socket "$sock" --mib 1024 --reps 5 > "$out/shm.txt" 2>&1
echo "shm rc=$?"
kill "$pid"; wait "$pid"
kill "$smi"
for f in default exclusive single-pass reduce-then-scan; do echo "== $f"; grep -E "^scan|copy kernel" "$out/$f.txt"; done
grep -E "scan|copy" "$out/torch.txt"
# The device tool brings back only a few files: pack everything into one.
tar czf "$out/../scan-run.tgz" -C "$out" . && rm -rf "${out:?}"/* && mv "$out/../scan-run.tgz" "$out/"
