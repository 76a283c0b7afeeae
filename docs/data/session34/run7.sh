#!/usr/bin/env bash
# Session 34 run 7: the session's last build (e078367: the review's fixes, among them the NaN
# test over misaligned arrays, scalar heads and tails, and arrays in parts) tested on the
# device: test_gpu, test_kern_reduce with the default fold and with VKR_REDUCE_FOLD=device,
# and the end-to-end suite against its daemon. .exp/s34check.txz packed by hand from
# build-release (tests/test_kern_reduce, tests/test_gpu, tests/test_client_e2e,
# daemon/vkreduced, client/vkreduce, client/libvkreduce.so*).
# Run as `. .gpu/env.sh; bash docs/data/session34/run7.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
b=/tmp/check; mkdir -p $b; tar xJf .exp/s34check.txz -C $b
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=name,driver_version --format=csv > "$o/gpu.txt" 2>&1
for t in gpu kern_reduce; do
  timeout 100 $b/tests/test_$t > "$o/test_$t.txt" 2>&1; echo "test_$t rc=$? $(date +%T)"; pack
done
VKR_REDUCE_FOLD=device timeout 100 $b/tests/test_kern_reduce > "$o/test_kern_reduce_device_fold.txt" 2>&1
echo "test_kern_reduce VKR_REDUCE_FOLD=device rc=$? $(date +%T)"; pack
VKREDUCED=$b/daemon/vkreduced timeout 120 $b/tests/test_client_e2e > "$o/test_client_e2e.txt" 2>&1
echo "test_client_e2e rc=$? $(date +%T)"; pack
