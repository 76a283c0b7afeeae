#!/usr/bin/env bash
# Session 35 run 2. (a) The f64 sum and product scans rows-scanned-in-chunk at 16 rows (new2)
# against session 34's build (base) at 2^28, inclusive and exclusive, two rounds, with the
# i64 and u64 ones as controls (the same code in both builds); registers; 15 rows; torch's
# scans in the same run; new2's scan tests. (b) One synchronous client: in each fresh daemon
# two benches, one with the client library's default polling window (VKR_CLIENT_SPIN_US=50)
# and one with 200 us, their order alternating between daemons; the bench now reports how
# often the client slept per call.
# Run as `. .gpu/env.sh; bash docs/data/session35/run2.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; o=/tmp/r2; mkdir -p $o
for v in base new2; do mkdir -p /tmp/$v; tar xJf .exp/s35$v.txz -C /tmp/$v; done
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=timestamp,name,clocks.sm,clocks.mem,power.draw --format=csv -lms 200 > "$o/smi.csv" 2>&1 &
smi=$!
cache=$(mktemp -d)
b=/tmp/new2; export LD_LIBRARY_PATH=$b/client:$LD_LIBRARY_PATH
bench() { # name spin_us
  env VKR_CLIENT_SPIN_US=$2 timeout 60 $b/bench/vkreduce-daemon-bench --socket /tmp/vkr35.sock --no-throughput > "$o/lat-$1.txt" 2>&1
  $b/client/vkreduce --socket /tmp/vkr35.sock stats > "$o/lat-$1-stats.txt" 2>&1
  echo "lat $1 spin=$2 p50=$(awk '/^\| [0-9]/{print $2; exit}' $o/lat-$1.txt) $(grep '^client:' $o/lat-$1.txt)"
}
for i in 1 2 3 4 5 6 7 8; do
  rm -f /tmp/vkr35.sock
  $b/daemon/vkreduced --socket /tmp/vkr35.sock --state-dir $cache 2> "$o/lat-d$i.log" &
  pid=$!
  for _ in $(seq 600); do $b/client/vkreduce --socket /tmp/vkr35.sock ping >/dev/null 2>&1 && break; sleep 0.1; done
  if [ $((i % 2)) = 1 ]; then bench d$i-a 50; bench d$i-b 200; else bench d$i-a 200; bench d$i-b 50; fi
  cat /proc/$pid/task/*/stat | awk '{print $1, $2, $39}' > "$o/lat-d$i-threads.txt"
  grep -H ctxt /proc/$pid/task/*/status >> "$o/lat-d$i-threads.txt"
  kill $pid; wait $pid
done
pack
timeout 60 /tmp/new2/tests/test_kern_scan > "$o/test_kern_scan.txt" 2>&1
echo "test_kern_scan rc=$? $(tail -n 1 $o/test_kern_scan.txt)"
for rows in "" 15; do
  VKR_SCAN_CHUNK_ROWS=$rows VKR_PIPELINE_STATS=1 timeout 60 /tmp/new2/bench/vkreduce-bench --scan-only --ops sum,prod \
    --dtypes f64 --min-log2 10 --max-log2 10 --reps 1 2>&1 | grep scan_chained_f64 | sed 's/Binary.*Local/Local/' > "$o/stats-new2-r${rows:-def}.txt"
done
scan() { # name build rows extra ops dtypes
  VKR_SCAN_CHUNK_ROWS=$3 timeout 150 /tmp/$2/bench/vkreduce-bench --scan-only $4 --ops $5 --dtypes $6 \
    --min-log2 28 --max-log2 28 --reps 20 --csv "$o/scan-$1.csv" > "$o/scan-$1.txt" 2>&1
  echo "scan $1 rc=$? $(date +%T) $(grep -c WRONG $o/scan-$1.txt) wrong"
  grep -E "^scan" "$o/scan-$1.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo
  pack
}
for round in 1 2; do
  scan base$round base "" "" sum,prod f64,i64,u64
  scan new2-$round new2 "" "" sum,prod f64,i64,u64
  scan base-x$round base "" --exclusive sum,prod f64
  scan new2-x$round new2 "" --exclusive sum,prod f64
done
scan new2-r15 new2 15 "" sum,prod f64
timeout 60 python3 bench/torch_bench.py --kinds scan --min-log2 28 --max-log2 28 --reps 20 \
  --dtypes f32,f64,i64 --csv "$o/torch-scan.csv" > "$o/torch-scan.txt" 2>&1
echo "torch scan rc=$? $(date +%T)"; grep -E "^scan" "$o/torch-scan.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo
kill $smi; rm -rf $cache; pack
