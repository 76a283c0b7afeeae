#version 460
// scan_chained.comp: single-pass prefix scan with decoupled look-back and decoupled
// fallback. The input is read once and the output written once: 2n element transfers
// instead of reduce-then-scan's 3n.
//
// Each workgroup claims the next tile from a counter (so every earlier tile belongs to a
// workgroup that has already started), loads its 512 slots of ITEMS elements into
// registers, runs the Blelloch up-sweep and publishes the tile's aggregate A(t) at once.
// Tiles form blocks of BLOCK. A tile's exclusive prefix is Q(b), the prefix before its
// block b, combined with the aggregates of the tiles before it in the block, all read in one
// round trip (one tile per invocation) and folded by a tree. The last tile of a block also
// publishes the block's aggregate B(b) and, once it knows Q(b), the block's inclusive prefix
// Q(b+1). Q(b) comes from a decoupled look-back over blocks: one invocation per earlier
// block, the nearest block whose inclusive prefix is published, and the aggregates of the
// blocks after it. A hop of the look-back spans up to BLOCK blocks (2^20 elements of f32 per
// block), so no chain of prefixes through every tile or every block limits the scan.
//
// Determinism. Floating sums are not associative, so every combination has one fixed shape:
// the aggregates of tiles s..t-1 of a block fold by a tree fixed by their count;
// B(b) = tree(A of the block's first BLOCK-1 tiles) + A(last); the block prefixes are the
// left fold Q(b) = ((B(0) + B(1)) + ...) + B(b-1), so a look-back that finds Q(j+1)
// continues the fold from it in order, and which j it found changes no bit. Tile aggregates
// come from one fixed tree whoever computes them.
//
// Forward progress. Vulkan does not promise that a workgroup which has started keeps running
// while another waits for it, so no wait is unbounded: after pc.patience rounds, a waiting
// workgroup does the stalled work itself (the decoupled fallback). A tile with no aggregate
// yet gets its input reduced by the waiter; a block with no aggregate gets its tiles'
// aggregates gathered and folded by the waiter (both published: the owner and the waiter
// race only to store the same bits); and a look-back window that holds aggregates but no
// prefix makes the waiter look one window further back, down to block 0, whose aggregate is
// its inclusive prefix.
//
// All waiting happens in rounds that every invocation of the workgroup runs to the same
// barriers (a lone invocation spinning while the rest waited at a barrier lost outputs on
// lavapipe).

#include "common.glsl"

layout(local_size_x = WG_SIZE) in;
layout(constant_id = 1) const bool EXCLUSIVE = false;

layout(buffer_reference, scalar, buffer_reference_align = 4) coherent volatile buffer Flags { uint v[]; };
layout(buffer_reference, scalar, buffer_reference_align = ELEM_ALIGN) coherent volatile buffer Values { T v[]; };

layout(push_constant, scalar) uniform Params {
	uvec2 src;      // input elements
	uvec2 dst;      // output elements (may equal src)
	uvec2 flags;    // [0] the tile counter, [1 + t] tile t's state, [1 + tiles + b] block b's; zeroed
	uvec2 values;   // T: tile aggregates, then block aggregates, then block inclusive prefixes
	uint n;
	uint tiles;
	uint vec_ok;    // src and dst are 16-byte aligned: whole slots load and store as vectors
	uint patience;  // rounds a workgroup waits before it does stalled work itself
} pc;

#define AGGREGATE 1u
#define PREFIX 2u
#define BLOCK WG_SIZE // tiles per block, and blocks per look-back window: one per invocation

shared uint s_tile;
shared uint s_nearest; // look-back lane of the nearest inclusive prefix (BLOCK: none)
shared uint s_missing; // lowest lane with no aggregate yet (BLOCK: none)
shared T s_vals[BLOCK];
shared T s_fold;

#include "scan_tile.glsl"
#include "blelloch.glsl"

