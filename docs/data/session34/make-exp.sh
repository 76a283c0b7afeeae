#!/usr/bin/env bash
# Packs the release build of HEAD that run2.sh carries, as .exp/s34head.txz (not in git).
# Run from the repository root on the development machine after
#   meson setup build-release --buildtype=release && meson compile -C build-release
set -euo pipefail
mkdir -p .exp
tar cJf .exp/s34head.txz -C build-release bench/vkreduce-bench tests/test_kern_reduce tests/test_gpu \
  tests/test_client_e2e client/vkreduce daemon/vkreduced client/libvkreduce.so \
  client/libvkreduce.so.0 client/libvkreduce.so.0.1.0 bench/vkreduce-shm-bench
echo ".exp/s34head.txz: $(git rev-parse --short HEAD)"
