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
//
// Coalesced tiles. An invocation's slots are 32 contiguous bytes, so a warp-wide load of
// slot vectors touches every other 16 bytes of 1 KiB. Whole, aligned tiles (coalesced_tile)
// are read as rows instead (invocation lid takes vectors lid, lid + 256, ...: each load
// instruction of the workgroup covers 4 KiB), the reduce pass folds them as they come, and
// the apply pass hands them to their slots' owners through shared memory, half a tile at a
// time (8 KiB), and writes its output back the same way. On the H200 (session 4, runs 6 and
// 8, 2^28): f32/i32 sum 923 -> 851 us, f64 sum 2463 -> 1773 us. Float min/max got slower
// with rows then (f32 max 1008 -> 1214 us, f64 max 2553 -> 2724 us), when each combination
// compared order keys; they now combine keys held from the load on (scan_op.glsl), as
// integers do.

#include "common.glsl"
#include "scan_op.glsl"

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

#define ROW_VECS (SLOTS * SLOT_VECS / WG_SIZE) // a tile's vectors per invocation, in rows
#define HALF_VECS (SLOTS / 2u * SLOT_VECS)     // the vectors of half a tile
shared VT s_stage[HALF_VECS];

bool coalesced_tile(uint t)
{
	return pc.vec_ok != 0u && (t + 1u) * TILE <= pc.n;
}

// Whole tile t as rows: x[k] holds the tile's vector k * 256 + lid.
void load_rows(uint t, uint lid, out VT x[ROW_VECS])
{
	Vecs vecs = Vecs(pc.src);
	uint base = t * (TILE / VEC);
	for (uint k = 0u; k < ROW_VECS; k++)
		x[k] = scan_in_vec(vecs.v[base + k * WG_SIZE + lid]);
}

// Two partial folds of tile t which, over the workgroup, cover each of its elements once:
// slots lid and lid + 256, or with rows invocation lid's vectors of each half. The operators
// commute, so the total's order matters only to float rounding, which stays the same from
// run to run.
void fold_tile(uint t, uint lid, out T s0, out T s1)
{
	if (!coalesced_tile(t)) {
		T vals[ITEMS];
		load_slot(t, lid, vals);
		s0 = fold_slot(vals);
		load_slot(t, lid + 256u, vals);
		s1 = fold_slot(vals);
		return;
	}
	// Rows 0 and 1 are the first half of the tile, rows 2 and 3 the second.
	VT x[ROW_VECS];
	load_rows(t, lid, x);
	T h[2];
	for (uint half_ = 0u; half_ < 2u; half_++) {
		T v = x[2u * half_][0];
		for (uint c = 1u; c < VEC; c++)
			v = scan_op(v, x[2u * half_][c]);
		for (uint c = 0u; c < VEC; c++)
			v = scan_op(v, x[2u * half_ + 1u][c]);
		h[half_] = v;
	}
	s0 = h[0];
	s1 = h[1];
}

// Slots lid and lid + 256 of tile t into vals[0] and vals[1].
void load_tile(uint t, uint lid, out T vals[2][ITEMS])
{
	if (!coalesced_tile(t)) {
		load_slot(t, lid, vals[0]);
		load_slot(t, lid + 256u, vals[1]);
		return;
	}
	VT x[ROW_VECS];
	load_rows(t, lid, x);
	// Half h of the tile is rows 2h and 2h + 1, and slots h * 256 .. h * 256 + 255.
	for (uint h = 0u; h < 2u; h++) {
		barrier(); // s_stage is free
		s_stage[lid] = x[2u * h];
		s_stage[WG_SIZE + lid] = x[2u * h + 1u];
		barrier();
		for (uint k = 0u; k < SLOT_VECS; k++) {
			VT v = s_stage[lid * SLOT_VECS + k];
			for (uint c = 0u; c < VEC; c++)
				vals[h][k * VEC + c] = v[c];
		}
	}
}

