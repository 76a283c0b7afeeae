#!/usr/bin/env bash
# Session 35 run 1. (a) One synchronous client against fresh daemons of session 34's last
# build (base, 6f3ff33) and this session's (new: the polling loop reads the GPU's timeline
# itself; threads named), alternating, with each daemon's threads sampled (which CPU each
# ran on, context switches) and the guest's steal time; then the new build with its loop
# and completion threads pinned to one CPU, and to two CPUs of different cores. (b) The
# 64-bit sum and product scans at 2^28: base against new (rows scanned within their chunk,
# no row scans held to the chunks' meeting), two rounds; registers per pipeline by rows;
# rows swept for the new build; torch's cumsum/cumprod in the same run; the new build's
# scan tests on the device.
# Run as `. .gpu/env.sh; bash docs/data/session35/run1.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
for v in base new; do mkdir -p /tmp/$v; tar xJf .exp/s35$v.txz -C /tmp/$v; done
pack() { tar czf "$out/run.tgz" -C "$o" .; }
{ nproc; lscpu; cat /proc/loadavg; } > "$o/cpu.txt" 2>&1
nvidia-smi --query-gpu=timestamp,name,clocks.sm,clocks.mem,power.draw --format=csv -lms 200 > "$o/smi.csv" 2>&1 &
smi=$!
cache=$(mktemp -d)
steal() { awk '/^cpu /{print $9}' /proc/stat; }
# Every 200 ms (three processes per sample, to disturb little), each thread of the daemon:
# its stat line (name: field 2, the CPU it last ran on: field 39) and context switches.
sample() {
  while kill -0 "$1" 2>/dev/null; do
    echo "t $(date +%s.%N | cut -c1-14)"
    cat /proc/$1/task/*/stat 2>/dev/null | awk '{print "stat", $1, $2, $39}'
    grep -H ctxt /proc/$1/task/*/status 2>/dev/null
    sleep 0.2
  done
}
lat() { # name build pin(none|same|apart) [env...]
  local name=$1 v=$2 pin=$3; shift 3
  local b=/tmp/$v sock=/tmp/vkr35.sock
  rm -f $sock
  env "$@" LD_LIBRARY_PATH=$b/client:$LD_LIBRARY_PATH $b/daemon/vkreduced --socket $sock --state-dir $cache 2> "$o/lat-$name.log" &
  local pid=$!
  for _ in $(seq 600); do LD_LIBRARY_PATH=$b/client:$LD_LIBRARY_PATH $b/client/vkreduce --socket $sock ping >/dev/null 2>&1 && break; sleep 0.1; done
  local ct; ct=$(grep -l '^vkr-complete$' /proc/$pid/task/*/comm 2>/dev/null | head -1 | cut -d/ -f5)
  case $pin in
    same) taskset -pc 3 $pid >/dev/null; [ -n "$ct" ] && taskset -pc 3 $ct >/dev/null ;;
    apart) taskset -pc 3 $pid >/dev/null; [ -n "$ct" ] && taskset -pc 9 $ct >/dev/null ;;
  esac
  sample $pid > "$o/lat-$name-threads.txt" &
  local s0; s0=$(steal)
  LD_LIBRARY_PATH=$b/client:$LD_LIBRARY_PATH timeout 60 $b/bench/vkreduce-daemon-bench --socket $sock --no-throughput > "$o/lat-$name.txt" 2>&1
  echo "steal_ticks $(( $(steal) - s0 ))" >> "$o/lat-$name.txt"
  LD_LIBRARY_PATH=$b/client:$LD_LIBRARY_PATH $b/client/vkreduce --socket $sock stats > "$o/lat-$name-stats.txt" 2>&1
  kill $pid; wait $pid
  local p50 req wake seen
  p50=$(awk '/^\| [0-9]/{print $2; exit}' "$o/lat-$name.txt")
  req=$(awk '$1=="requests_timed"{print $2}' "$o/lat-$name-stats.txt")
  wake=$(awk '$1=="request_wake_ns_total"{print $2}' "$o/lat-$name-stats.txt")
  seen=$(awk '$1=="batches_seen_by_loop"{print $2}' "$o/lat-$name-stats.txt")
  echo "lat $name p50=$p50 wake/req=$(awk -v w=$wake -v r=$req 'BEGIN{if(r>0)printf "%.1f",w/r/1000}') us seen_by_loop=$seen/$req"
}
for i in 1 2 3 4 5 6; do lat base$i base none; lat new$i new none; done
for i in 1 2; do lat same$i new same; lat apart$i new apart; done
pack
LD_LIBRARY_PATH=/tmp/new/client:$LD_LIBRARY_PATH timeout 60 /tmp/new/tests/test_kern_scan > "$o/test_kern_scan.txt" 2>&1
echo "test_kern_scan rc=$? $(tail -n 1 $o/test_kern_scan.txt)"
for v in base new; do for rows in "" 8 10 12; do
  VKR_SCAN_CHUNK_ROWS=$rows VKR_PIPELINE_STATS=1 timeout 60 /tmp/$v/bench/vkreduce-bench --scan-only --ops sum,prod \
    --dtypes f64,i64 --min-log2 10 --max-log2 10 --reps 1 2>&1 | grep scan_chained_ | sed 's/Binary.*Local/Local/' > "$o/stats-$v-r${rows:-def}.txt"
done; done
echo "stats $(date +%T)"; pack
scan() { # name build rows ops dtypes
  VKR_SCAN_CHUNK_ROWS=$3 timeout 130 /tmp/$2/bench/vkreduce-bench --scan-only --ops $4 --dtypes $5 \
    --min-log2 28 --max-log2 28 --reps 20 --csv "$o/scan-$1.csv" > "$o/scan-$1.txt" 2>&1
  echo "scan $1 rc=$? $(date +%T) $(grep -c WRONG $o/scan-$1.txt) wrong"
  grep -E "^scan" "$o/scan-$1.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo
  pack
}
for round in 1 2; do
  scan base$round base "" sum,prod f64,i64,u64
  scan new$round new "" sum,prod f64,i64,u64
done
timeout 60 python3 bench/torch_bench.py --kinds scan --min-log2 28 --max-log2 28 --reps 20 \
  --dtypes f32,f64,i64 --csv "$o/torch-scan.csv" > "$o/torch-scan.txt" 2>&1
echo "torch scan rc=$? $(date +%T)"; grep -E "^scan" "$o/torch-scan.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo; pack
for rows in 8 10 12 16; do scan new-r$rows new $rows sum,prod f64,i64; done
kill $smi; rm -rf $cache; pack
