#version 460
// scan.comp: multi-block prefix scan by reduce-then-scan, in three dispatches for any n.
//
//   KERNEL_SCAN_REDUCE  each tile of TILE elements -> its total (totals[t])
//   KERNEL_SCAN_TOTALS  one workgroup scans the totals in place (exclusive), block by block
//   KERNEL_SCAN_APPLY   each tile is scanned again with its carry-in = totals[t]
//
// A tile is 512 slots of ITEMS consecutive elements (two 16-byte vectors, scan_tile.glsl);
// each of the 256 invocations owns slots lid and lid + 256 and folds its items serially,
// then the 512 slot sums are scanned across the workgroup (tile_scan.glsl: subgroup
// shuffles, or the Blelloch tree in shared memory in the TILE_BLELLOCH build). The number
// of dispatches never grows with n, and each workgroup walks tiles with a grid stride so any
// tile count fits the device's workgroup-count limit.

#include "common.glsl"

layout(local_size_x = WG_SIZE) in;
layout(constant_id = 1) const bool EXCLUSIVE = false;

// Totals folded serially per slot in KERNEL_SCAN_TOTALS: one workgroup covers 4096 tile
// totals per step, so 2^31 elements take at most 256 steps.
#define TOTALS_PER_SLOT 8u

layout(push_constant, scalar) uniform Params {
	uvec2 src;    // input elements
	uvec2 dst;    // output elements (may equal src)
	uvec2 totals; // one T per tile
	uint n;
	uint tiles;
	uint vec_ok;  // src and dst are 16-byte aligned
} pc;

#include "scan_tile.glsl"
#include "tile_scan.glsl"

void main()
{
	uint lid = tile_lane(); // owns slots lid and lid + 256
	Elems totals = Elems(pc.totals);

#if defined(KERNEL_SCAN_REDUCE)
	for (uint t = gl_WorkGroupID.x; t < pc.tiles; t += gl_NumWorkGroups.x) {
		T vals[ITEMS];
		load_slot(t, lid, vals);
		T s0 = fold_slot(vals);
		load_slot(t, lid + 256u, vals);
		T s1 = fold_slot(vals);
#if defined(TILE_BLELLOCH)
		// A plain tree is enough for a total: sequential addressing over 256 entries.
		barrier(); // the previous tile's reads of temp are done
		temp[lid] = op(s0, s1);
		for (uint k = WG_SIZE / 2u; k > 0u; k >>= 1u) {
			barrier();
			if (lid < k)
				temp[lid] = op(temp[lid], temp[lid + k]);
		}
		if (lid == 0u)
			totals.v[t] = temp[0];
#else
		T state[2];
		T total = tile_upsweep(lid, s0, s1, state);
		if (lid == 0u)
			totals.v[t] = total;
#endif
	}
#elif defined(KERNEL_SCAN_TOTALS)
	T carry = NEUTRAL;
	for (uint base = 0u; base < pc.tiles; base += SLOTS * TOTALS_PER_SLOT) {
		T vals[2][TOTALS_PER_SLOT], sums[2], state[2], ex[2];
		for (uint h = 0u; h < 2u; h++) {
			uint first = base + (lid + h * 256u) * TOTALS_PER_SLOT;
			T s = NEUTRAL;
			for (uint j = 0u; j < TOTALS_PER_SLOT; j++) {
				vals[h][j] = first + j < pc.tiles ? totals.v[first + j] : NEUTRAL;
				s = op(s, vals[h][j]);
			}
			sums[h] = s;
		}
		T block_total = tile_upsweep(lid, sums[0], sums[1], state);
		tile_downsweep(lid, state, ex);
		for (uint h = 0u; h < 2u; h++) {
			uint first = base + (lid + h * 256u) * TOTALS_PER_SLOT;
			T p = op(carry, ex[h]);
			for (uint j = 0u; j < TOTALS_PER_SLOT && first + j < pc.tiles; j++) {
				totals.v[first + j] = p;
				p = op(p, vals[h][j]);
			}
		}
		carry = op(carry, block_total); // the next block's tile_upsweep starts with a barrier
	}
#elif defined(KERNEL_SCAN_APPLY)
	for (uint t = gl_WorkGroupID.x; t < pc.tiles; t += gl_NumWorkGroups.x) {
		T vals[2][ITEMS], state[2], ex[2];
		load_slot(t, lid, vals[0]);
		load_slot(t, lid + 256u, vals[1]);
		T carry = totals.v[t];
		tile_upsweep(lid, fold_slot(vals[0]), fold_slot(vals[1]), state);
		tile_downsweep(lid, state, ex); // the next tile's tile_upsweep starts with a barrier
		store_slot(t, lid, op(carry, ex[0]), vals[0], EXCLUSIVE);
		store_slot(t, lid + 256u, op(carry, ex[1]), vals[1], EXCLUSIVE);
	}
#else
#error "no KERNEL_SCAN_ defined"
#endif
}
