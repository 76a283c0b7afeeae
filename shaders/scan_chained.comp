#version 460
// scan_chained.comp: single-pass prefix scan with decoupled look-back and the "decoupled
// fallback" (the input is read once and the output written once: 2n element transfers
// instead of reduce-then-scan's 3n).
//
// Each workgroup claims the next tile from a counter (so every tile before it belongs to a
// workgroup that started earlier), loads its 512 slots of ITEMS elements into registers,
// runs the Blelloch up-sweep and publishes the tile's aggregate (flag A), then looks back
// over its predecessors: 256 at a time, one per invocation, collecting aggregates until it
// meets a tile that has published its inclusive prefix (flag P). A predecessor that has
// published nothing yet (X) is waited for spin_rounds rounds; after that the
// workgroup reads that tile's input and computes its aggregate itself, so progress never
// depends on another workgroup being scheduled: Vulkan promises no forward progress between
// workgroups. (In place, the fallback is off: an unpublished tile is always one a running
// workgroup has claimed, since tiles are claimed in order, so waiting for it terminates.)
//
// Determinism: floating results must not depend on where a look-back happened to stop. The
// prefix of tile t is defined as the left fold C(t) = op(C(t-1), agg(t)); a look-back that
// stops at tile k folds incl(k) = C(k) with agg(k+1..t-1) in index order, which is C(t-1)
// whatever k is. A fallback recomputes agg(j) with the very same up-sweep tree. So a scan
// gives the same bits on every run.

#include "common.glsl"

layout(local_size_x = WG_SIZE) in;
layout(constant_id = 1) const bool EXCLUSIVE = false;

#define SLOTS 512u
#define SLOT_VECS 2u               // 16-byte vectors per slot
#define ITEMS (SLOT_VECS * VEC)    // elements per slot
#define TILE (SLOTS * ITEMS)
#define FLAG_AGGREGATE 1u
#define FLAG_PREFIX 2u
#define CHAIN_MAX 1024u            // aggregates one look-back can hold before it must wait

#include "blelloch.glsl"

layout(buffer_reference, scalar, buffer_reference_align = 4) coherent volatile buffer Flags { uint v[]; };
layout(buffer_reference, scalar, buffer_reference_align = ELEM_ALIGN) coherent buffer Published { T v[]; };
layout(buffer_reference, scalar, buffer_reference_align = 16) writeonly buffer OutVecs { VT v[]; };

layout(push_constant, scalar) uniform Params {
	uvec2 src;      // input elements
	uvec2 dst;      // output elements (may equal src)
	uvec2 flags;    // uint per tile, then the tile counter; zeroed before the dispatch
	uvec2 agg;      // T per tile: the tile's aggregate
	uvec2 incl;     // T per tile: the inclusive prefix through the tile
	uint n;
	uint tiles;
	uint vec_ok;    // src and dst are 16-byte aligned: whole slots load and store as vectors
	uint fallback;  // computing an unpublished predecessor is allowed (not in place: a
	                // predecessor that overwrites its input could be read half-written)
	uint spin_rounds; // look-back rounds on an unpublished tile before computing it
} pc;

shared uint s_tile;
shared uint s_flag[WG_SIZE];
shared T s_value[WG_SIZE];
shared T chain[CHAIN_MAX];
shared uint s_state;  // look-back result: 0 go on, 1 done, 2 compute tile s_next yourself
shared uint s_next;   // next tile to look at
shared uint s_depth;  // aggregates in chain
shared T s_excl;      // the tile's exclusive prefix, once known

void load_slot(uint tile, uint slot, out T vals[ITEMS])
{
	uint base = tile * TILE + slot * ITEMS;
	if (pc.vec_ok != 0u && base + ITEMS <= pc.n) {
		Vecs vecs = Vecs(pc.src);
		for (uint k = 0u; k < SLOT_VECS; k++) {
			VT x = vecs.v[base / VEC + k];
			for (uint c = 0u; c < VEC; c++)
				vals[k * VEC + c] = x[c];
		}
	} else {
		Elems src = Elems(pc.src);
		for (uint j = 0u; j < ITEMS; j++)
			vals[j] = base + j < pc.n ? src.v[base + j] : NEUTRAL;
	}
}

T fold_slot(T vals[ITEMS])
{
	T s = vals[0];
	for (uint j = 1u; j < ITEMS; j++)
		s = op(s, vals[j]);
	return s;
}

// The aggregate of `tile`, computed from its input by the whole workgroup with exactly the
// tree the tile's own workgroup uses. Uniform control flow; clobbers temp.
T tile_aggregate(uint tile, uint lid)
{
	T vals[ITEMS];
	barrier();
	load_slot(tile, lid, vals);
	temp[PAD(lid)] = fold_slot(vals);
	load_slot(tile, lid + 256u, vals);
	temp[PAD(lid + 256u)] = fold_slot(vals);
	blelloch_upsweep(lid);
	T total = temp[PAD(SLOTS - 1u)];
	barrier();
	return total;
}