uint blocks() { return (pc.tiles + BLOCK - 1u) / BLOCK; }
uint tile_flag(uint t) { return 1u + t; }
uint block_flag(uint b) { return 1u + pc.tiles + b; }
uint tile_aggregate_at(uint t) { return t; }
uint block_aggregate_at(uint b) { return pc.tiles + b; }
uint block_prefix_at(uint b) { return pc.tiles + blocks() + b; }

// Stores value, then raises the state; never lowers it (a waiter's copy of an aggregate may
// land after the owner's prefix).
void publish(uint flag, uint at, uint state, T value)
{
	Values(pc.values).v[at] = value;
	memoryBarrierBuffer();
	atomicMax(Flags(pc.flags).v[flag], state);
}

// The aggregate of a tile loaded into vals: its slots folded, then the up-sweep, whose root it
// is. One code path for the owner and the fallback, so both get the same bits. Starts with a
// barrier (temp may be in use until the call) and ends with one.
T tile_aggregate(uint lid, T vals[2][ITEMS])
{
	barrier();
	temp[PAD(lid)] = fold_slot(vals[0]);
	temp[PAD(lid + 256u)] = fold_slot(vals[1]);
	blelloch_upsweep(lid);
	return temp[PAD(SLOTS - 1u)];
}

// The decoupled fallback for a tile: reduces tile m, whose owner has published nothing yet,
// and publishes its aggregate unless the owner did meanwhile. The check comes after the
// loads were consumed: once the owner has published, an in-place scan may overwrite its input.
void fallback_tile(uint lid, uint m)
{
	T theirs[2][ITEMS];
	load_slot(m, lid, theirs[0]);
	load_slot(m, lid + 256u, theirs[1]);
	T aggregate = tile_aggregate(lid, theirs);
	if (lid == 0u) {
		memoryBarrierBuffer();
		if (Flags(pc.flags).v[tile_flag(m)] == 0u)
			publish(tile_flag(m), tile_aggregate_at(m), AGGREGATE, aggregate);
	}
}

// Reads the aggregates of tiles [first, first + count) into s_vals[0, count), waiting for
// them, or reducing a stalled tile after pc.patience rounds. Ends with a barrier.
void gather_tiles(uint lid, uint first, uint count)
{
	Flags flags = Flags(pc.flags);
	uint waited = 0u;
	for (;;) {
		uint state = lid < count ? flags.v[tile_flag(first + lid)] : AGGREGATE;
		barrier(); // every invocation has read the previous round's s_missing
		if (lid == 0u)
			s_missing = BLOCK;
		barrier();
		if (state == 0u)
			atomicMin(s_missing, lid);
		barrier();
		uint missing = s_missing;
		if (missing == BLOCK) {
			memoryBarrierBuffer(); // each value was stored before the state read above
			if (lid < count)
				s_vals[lid] = Values(pc.values).v[tile_aggregate_at(first + lid)];
			barrier();
			return;
		}
		if (++waited >= pc.patience) {
			waited = 0u;
			fallback_tile(lid, first + missing);
		}
	}
}

// Folds s_vals[0, count) (earlier tiles on the left) by a tree whose shape depends on count
// alone; s_vals[count] and above are untouched. count >= 1. Ends with a barrier; every
// invocation gets the result.
T tree_fold(uint lid, uint count)
{
	for (uint k = 1u; k < count; k <<= 1u) {
		if ((lid & (2u * k - 1u)) == 0u && lid + k < count)
			s_vals[lid] = op(s_vals[lid], s_vals[lid + k]);
		barrier();
	}
	T v = s_vals[0];
	barrier(); // s_vals may be rewritten after the call
	return v;
}

// B(b) from the aggregates of block b's tiles in s_vals[0, BLOCK).
T block_aggregate(uint lid)
{
	T last = s_vals[BLOCK - 1u];
	return op(tree_fold(lid, BLOCK - 1u), last);
}

// Appends s_vals[0, count) to s_fold, the farthest (highest lane) first: the left fold, in
// order, by invocation 0. Ends with a barrier.
void fold_in_order(uint lid, uint count)
{
	if (lid == 0u) {
		T x = s_fold;
		for (uint j = count; j > 0u; j--)
			x = op(x, s_vals[j - 1u]);
		s_fold = x;
	}
	barrier();
}

