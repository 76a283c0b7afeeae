#!/usr/bin/env bash
# build.sh NAME VARIANTS: tree at HEAD, reduce.comp from mk.py VARIANTS (0, d, v), r = restrict Vecs
set -e
name=$1; var=$2
dir=/tmp/q/b-$name; rm -rf $dir; mkdir -p $dir
git -C /work/main archive HEAD | tar x -C $dir
python3 /tmp/q/mk.py $dir/shaders/reduce.comp ${var//r/}
[[ $var == *r* ]] && sed -i 's/readonly buffer Vecs/readonly restrict buffer Vecs/' $dir/shaders/common.glsl
[[ $var == *v* ]] && sed -i 's/\t\t.scalarBlockLayout = VK_TRUE,/\t\t.scalarBlockLayout = VK_TRUE,\n\t\t.vulkanMemoryModel = VK_TRUE,\n\t\t.vulkanMemoryModelDeviceScope = VK_TRUE,/' $dir/daemon/gpu.c
cd $dir && meson setup b --buildtype=release >/dev/null && meson compile -C b bench/vkreduce-bench > build.log
cp b/bench/vkreduce-bench /work/main/.exp/vkreduce-bench-$name
echo built $name