void main()
{
	uint lid = gl_LocalInvocationID.x;
	if (lid == 0u)
		s_tile = atomicAdd(Flags(pc.flags).v[pc.tiles], 1u);
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

	Flags flags = Flags(pc.flags);
	Published agg = Published(pc.agg);
	Published incl = Published(pc.incl);
	T aggregate = temp[PAD(SLOTS - 1u)];
	if (lid == 0u) {
		// Publish as early as possible: successors are waiting for it.
		if (tile == 0u) {
			incl.v[0] = aggregate;
			memoryBarrierBuffer();
			atomicExchange(flags.v[0], FLAG_PREFIX);
			s_excl = NEUTRAL;
		} else {
			agg.v[tile] = aggregate;
			memoryBarrierBuffer();
			atomicExchange(flags.v[tile], FLAG_AGGREGATE);
		}
		s_state = tile == 0u ? 1u : 0u;
		s_next = tile - 1u;
		s_depth = 0u;
	}
	barrier();

	// Down-sweep now, while predecessors publish; keep the slot prefixes in registers so the
	// look-back may reuse temp for a fallback.
	if (lid == 0u) {
		block_total = temp[PAD(SLOTS - 1u)];
		temp[PAD(SLOTS - 1u)] = NEUTRAL;
	}
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

	uint spins = 0u;
	while (s_state != 1u) { // uniform: s_state changes only between barriers
		if (s_state == 2u) {
			// The predecessor s_next is still unpublished after SPIN_ROUNDS: compute it.
			T a = tile_aggregate(s_next, lid);
			if (lid == 0u) {
				chain[s_depth] = a;
				s_depth += 1u;
				if (s_next == 0u) {
					s_state = 1u; // tile 0's aggregate is its inclusive prefix
				} else {
					s_next -= 1u;
					s_state = 0u;
				}
			}
			spins = 0u;
			barrier();
			continue;
		}
		// One round: invocation i reads tile s_next - i.
		uint first = s_next;
		if (lid <= first) {
			uint j = first - lid;
			uint f = flags.v[j];
			memoryBarrierBuffer();
			s_flag[lid] = f;
			s_value[lid] = f == FLAG_PREFIX ? incl.v[j] : f == FLAG_AGGREGATE ? agg.v[j] : NEUTRAL;
		}
		barrier();
		if (lid == 0u) {
			uint count = min(first + 1u, WG_SIZE);
			uint i = 0u;
			uint state = 0u;
			for (; i < count; i++) {
				uint f = s_flag[i];
				if (f == 0u)
					break; // unpublished: wait for it or compute it
				if (s_depth == CHAIN_MAX && f != FLAG_PREFIX)
					break; // chain full: wait until this one has its prefix
				chain[s_depth] = s_value[i];
				s_depth += 1u;
				if (f == FLAG_PREFIX) {
					state = 1u;
					break;
				}
			}
			if (state == 1u) {
				s_state = 1u;
			} else if (i == count && first + 1u == count) {
				s_state = 1u; // reached tile 0 through aggregates (cannot happen: tile 0 is P)
			} else {
				s_next = first - i;
				s_state = pc.fallback != 0u && i == 0u && spins + 1u >= pc.spin_rounds &&
					  s_depth < CHAIN_MAX ? 2u : 0u;
			}
		}
		barrier();
		spins = s_next == first ? spins + 1u : 0u;
		barrier(); // s_flag/s_value are rewritten next round
	}

	if (tile != 0u && lid == 0u) {
		// chain[depth-1] is the prefix (or tile 0's aggregate), then aggregates in index
		// order: the left fold of the definition.
		uint depth = s_depth;
		T excl = chain[depth - 1u];
		for (uint k = depth - 1u; k > 0u; k--)
			excl = op(excl, chain[k - 1u]);
		s_excl = excl;
		incl.v[tile] = op(excl, aggregate);
		memoryBarrierBuffer();
		atomicExchange(flags.v[tile], FLAG_PREFIX);
	}
	barrier();
	T excl = s_excl;

	// Output: each slot's prefix, then its items in order.
	for (uint h = 0u; h < 2u; h++) {
		uint base = tile * TILE + (lid + h * 256u) * ITEMS;
		T p = op(excl, slot_prefix[h]);
		T out_vals[ITEMS];
		for (uint j = 0u; j < ITEMS; j++) {
			if (EXCLUSIVE) {
				out_vals[j] = p;
				p = op(p, vals[h][j]);
			} else {
				p = op(p, vals[h][j]);
				out_vals[j] = p;
			}
		}
		if (pc.vec_ok != 0u && base + ITEMS <= pc.n) {
			OutVecs outv = OutVecs(pc.dst);
			for (uint k = 0u; k < SLOT_VECS; k++) {
				VT x;
				for (uint c = 0u; c < VEC; c++)
					x[c] = out_vals[k * VEC + c];
				outv.v[base / VEC + k] = x;
			}
		} else {
			Elems dst = Elems(pc.dst);
			for (uint j = 0u; j < ITEMS && base + j < pc.n; j++)
				dst.v[base + j] = out_vals[j];
		}
	}
}