// Q(b), b > 0: the left fold of the aggregates of blocks [0, b), by decoupled look-back.
T block_look_back(uint lid, uint b)
{
	Flags flags = Flags(pc.flags);
	Values values = Values(pc.values);
	uint window = 0u; // windows [0, window) closer to b hold block aggregates only
	uint waited = 0u;
	for (;;) {
		uint back = window * BLOCK + lid + 1u; // this invocation's block: b - back
		bool exists = back <= b;
		uint pb = exists ? b - back : 0u;
		uint state = exists ? flags.v[block_flag(pb)] : AGGREGATE;
		bool prefix = exists && (state == PREFIX || (pb == 0u && state != 0u));
		barrier(); // every invocation has read the previous round's s_nearest and s_missing
		if (lid == 0u) {
			s_nearest = BLOCK;
			s_missing = BLOCK;
		}
		barrier();
		if (prefix)
			atomicMin(s_nearest, lid);
		barrier();
		uint nearest = s_nearest;
		if (exists && state == 0u && lid < nearest)
			atomicMin(s_missing, lid);
		barrier();
		uint missing = s_missing;

		if (nearest < BLOCK && missing == BLOCK) {
			memoryBarrierBuffer(); // each value was stored before the state read above
			if (lid <= nearest)
				s_vals[lid] = values.v[lid == nearest && pb != 0u ? block_prefix_at(pb)
									  : block_aggregate_at(pb)];
			barrier();
			if (lid == 0u)
				s_fold = s_vals[nearest];
			fold_in_order(lid, nearest);
			for (uint w = window; w > 0u; w--) {
				s_vals[lid] = values.v[block_aggregate_at(b - ((w - 1u) * BLOCK + lid + 1u))];
				barrier();
				fold_in_order(lid, BLOCK);
			}
			return s_fold;
		}

		if (++waited < pc.patience)
			continue;
		waited = 0u;
		if (missing < BLOCK) {
			// The fallback for a block: gather (or compute) its tiles' aggregates and fold them.
			uint m = b - (window * BLOCK + missing + 1u);
			gather_tiles(lid, m * BLOCK, BLOCK);
			T aggregate = block_aggregate(lid);
			if (lid == 0u)
				publish(block_flag(m), block_aggregate_at(m), AGGREGATE, aggregate);
		} else {
			window++; // a window of block aggregates and no prefix yet: look further back
		}
	}
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
	T total = tile_aggregate(lid, vals);
	if (lid == 0u) // successors may use it from now on
		publish(tile_flag(tile), tile_aggregate_at(tile), AGGREGATE, total);

	// The down-sweep turns the up-swept tree into each slot's exclusive prefix in the tile.
	barrier(); // every invocation has read the root
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

	// The tiles before this one in its block; the last tile publishes the block's aggregate.
	uint block = tile / BLOCK, count = tile - block * BLOCK;
	T inner = NEUTRAL, block_total = NEUTRAL;
	if (count > 0u) {
		gather_tiles(lid, block * BLOCK, count);
		inner = tree_fold(lid, count);
	}
	if (count == BLOCK - 1u) {
		block_total = op(inner, total);
		if (lid == 0u)
			publish(block_flag(block), block_aggregate_at(block), AGGREGATE, block_total);
	}
	// The blocks before it.
	T excl = inner;
	if (block > 0u) {
		T q = block_look_back(lid, block);
		excl = count > 0u ? op(q, inner) : q;
		if (count == BLOCK - 1u && lid == 0u)
			publish(block_flag(block), block_prefix_at(block), PREFIX, op(q, block_total));
	}

	store_slot(tile, lid, op(excl, slot_prefix[0]), vals[0], EXCLUSIVE);
	store_slot(tile, lid + 256u, op(excl, slot_prefix[1]), vals[1], EXCLUSIVE);
}
