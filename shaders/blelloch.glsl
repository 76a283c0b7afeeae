// blelloch.glsl: the Blelloch work-efficient exclusive scan of 512 values in shared memory
// by 256 invocations, split into its up-sweep (which leaves the total at the root) and its
// down-sweep, with the bank-conflict padding. Requires SLOTS and T (common.glsl). The tile
// scan of builds without subgroup shuffles (tile_scan.glsl, TILE_BLELLOCH).

// Padding that moves every 32nd entry to the next bank, so the power-of-two strides of the
// deeper tree levels do not all land on one bank.
#define PAD(i) ((i) + ((i) >> 5))
shared T temp[SLOTS + SLOTS / 32u];

// Up-sweep of temp[PAD(0..511)] in place; the caller has written both of its slots. The
// root, temp[PAD(511)], ends up holding the total, always combined in the same tree order
// (a fallback that recomputes a tile's total must get the same bits). Ends with a barrier.
void blelloch_upsweep(uint lid)
{
	uint offset = 1u;
	for (uint d = SLOTS / 2u; d > 0u; d >>= 1u) {
		barrier(); // top of each level: the previous level's writes are visible
		if (lid < d) {
			uint ai = PAD(offset * (2u * lid + 1u) - 1u);
			uint bi = PAD(offset * (2u * lid + 2u) - 1u);
			temp[bi] = scan_op(temp[ai], temp[bi]);
		}
		offset <<= 1u;
	}
	barrier();
}

// Down-sweep of the up-swept temp[PAD(0..511)]: leaves each entry's exclusive prefix in it.
// Every invocation has read the root before the call (it is overwritten). Ends with a barrier.
void blelloch_downsweep(uint lid)
{
	barrier(); // every invocation has read the root
	if (lid == 0u)
		temp[PAD(SLOTS - 1u)] = SCAN_NEUTRAL;
	uint offset = SLOTS;
	for (uint d = 1u; d < SLOTS; d <<= 1u) {
		offset >>= 1u;
		barrier();
		if (lid < d) {
			uint ai = PAD(offset * (2u * lid + 1u) - 1u);
			uint bi = PAD(offset * (2u * lid + 2u) - 1u);
			T left = temp[ai];
			temp[ai] = temp[bi];
			temp[bi] = scan_op(temp[bi], left); // prefix before the subtree, then its left half
		}
	}
	barrier();
}
