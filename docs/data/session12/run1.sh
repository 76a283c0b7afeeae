#!/usr/bin/env bash
# Session 12 run 1: the look-back with ballots and a shuffle tree (new) against 17a0763 (old),
# scans at 2^28 interleaved old new old new; torch's scans; the reduction's workgroup count at
# 2^22..2^26; the shared-memory scan through the old and the new daemon, beside the PCIe
# copies; the session-11 plot.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -lms 500 > "$o/smi.csv" 2>&1 &
smi=$!
python3 docs/data/session11/plot.py docs/data/session11/reduce-one-dispatch.csv "$o/reduce-one-dispatch.png" > "$o/plot.txt" 2>&1; echo "plot rc=$?"
for round in 1 2; do
  for v in old new; do
    if [ $v = old ]; then bench=.exp/old/vkreduce-bench; else bench=build-release/bench/vkreduce-bench; fi
    timeout 150 $bench --scan-only --ops sum,max --dtypes f32,i32,f64,i64 --min-log2 28 --max-log2 28 --reps 10 \
      --csv "$o/scan-$v-$round.csv" > "$o/scan-$v-$round.txt" 2>&1
    echo "scan $v round $round rc=$? wrong=$(grep -c WRONG "$o/scan-$v-$round.txt")"
    pack
  done
done
timeout 100 python3 bench/torch_bench.py --kinds scan --min-log2 28 --max-log2 28 --dtypes f32,i32,f64,i64 --reps 10 \
  --cummin-max-log2 10 --csv "$o/torch.csv" > "$o/torch.txt" 2>&1; echo "torch rc=$?"
pack
for wg in 1056 2112 4224 528; do
  VKR_REDUCE_WORKGROUPS=$wg timeout 60 build-release/bench/vkreduce-bench --reduce-only --ops sum,max --dtypes f32,f64 \
    --min-log2 22 --max-log2 26 --reps 20 --csv "$o/wg-$wg.csv" > "$o/wg-$wg.txt" 2>&1
  echo "workgroups $wg rc=$?"
done
pack
for v in old new; do
  if [ $v = old ]; then d=.exp/old/vkreduced; s=.exp/old/vkreduce-shm-bench; else d=build-release/daemon/vkreduced; s=build-release/bench/vkreduce-shm-bench; fi
  sock=/tmp/vkr-s12-$v.sock; rm -f "$sock"
  $d --socket "$sock" 2> "$o/daemon-$v.log" &
  pid=$!
  for _ in $(seq 1200); do build-release/client/vkreduce --socket "$sock" ping >/dev/null 2>&1 && break; sleep 0.1; done
  timeout 60 $s --socket "$sock" --mib 1024 --reps 5 > "$o/shm-$v.txt" 2>&1; echo "shm $v rc=$?"
  kill "$pid"; wait "$pid"
  pack
done
timeout 60 build-release/bench/vkreduce-bench --reduce-only --scan-only --pcie --max-log2 28 --reps 10 > "$o/pcie.txt" 2>&1; echo "pcie rc=$?"
kill $smi
pack
for v in old new; do for round in 1 2; do echo "== $v $round"; grep -E "^scan" "$o/scan-$v-$round.txt"; done; done
grep -E "scan" "$o/torch.txt" | head
for wg in 1056 2112 4224 528; do echo "== wg $wg"; grep -E "^reduce|copy kernel" "$o/wg-$wg.txt"; done
cat "$o/shm-old.txt" "$o/shm-new.txt"; grep pcie "$o/pcie.txt"
