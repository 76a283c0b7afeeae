// tile_scan.glsl: the exclusive scan of a tile's 512 slot values across the workgroup, shared
// by the two scans. Invocation me holds slots me and me + 256 (scan_tile.glsl); me comes
// from tile_lane(). Two steps, so that the single-pass scan can publish a tile's total
// before it spends anything on the slots' prefixes:
//
//   T total = tile_upsweep(me, a, b, state);   // a, b: the values of slots me and me + 256
//   tile_downsweep(me, state, ex);             // ex[0], ex[1]: their exclusive prefixes
//
// The build without TILE_BLELLOCH scans with subgroup shuffles: each subgroup scans its
// invocations' values by Hillis-Steele (log2(subgroup size) shuffle steps, scan_op() on every
// step, so any operator works); the subgroups' totals go to shared
// memory; after one barrier the first subgroup scans them (serially in runs of consecutive
// totals, then across its lanes the same way); after a second barrier each invocation applies
// its subgroup's prefix. The two halves (slots 0..255 and 256..511) are scanned side by side,
// the first half's subgroup totals coming before the second's. Three barriers in all, against
// 19 for the shared-memory tree, and no 64-bit shared-memory traffic beyond the totals.
//
// Determinism: the combination shape depends only on the subgroup size, which is fixed for
// a device (SPIR-V 1.5 modules without the varying-size flag run with the device's
// subgroupSize), and tile_upsweep is the only code that computes a slot tile's total, so a
// single-pass fallback that reduces someone else's tile gets the owner's bits (chunked tiles,
// scan_chained.comp, have their own single shape).
//
// Requirements (gpu.c checks them, else it picks the TILE_BLELLOCH modules): subgroup
// operations basic and shuffle_relative in compute shaders, a subgroup size of 4 to 256, and
// full subgroups (every implementation runs a 256-wide workgroup as 256 / size full
// subgroups). tile_lane() numbers the invocations by subgroup and lane, so the scan order
// does not depend on how an implementation maps local ids to subgroups. 64-bit values are
// shuffled as two 32-bit words, so no shaderSubgroupExtendedTypes is needed.
//
// The TILE_BLELLOCH build runs the Blelloch up-sweep and down-sweep of blelloch.glsl instead.
// It is what gpu.c picks by default: on the H200 the shuffles were no faster for
// reduce-then-scan, and slower for f64 max (2839 against 2532 us at 2^28). A likely reason, not
// measured: Hillis-Steele is not work-efficient. Each invocation waits through the operator
// 2 log2(32) = 10 times here, against about 4 in the tree, and a 64-bit min/max then compared
// order keys at every step (scans hold keys since session 8, scan_op.glsl), which cost far
// more than a barrier; the subgroup scan needs VKR_SCAN_TILE=subgroup.

#if defined(TILE_BLELLOCH)

#include "blelloch.glsl"

uint tile_lane() { return gl_LocalInvocationID.x; }

// Starts with a barrier (temp may be in use until the call) and ends with one.
T tile_upsweep(uint me, T a, T b, out T state[2])
{
	barrier();
	temp[PAD(me)] = a;
	temp[PAD(me + 256u)] = b;
	blelloch_upsweep(me);
	state[0] = SCAN_NEUTRAL;
	state[1] = SCAN_NEUTRAL;
	return temp[PAD(SLOTS - 1u)];
}

// Right after tile_upsweep (temp holds the up-swept tree). Ends with a barrier.
void tile_downsweep(uint me, T state[2], out T ex[2])
{
	blelloch_downsweep(me);
	ex[0] = temp[PAD(me)];
	ex[1] = temp[PAD(me + 256u)];
}

#else

#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle_relative : require

#define MIN_SUBGROUP 4u
// The subgroups' totals of both halves (2 * gl_NumSubgroups of them), replaced by their
// exclusive prefixes; then the tile's total.
shared T s_part[2u * WG_SIZE / MIN_SUBGROUP];
shared T s_part_total;

uint tile_lane() { return gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID; }

