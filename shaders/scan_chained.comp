#version 460
// scan_chained.comp: single-pass prefix scan with decoupled look-back and decoupled
// fallback. The input is read once and the output written once: 2n element transfers
// instead of reduce-then-scan's 3n.
//
// Each workgroup claims the next tile from a counter (so every earlier tile belongs to a
// workgroup that has already started), loads its 512 slots of ITEMS elements into
// registers, runs the Blelloch up-sweep and publishes the tile's AGGREGATE at once. It then
// looks back over a window of WINDOW predecessors, one per invocation, read in one round
// trip: it needs the nearest predecessor that has published its inclusive PREFIX and the
// aggregates of every tile after that one. It publishes its own prefix and writes its tile.
//
// Determinism. Floating sums are not associative, so the prefix before tile t is defined
// as the left fold of the aggregates, ((A0 + A1) + A2) + ... + A(t-1), and every published
// prefix is exactly that fold: a workgroup that finds prefix P(j) continues the fold from it
// in order, P(j) + A(j+1) + ... + A(t-1). Which j it found depends on timing; the bits do
// not. Tile aggregates come from one fixed tree, whoever computes them.
//
// Forward progress. Vulkan does not promise that a workgroup which has started keeps running
// while another one waits for it. So no wait is unbounded: after pc.patience rounds without
// progress, a waiting workgroup does the stalled work itself. A predecessor with no aggregate
// yet gets its tile reduced by the waiter (the decoupled fallback; the same tree gives the
// same bits), and a window that holds only aggregates makes the waiter look one window
// further back. Tile 0's aggregate is its prefix, so the walk always ends.
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
	uvec2 flags;    // [0] the tile counter, [1 + t] tile t's state: 0, AGGREGATE or PREFIX; zeroed
	uvec2 values;   // T aggregate[tiles], then T prefix[tiles]
	uint n;
	uint tiles;
	uint vec_ok;    // src and dst are 16-byte aligned: whole slots load and store as vectors
	uint patience;  // rounds a workgroup waits before it does stalled work itself
} pc;

#define AGGREGATE 1u
#define PREFIX 2u
#define WINDOW WG_SIZE

shared uint s_tile;
shared uint s_nearest;  // window lane of the nearest prefix (WINDOW: none)
shared uint s_missing;  // nearest window lane, before s_nearest, with no aggregate (WINDOW: none)
shared T s_vals[WINDOW];
shared T s_excl;

#include "scan_tile.glsl"
#include "blelloch.glsl"

// Stores value as tile t's AGGREGATE or PREFIX, then raises its state; never lowers it (a
// fallback's aggregate may land after the owner's prefix).
void publish(uint t, uint state, T value)
{
	Values(pc.values).v[state == AGGREGATE ? t : pc.tiles + t] = value;
	memoryBarrierBuffer();
	atomicMax(Flags(pc.flags).v[1u + t], state);
}

// Reduces tile t (loaded into vals) into temp with the up-sweep; the aggregate is the root,
// temp[PAD(SLOTS - 1)]. Starts with a barrier, so temp may be in use until the call.
void reduce_tile(uint lid, uint t, out T vals[2][ITEMS])
{
	load_slot(t, lid, vals[0]);
	load_slot(t, lid + 256u, vals[1]);
	barrier();
	temp[PAD(lid)] = fold_slot(vals[0]);
	temp[PAD(lid + 256u)] = fold_slot(vals[1]);
	blelloch_upsweep(lid);
}

// Appends the aggregates of window lanes [0, count) to s_excl, farthest first, by
// invocation 0: the left fold, in order. Ends with a barrier.
void fold_window(uint lid, uint count)
{
	if (lid == 0u) {
		T x = s_excl;
		for (uint j = count; j > 0u; j--)
			x = op(x, s_vals[j - 1u]);
		s_excl = x;
	}
	barrier();
}

// The exclusive prefix of tile (> 0): the look-back. Publishes the tile's PREFIX.
T look_back(uint lid, uint tile, T total)
{
	Flags flags = Flags(pc.flags);
	Values values = Values(pc.values);
	uint window = 0u; // windows [0, window) closer to the tile hold aggregates only
	uint waited = 0u;
	for (;;) {
		uint back = window * WINDOW + lid + 1u; // this invocation's predecessor: tile - back
		bool exists = back <= tile;
		uint pred = exists ? tile - back : 0u;
		uint state = exists ? flags.v[1u + pred] : AGGREGATE;
		bool prefix = exists && (state == PREFIX || (pred == 0u && state != 0u));
		barrier(); // every invocation has read the previous round's s_nearest and s_missing
		if (lid == 0u) {
			s_nearest = WINDOW;
			s_missing = WINDOW;
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

		if (nearest < WINDOW && missing == WINDOW) {
			memoryBarrierBuffer(); // the values were stored before the states read above
			if (lid <= nearest)
				s_vals[lid] = values.v[lid == nearest && pred != 0u ? pc.tiles + pred : pred];
			if (lid == 0u)
				s_excl = NEUTRAL;
			barrier();
			fold_window(lid, nearest + 1u);
			for (uint w = window; w > 0u; w--) {
				s_vals[lid] = values.v[tile - ((w - 1u) * WINDOW + lid + 1u)];
				barrier();
				fold_window(lid, WINDOW);
			}
			T excl = s_excl;
			if (lid == 0u)
				publish(tile, PREFIX, op(excl, total));
			return excl;
		}

		if (++waited < pc.patience)
			continue;
		waited = 0u;
		if (missing < WINDOW) {
			// The fallback: the nearest predecessor without an aggregate gets its tile
			// reduced here. Published only if its owner has still not published: once it
			// has, an in-place scan may have overwritten the input that was just read, and
			// the check comes after every load was consumed by the up-sweep.
			uint m = tile - (window * WINDOW + missing + 1u);
			T theirs[2][ITEMS];
			reduce_tile(lid, m, theirs);
			if (lid == 0u) {
				memoryBarrierBuffer();
				if (flags.v[1u + m] == 0u)
					publish(m, AGGREGATE, temp[PAD(SLOTS - 1u)]);
			}
		} else {
			window++; // a whole window of aggregates and no prefix yet: look further back
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
	reduce_tile(lid, tile, vals);
	T total = temp[PAD(SLOTS - 1u)];
	if (lid == 0u)
		publish(tile, AGGREGATE, total); // successors may use it from now on

	// The down-sweep turns the up-swept tree into each slot's exclusive prefix in the tile.
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

	T excl = tile == 0u ? NEUTRAL : look_back(lid, tile, total);

	store_slot(tile, lid, op(excl, slot_prefix[0]), vals[0], EXCLUSIVE);
	store_slot(tile, lid + 256u, op(excl, slot_prefix[1]), vals[1], EXCLUSIVE);
}
