#version 460
// scan_chained.comp: single-pass prefix scan (the input is read once and the output written
// once: 2n element transfers instead of reduce-then-scan's 3n), with a look-back over a
// fixed tree of tile aggregates, so that floating results are deterministic.
//
// Each workgroup claims the next tile from a counter (every tile before it belongs to a
// workgroup that has already started), loads its 512 slots of ITEMS elements into
// registers, and runs the Blelloch up-sweep. Its aggregate is block (0, t) of a dyadic tree:
// block (l, i) covers tiles [i * 2^l, (i + 1) * 2^l) and is op(block(l-1, 2i), block(l-1,
// 2i+1)), published by the tile that completes it, which waits only for the left half's
// block: an aggregate, published right after an up-sweep, never a prefix. The prefix before
// tile t is the left fold of the at most log2(tiles) blocks of the binary decomposition of
// [0, t), read in parallel. So there is no chain of prefixes through all tiles (the first
// version of this kernel, a classic look-back that folded every aggregate back to the last
// published prefix in order, ran at 0.65 TB/s on the H200), and every association is fixed
// by the tile indices alone: the same input gives the same bits on every run.
//
// Waiting assumes that a workgroup which has started keeps running while another spins,
// which holds on the devices vkreduce runs on (NVIDIA, AMD, Intel, lavapipe) though Vulkan
// does not promise it; tiles are claimed in order, so every block waited for belongs to
// workgroups that have started.

#include "common.glsl"

layout(local_size_x = WG_SIZE) in;
layout(constant_id = 1) const bool EXCLUSIVE = false;


layout(buffer_reference, scalar, buffer_reference_align = 4) coherent volatile buffer Flags { uint v[]; };
layout(buffer_reference, scalar, buffer_reference_align = ELEM_ALIGN) coherent buffer Blocks { T v[]; };

layout(push_constant, scalar) uniform Params {
	uvec2 src;      // input elements
	uvec2 dst;      // output elements (may equal src)
	uvec2 flags;    // the tile counter, then one ready flag per block, all levels; zeroed
	uvec2 blocks;   // one T per block, all levels, level 0 first
	uint n;
	uint tiles;
	uint vec_ok;    // src and dst are 16-byte aligned: whole slots load and store as vectors
	uint spin;      // wait for a flag inside the round (GPUs) rather than across rounds
} pc;

shared uint s_tile;
shared T s_parts[32];   // values of the blocks of [0, t), by bit of t
shared uint s_pending;  // bits of t whose block is not read yet
shared uint s_combining; // 1 while invocation 0 has blocks left to complete

#include "scan_tile.glsl"
#include "blelloch.glsl"

// Index of block (level, i) in the flag and value arrays: levels are stored one after the
// other, level k holding ceil(tiles / 2^k) blocks. The tile counter is flags[0].
uint block_index(uint level, uint i)
{
	uint offset = 0u;
	for (uint k = 0u; k < level; k++)
		offset += (pc.tiles + (1u << k) - 1u) >> k;
	return offset + i;
}

void publish_block(uint index, T value)
{
	Blocks(pc.blocks).v[index] = value;
	memoryBarrierBuffer();
	atomicExchange(Flags(pc.flags).v[1u + index], 1u);
}

void main()
{
	uint lid = gl_LocalInvocationID.x;
	if (lid == 0u)
		s_tile = atomicAdd(Flags(pc.flags).v[0], 1u);
	barrier();
	uint tile = s_tile;
	if (tile >= pc.tiles)
		return; // the grid is rounded up to whole rows; the whole workgroup leaves together

	T vals[2][ITEMS];
	load_slot(tile, lid, vals[0]);
	load_slot(tile, lid + 256u, vals[1]);
	temp[PAD(lid)] = fold_slot(vals[0]);
	temp[PAD(lid + 256u)] = fold_slot(vals[1]);
	blelloch_upsweep(lid);

	// The up-sweep left the tile's total at the root; the down-sweep replaces it.
	T total = temp[PAD(SLOTS - 1u)];
	barrier();
	if (lid == 0u)
		temp[PAD(SLOTS - 1u)] = NEUTRAL;
	uint offset = SLOTS;
	for (uint d = 1u; d < SLOTS; d <<= 1u) {
		offset >>= 1u;
		barrier();
		if (lid < d) {
			uint ai = PAD(offset * (2u * lid + 1u) - 1u);
			uint bi = PAD(offset * (2u * lid + 2u) - 1u);
			T left = temp[ai];
			temp[ai] = temp[bi];
			temp[bi] = op(temp[bi], left);
		}
	}
	barrier();
	T slot_prefix[2] = { temp[PAD(lid)], temp[PAD(lid + 256u)] };

	// Publish the tile's aggregate (successors wait for it). Then, together: invocation 0
	// completes every block this tile closes (while its block is a right half, combine it
	// with the left half), and invocation b < 32 reads block (b, (t >> (b + 1)) << 1) for
	// each bit b of t: the blocks of [0, t). All waiting is a loop of rounds that every
	// invocation runs to the same barriers; a tight spin by one invocation, with the rest of
	// its workgroup parked at a barrier, lost outputs on lavapipe. On GPUs (pc.spin) the
	// waiting invocations spin within a round, which saves a round trip per tree level.
	if (lid == 0u) {
		publish_block(block_index(0u, tile), total);
		s_pending = tile;
		s_combining = tile & 1u;
	}
	barrier();
	T v = total; // invocation 0's running block value
	uint level = 0u, i = tile;
	Flags flags = Flags(pc.flags);
	Blocks blocks = Blocks(pc.blocks);
	for (;;) {
		uint pending = s_pending, combining = s_combining;
		if (pending == 0u && combining == 0u)
			break;
		barrier(); // everyone has read the state before it changes
		if (lid == 0u && combining != 0u) {
			uint left = block_index(level, i - 1u);
			if (pc.spin != 0u)
				while (flags.v[1u + left] == 0u) {
				}
			if (flags.v[1u + left] != 0u) {
				memoryBarrierBuffer();
				v = op(blocks.v[left], v);
				i >>= 1u;
				level += 1u;
				publish_block(block_index(level, i), v);
				if ((i & 1u) == 0u)
					s_combining = 0u;
			}
		}
		if (lid < 32u && ((pending >> lid) & 1u) == 1u) {
			uint part = block_index(lid, (tile >> (lid + 1u)) << 1u);
			if (pc.spin != 0u)
				while (flags.v[1u + part] == 0u) {
				}
			if (flags.v[1u + part] != 0u) {
				memoryBarrierBuffer();
				s_parts[lid] = blocks.v[part];
				atomicAnd(s_pending, ~(1u << lid));
			}
		}
		barrier();
	}

	// The prefix before the tile: its blocks from the earliest (highest bit) on, in order.
	T excl = NEUTRAL;
	for (int b = 31; b >= 0; b--)
		if (((tile >> uint(b)) & 1u) == 1u)
			excl = op(excl, s_parts[b]);

	// Output: each slot's prefix, then its items in order.
	store_slot(tile, lid, op(excl, slot_prefix[0]), vals[0], EXCLUSIVE);
	store_slot(tile, lid + 256u, op(excl, slot_prefix[1]), vals[1], EXCLUSIVE);
}
