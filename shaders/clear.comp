#version 460
// clear.comp: zeroes `words` 32-bit words at `dst`: the tile status flags and tile counter
// of a single-pass scan, which must start at zero for every scan.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_scalar_block_layout : require

layout(local_size_x = 256) in;
layout(buffer_reference, scalar, buffer_reference_align = 4) writeonly buffer Words { uint v[]; };
layout(push_constant, scalar) uniform Params {
	uvec2 dst;
	uint words;
} pc;

void main()
{
	uint stride = gl_NumWorkGroups.x * 256u;
	for (uint i = gl_GlobalInvocationID.x; i < pc.words; i += stride)
		Words(pc.dst).v[i] = 0u;
}
