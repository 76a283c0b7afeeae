#version 460
// read.comp: reads 16-byte vectors with a grid stride, two loads in flight per iteration (as
// the reduction's pass 0 loads them), and writes nothing unless their xor happens to equal
// pc.magic (so the loads cannot be dropped). The benchmark's measure of the device's read
// bandwidth at a reduction's size: what a kernel that only reads the array, with the same
// launch and drain, can reach.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_scalar_block_layout : require

layout(local_size_x = 256) in;
layout(buffer_reference, scalar, buffer_reference_align = 16) readonly buffer Src { uvec4 v[]; };
layout(buffer_reference, scalar, buffer_reference_align = 16) writeonly buffer Dst { uvec4 v[]; };
layout(push_constant, scalar) uniform Params {
	uvec2 src;
	uvec2 dst; // one vector
	uint vecs;
	uint magic;
} pc;

void main()
{
	uint stride = gl_NumWorkGroups.x * 256u;
	Src src = Src(pc.src);
	uint i = gl_GlobalInvocationID.x;
	uvec4 a = uvec4(0u), b = uvec4(0u);
	for (; i + stride < pc.vecs; i += 2u * stride) {
		a ^= src.v[i];
		b ^= src.v[i + stride];
	}
	if (i < pc.vecs)
		a ^= src.v[i];
	a ^= b;
	if (a == uvec4(pc.magic))
		Dst(pc.dst).v[0] = a;
}