// Writes the scan of slots lid and lid + 256 of tile t given their prefixes.
void store_tile(uint t, uint lid, T prefix[2], T vals[2][ITEMS])
{
	if (!coalesced_tile(t)) {
		store_slot(t, lid, prefix[0], vals[0], EXCLUSIVE);
		store_slot(t, lid + 256u, prefix[1], vals[1], EXCLUSIVE);
		return;
	}
	OutVecs outv = OutVecs(pc.dst);
	uint base = t * (TILE / VEC);
	for (uint h = 0u; h < 2u; h++) {
		T out_vals[ITEMS];
		scan_slot(prefix[h], vals[h], EXCLUSIVE, out_vals);
		barrier(); // s_stage is free
		for (uint k = 0u; k < SLOT_VECS; k++) {
			VT v;
			for (uint c = 0u; c < VEC; c++)
				v[c] = out_vals[k * VEC + c];
			s_stage[lid * SLOT_VECS + k] = v;
		}
		barrier();
		outv.v[base + h * HALF_VECS + lid] = s_stage[lid];
		outv.v[base + h * HALF_VECS + WG_SIZE + lid] = s_stage[WG_SIZE + lid];
	}
}

void main()
{
	uint lid = tile_lane(); // owns slots lid and lid + 256
	Elems totals = Elems(pc.totals);

#if defined(KERNEL_SCAN_REDUCE)
	for (uint t = gl_WorkGroupID.x; t < pc.tiles; t += gl_NumWorkGroups.x) {
		T s0, s1;
		fold_tile(t, lid, s0, s1);
#if defined(TILE_BLELLOCH)
		// A plain tree is enough for a total: sequential addressing over 256 entries.
		barrier(); // the previous tile's reads of temp are done
		temp[lid] = scan_op(s0, s1);
		for (uint k = WG_SIZE / 2u; k > 0u; k >>= 1u) {
			barrier();
			if (lid < k)
				temp[lid] = scan_op(temp[lid], temp[lid + k]);
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
	T carry = SCAN_NEUTRAL;
	for (uint base = 0u; base < pc.tiles; base += SLOTS * TOTALS_PER_SLOT) {
		T vals[2][TOTALS_PER_SLOT], sums[2], state[2], ex[2];
		for (uint h = 0u; h < 2u; h++) {
			uint first = base + (lid + h * 256u) * TOTALS_PER_SLOT;
			T s = SCAN_NEUTRAL;
			for (uint j = 0u; j < TOTALS_PER_SLOT; j++) {
				vals[h][j] = first + j < pc.tiles ? totals.v[first + j] : SCAN_NEUTRAL;
				s = scan_op(s, vals[h][j]);
			}
			sums[h] = s;
		}
		T block_total = tile_upsweep(lid, sums[0], sums[1], state);
		tile_downsweep(lid, state, ex);
		for (uint h = 0u; h < 2u; h++) {
			uint first = base + (lid + h * 256u) * TOTALS_PER_SLOT;
			T p = scan_op(carry, ex[h]);
			for (uint j = 0u; j < TOTALS_PER_SLOT && first + j < pc.tiles; j++) {
				totals.v[first + j] = p;
				p = scan_op(p, vals[h][j]);
			}
		}
		carry = scan_op(carry, block_total); // the next block's tile_upsweep starts with a barrier
	}
#elif defined(KERNEL_SCAN_APPLY)
	for (uint t = gl_WorkGroupID.x; t < pc.tiles; t += gl_NumWorkGroups.x) {
		T vals[2][ITEMS], state[2], ex[2];
		load_tile(t, lid, vals);
		T carry = totals.v[t];
		tile_upsweep(lid, fold_slot(vals[0]), fold_slot(vals[1]), state);
		tile_downsweep(lid, state, ex); // the next tile's tile_upsweep starts with a barrier
		T prefix[2] = { scan_op(carry, ex[0]), scan_op(carry, ex[1]) };
		store_tile(t, lid, prefix, vals);
	}
#else
#error "no KERNEL_SCAN_ defined"
#endif
}
