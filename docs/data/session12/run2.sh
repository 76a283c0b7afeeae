#!/usr/bin/env bash
# Session 12 run 2: registers and 2^28 scans of four look-back builds (old = 17a0763, new =
# ballots + shuffle tree, vb = ballots only, vt = shuffle tree only), interleaved, two rounds;
# reductions with 1056 against 2112 workgroups from 2^24 to 2^28, two rounds; the
# shared-memory scan through the old and the new daemon.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -lms 500 > "$o/smi.csv" 2>&1 &
smi=$!
bin() { case $1 in old) echo .exp/old/vkreduce-bench;; new) echo build-release/bench/vkreduce-bench;; *) echo .exp/$1-bench;; esac; }
for v in old new vb vt; do
  VKR_COMPILE_ON_FIRST_USE=1 VKR_PIPELINE_STATS=1 timeout 60 $(bin $v) --scan-only --ops sum,max --dtypes f32,i32,f64 \
    --min-log2 20 --max-log2 20 --reps 3 > "$o/stats-$v.txt" 2>&1; echo "stats $v rc=$?"
done
pack
for round in 1 2; do
  for v in old new vb vt; do
    timeout 100 $(bin $v) --scan-only --ops sum,max --dtypes f32,i32 --min-log2 28 --max-log2 28 --reps 10 \
      --csv "$o/scan-$v-$round.csv" > "$o/scan-$v-$round.txt" 2>&1
    echo "scan $v round $round rc=$? wrong=$(grep -c WRONG "$o/scan-$v-$round.txt")"
  done
  pack
done
for round in 1 2; do
  for wg in 2112 1056; do
    VKR_REDUCE_WORKGROUPS=$wg timeout 100 build-release/bench/vkreduce-bench --reduce-only --ops sum,max,count --dtypes f32,i32,f64 \
      --min-log2 24 --max-log2 28 --reps 20 --csv "$o/wg-$wg-$round.csv" > "$o/wg-$wg-$round.txt" 2>&1
    echo "workgroups $wg round $round rc=$? wrong=$(grep -c WRONG "$o/wg-$wg-$round.txt")"
    pack
  done
done
for v in old new; do
  if [ $v = old ]; then d=.exp/old/vkreduced; else d=build-release/daemon/vkreduced; fi
  sock=/tmp/vkr-s12-$v.sock; rm -f "$sock"
  $d --socket "$sock" 2> "$o/daemon-$v.log" &
  pid=$!
  for _ in $(seq 1200); do build-release/client/vkreduce --socket "$sock" ping >/dev/null 2>&1 && break; sleep 0.1; done
  timeout 60 build-release/bench/vkreduce-shm-bench --socket "$sock" --mib 1024 --reps 5 > "$o/shm-$v.txt" 2>&1; echo "shm $v rc=$?"
  kill "$pid"; wait "$pid"
  pack
done
kill $smi
pack
for v in old new vb vt; do echo "== stats $v"; grep -i 'chained' "$o/stats-$v.txt" | head -8; done
for v in old new vb vt; do for round in 1 2; do echo "== $v $round"; grep -E "^scan" "$o/scan-$v-$round.txt"; done; done
for round in 1 2; do for wg in 2112 1056; do echo "== wg $wg round $round"; grep -E "^reduce|copy kernel" "$o/wg-$wg-$round.txt"; done; done
cat "$o/shm-old.txt" "$o/shm-new.txt"
