#!/usr/bin/env bash
# Packs a release build for the runs here (not in git): `make-exp.sh NAME [BUILD]` writes
# .exp/s35NAME.txz from BUILD (default build-release, HEAD's). Run 1 carried new (4002148)
# and base (6f3ff33, session 34's last: a worktree's build-release); run 2 base and new2.
# Run from the repository root after
#   meson setup build-release --buildtype=release && meson compile -C build-release
set -euo pipefail
name=${1:?usage: make-exp.sh NAME [BUILD]}
mkdir -p .exp
files=(bench/vkreduce-bench bench/vkreduce-daemon-bench tests/test_kern_scan tests/test_client_e2e
  client/vkreduce daemon/vkreduced client/libvkreduce.so client/libvkreduce.so.0
  client/libvkreduce.so.0.1.0)
tar cJf ".exp/s35$name.txz" -C "${2:-build-release}" "${files[@]}"
ls -l ".exp/s35$name.txz"
