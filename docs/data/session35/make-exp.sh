#!/usr/bin/env bash
# Packs the two release builds run1.sh carries (not in git): .exp/s35new.txz from
# build-release (HEAD) and .exp/s35base.txz from BASE_BUILD (default /tmp/base/build-release,
# a worktree of 6f3ff33, session 34's last commit). Run from the repository root after
#   meson setup build-release --buildtype=release && meson compile -C build-release
set -euo pipefail
mkdir -p .exp
files=(bench/vkreduce-bench bench/vkreduce-daemon-bench tests/test_kern_scan tests/test_client_e2e
  client/vkreduce daemon/vkreduced client/libvkreduce.so client/libvkreduce.so.0
  client/libvkreduce.so.0.1.0)
tar cJf .exp/s35new.txz -C build-release "${files[@]}"
tar cJf .exp/s35base.txz -C "${BASE_BUILD:-/tmp/base/build-release}" "${files[@]}"
ls -l .exp/s35new.txz .exp/s35base.txz