// x from the lane d below (undefined in lanes below d).
T shuffle_up(T x, uint d)
{
#if defined(DTYPE_F32)
	// As bits: a scan of keyed min/max holds keys there, and a shuffle is not among the
	// instructions that must keep a subnormal pattern.
	return uintBitsToFloat(subgroupShuffleUp(floatBitsToUint(x), d));
#elif defined(DTYPE_F64)
	return packDouble2x32(subgroupShuffleUp(unpackDouble2x32(x), d));
#elif defined(DTYPE_I64)
	return int64_t(packUint2x32(subgroupShuffleUp(unpackUint2x32(uint64_t(x)), d)));
#elif defined(DTYPE_U64)
	return packUint2x32(subgroupShuffleUp(unpackUint2x32(x), d));
#else
	return subgroupShuffleUp(x, d);
#endif
}

// Inclusive scan of x across the subgroup by Hillis-Steele: lane i ends up with
// op(x[0], ..., x[i]) in a shape fixed by i and the subgroup size. All lanes active.
T subgroup_inclusive(T x)
{
	uint lane = gl_SubgroupInvocationID;
	for (uint d = 1u; d < gl_SubgroupSize; d <<= 1u) {
		T y = shuffle_up(x, d);
		if (lane >= d)
			x = scan_op(y, x);
	}
	return x;
}

// Starts with a barrier (s_part may be in use until then) and ends with one. state keeps
// the invocation's exclusive prefixes within its subgroup for tile_downsweep.
T tile_upsweep(uint me, T a, T b, out T state[2])
{
	uint lane = gl_SubgroupInvocationID, sg = gl_SubgroupID, groups = gl_NumSubgroups;
	uint size = gl_SubgroupSize;
	// Both halves side by side: two independent shuffles per step.
	for (uint d = 1u; d < size; d <<= 1u) {
		T ya = shuffle_up(a, d), yb = shuffle_up(b, d);
		if (lane >= d) {
			a = scan_op(ya, a);
			b = scan_op(yb, b);
		}
	}
	state[0] = shuffle_up(a, 1u); // lane 0: undefined, never used
	state[1] = shuffle_up(b, 1u);
	barrier(); // s_part is free
	if (lane == size - 1u) {
		s_part[sg] = a;
		s_part[groups + sg] = b;
	}
	barrier();
	if (sg == 0u) {
		// Lane i takes the run of totals [first, end); the lanes that have one form a prefix
		// of the subgroup, so no neutral enters a prefix that is used.
		uint count = 2u * groups;
		uint per = (count + size - 1u) / size;
		uint first = min(lane * per, count), end = min(first + per, count);
		T x = SCAN_NEUTRAL;
		if (first < end) {
			x = s_part[first];
			for (uint j = first + 1u; j < end; j++)
				x = scan_op(x, s_part[j]);
		}
		x = subgroup_inclusive(x);
		T p = shuffle_up(x, 1u); // everything before this lane's run (lane 0: nothing)
		bool has_p = lane > 0u;
		for (uint j = first; j < end; j++) {
			T t = s_part[j];
			s_part[j] = has_p ? p : SCAN_NEUTRAL;
			p = has_p ? scan_op(p, t) : t;
			has_p = true;
		}
		if (first < end && end == count)
			s_part_total = p;
	}
	barrier();
	return s_part_total;
}

// After tile_upsweep, with no barrier needed: s_part holds the subgroups' prefixes until the
// next tile_upsweep.
void tile_downsweep(uint me, T state[2], out T ex[2])
{
	uint lane = gl_SubgroupInvocationID, sg = gl_SubgroupID;
	T pa = s_part[sg], pb = s_part[gl_NumSubgroups + sg];
	// Slot 0's prefix is the neutral (pa of subgroup 0); nothing is combined with it.
	ex[0] = lane == 0u ? pa : sg == 0u ? state[0] : scan_op(pa, state[0]);
	ex[1] = lane == 0u ? pb : scan_op(pb, state[1]);
}

#endif
