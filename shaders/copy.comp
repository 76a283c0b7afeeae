#version 460
// copy.comp: copies 16-byte vectors from src to dst with a grid stride. The benchmark's
// measure of the device's own copy bandwidth: what any kernel that reads and writes memory
// through the shader cores can reach (vkCmdCopyBuffer may use a copy engine instead, which on
// the H200 reached a fifth of this).
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_scalar_block_layout : require

layout(local_size_x = 256) in;
layout(buffer_reference, scalar, buffer_reference_align = 16) readonly buffer Src { uvec4 v[]; };
layout(buffer_reference, scalar, buffer_reference_align = 16) writeonly buffer Dst { uvec4 v[]; };
layout(push_constant, scalar) uniform Params {
	uvec2 src;
	uvec2 dst;
	uint vecs;
} pc;

void main()
{
	uint stride = gl_NumWorkGroups.x * 256u;
	Src src = Src(pc.src);
	Dst dst = Dst(pc.dst);
	uint i = gl_GlobalInvocationID.x;
	for (; i + stride < pc.vecs; i += 2u * stride) {
		uvec4 a = src.v[i];
		uvec4 b = src.v[i + stride];
		dst.v[i] = a;
		dst.v[i + stride] = b;
	}
	if (i < pc.vecs)
		dst.v[i] = src.v[i];
}
