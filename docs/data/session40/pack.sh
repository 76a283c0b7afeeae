#!/usr/bin/env bash
# Packs a release build for session 40's runs (not in git): `pack.sh NAME [BUILD]` writes
# .exp/s40NAME.txz from BUILD (default build-release). Run from the repository root after
#   meson setup build-release --buildtype=release && meson compile -C build-release
set -euo pipefail
name=${1:?usage: pack.sh NAME [BUILD]}
mkdir -p .exp
files=(bench/vkreduce-bench bench/vkreduce-daemon-bench bench/vkreduce-shm-bench tests/test_kern_scan
  tests/test_client_e2e client/vkreduce daemon/vkreduced client/libvkreduce.so client/libvkreduce.so.0
  client/libvkreduce.so.0.1.0)
tar cJf ".exp/s40$name.txz" -C "${2:-build-release}" "${files[@]}"
ls -l ".exp/s40$name.txz"
