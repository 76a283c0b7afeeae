#!/usr/bin/env bash
# The daemon under several configurations on the GPU machine (../shared/GPU.md): each row
# starts a fresh vkreduced with the given environment and flags, runs vkreduce-daemon-bench,
# and keeps the daemon's stats (its loop-thread and per-request time split) beside it, with
# nvidia-smi's log of the SM clock (smi.csv, every 100 ms): a lone synchronous client leaves
# the GPU mostly idle, and an idle H200 lowers its SM clock in steps (session 7).
#
#   . .gpu/env.sh; bench/run-daemon-h200.sh OUTDIR [CONFIG...]
#
# A CONFIG is NAME:ENV-ASSIGNMENTS:DAEMON-FLAGS:BENCH-FLAGS (fields may be empty; spaces
# separate words inside a field), e.g.
#   'arena-off:VKR_CLIENT_ARENA_KIB=0::--no-latency --cork --clients 32'
set -u
out=${1:?usage: bench/run-daemon-h200.sh OUTDIR [CONFIG...]}
shift
b=${BUILD:-build-release}
mkdir -p "$out"
cache=$(mktemp -d)
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -lms 100 \
  > "$out/smi.csv" 2>&1 &
smi=$!
[ $# -gt 0 ] || set -- 'default:::' 'unbatched::--max-batch-jobs 1:--no-latency'
for config in "$@"; do
  IFS=: read -r name envs dflags bflags <<< "$config"
  sock=/tmp/vkr-diag.sock
  rm -f "$sock"
  # shellcheck disable=SC2086  # word splitting of the fields is intended
  env $envs "$b/daemon/vkreduced" --socket "$sock" --state-dir "$cache" $dflags \
    2> "$out/$name.log" &
  pid=$!
  for _ in $(seq 1200); do "$b/client/vkreduce" --socket "$sock" ping >/dev/null 2>&1 && break; sleep 0.1; done
  echo "== $name: env [$envs] daemon [$dflags] bench [$bflags] from $(date '+%Y/%m/%d %H:%M:%S.%N' | cut -c1-23)"
  # shellcheck disable=SC2086  # the environment applies to the clients too (VKR_CLIENT_*)
  env $envs "$b/bench/vkreduce-daemon-bench" --socket "$sock" $bflags 2>&1 | tee "$out/$name.txt"
  echo "   $name: bench ended $(date '+%Y/%m/%d %H:%M:%S.%N' | cut -c1-23)"
  "$b/client/vkreduce" --socket "$sock" stats > "$out/$name-stats.txt" 2>&1
  grep -E '^(requests_total|batches|batch_jobs|gpu_ns_total|request_.*|loop_.*) ' "$out/$name-stats.txt"
  kill "$pid"
  wait "$pid"
done
kill "$smi"
rm -rf "$cache"
# The device tool brings back only a few files: pack them into one (NO_TAR=1: the caller does).
if [ -z "${NO_TAR:-}" ]; then
  tar czf "$out.tgz" -C "$out" . && rm -rf "${out:?}" && mkdir -p "$out" && mv "$out.tgz" "$out/"
fi
