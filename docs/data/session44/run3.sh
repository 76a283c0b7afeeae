#!/usr/bin/env bash
# Session 44 run 3: on an H200, run 2 first. On any GPU: why do 16 MiB shm requests take
# 0.05-0.09 ms more when they alternate with 1 GiB ones (S42-1)? One daemon of HEAD's build
# (.exp/s44head.txz), 16 MiB requests alone and alternating with 64, 256 and 1024 MiB ones,
# reduces (the GPU only reads the client's pages) and scans (it writes the second region
# too), three rounds in turn. If the extra time grows with the partner's size for both, the
# GPU's (or IOMMU's) translations of the client's pages are the suspect; if only scans
# show it, the written lines; if neither grows, the host side.
# Usage: `. .gpu/env.sh; [PROBE_ONLY=1] bash docs/data/session44/run3.sh $OUT` with .gpu/ and .exp/ carried
# (PROBE_ONLY=1: the probe alone on an H200 too).
OUT=${1:?}; o=/tmp/s44r3; mkdir -p $o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $o/gpu.txt
[ -z "$PROBE_ONLY" ] && grep -q H200 $o/gpu.txt && bash docs/data/session44/run2.sh $OUT
b=/tmp/head; mkdir -p $b; tar xJf .exp/s44head.txz -C $b
export LD_LIBRARY_PATH=$b/client:$LD_LIBRARY_PATH
sock=/tmp/vkr44.sock; st=$(mktemp -d)
$b/daemon/vkreduced --socket $sock --state-dir $st 2> $o/daemon.log & pid=$!
for _ in $(seq 600); do $b/client/vkreduce --socket $sock ping >/dev/null 2>&1 && break; sleep 0.05; done
for round in 1 2 3; do
  for kind in reduce scan; do
    reps=40; [ $kind = scan ] && reps=20
    for mix in 16 16,64 16,256 16,1024; do
      f=$o/$kind-$mix-r$round.txt
      timeout 100 $b/bench/vkreduce-shm-bench --socket $sock --mib $mix --reps $reps --only $kind > $f 2>&1 \
        || echo "rc $? $kind $mix"
      echo "r$round $kind $mix: $(grep -o '[a-z]* sum f32 of [0-9]* MiB.*median [0-9.]* ms' $f | sed 's/.* of \([0-9]*\) MiB.*median \([0-9.]*\) ms/\1 MiB \2 ms/' | tr '\n' ';')" | tee -a $o/summary.txt
    done
  done
  tar czf $OUT/run3.tgz -C $o .
done
$b/client/vkreduce --socket $sock stats > $o/stats.txt
kill $pid; wait $pid
tar czf $OUT/run3.tgz -C $o .
