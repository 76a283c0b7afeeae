#!/usr/bin/env bash
# Installs what vkreduce needs to build, test and run, from Debian 12's packages.
# Idempotent: does nothing (not even `apt-get update`) when everything is already there.
set -euo pipefail

packages=(
  gcc meson ninja-build pkg-config python3
  glslc                                   # shaders -> SPIR-V (glslang-tools works too)
  libvulkan-dev mesa-vulkan-drivers       # the loader, and lavapipe: Vulkan on the CPU
  vulkan-validationlayers vulkan-tools    # the test suite's validation run; vulkaninfo
  libuv1-dev libmsgpack-dev libcmocka-dev libsystemd-dev
  python3-msgpack systemd                 # protocol conformance and systemd tests
  clang libclang-rt-14-dev                # the libFuzzer harness
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
