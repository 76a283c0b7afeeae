// scan_tile.glsl: a scan tile and its movement between memory and registers, shared by the
// two scans. A tile is 512 slots of ITEMS consecutive elements; invocation lid owns slots
// lid and lid + 256. Whole slots move as 16-byte vectors when the push constants say src
// and dst are 16-byte aligned (pc.vec_ok); the last, partial slot element by element.
// Elements enter the scan's representation as they are loaded (scan_in, scan_op.glsl) and
// leave it as they are stored (scan_out). Requires pc.src, pc.dst, pc.n and pc.vec_ok.

#define SLOTS 512u
#define SLOT_VECS 2u               // 16-byte vectors per slot
#define ITEMS (SLOT_VECS * VEC)    // elements per slot
#define TILE (SLOTS * ITEMS)

layout(buffer_reference, scalar, buffer_reference_align = 16) writeonly buffer OutVecs { VT v[]; };

void load_slot(uint tile, uint slot, out T vals[ITEMS])
{
	uint base = tile * TILE + slot * ITEMS;
	if (pc.vec_ok != 0u && base + ITEMS <= pc.n) {
		Vecs vecs = Vecs(pc.src);
		for (uint k = 0u; k < SLOT_VECS; k++) {
			VT x = vecs.v[base / VEC + k];
			for (uint c = 0u; c < VEC; c++)
				vals[k * VEC + c] = scan_in(x[c]);
		}
	} else {
		Elems src = Elems(pc.src);
		for (uint j = 0u; j < ITEMS; j++)
			vals[j] = base + j < pc.n ? scan_in(src.v[base + j]) : SCAN_NEUTRAL;
	}
}

T fold_slot(T vals[ITEMS])
{
	T s = vals[0];
	for (uint j = 1u; j < ITEMS; j++)
		s = scan_op(s, vals[j]);
	return s;
}

// A slot's scan given the prefix of everything before it: inclusive, or exclusive; as
// values, ready to store (scan_out).
void scan_slot(T prefix, T vals[ITEMS], bool exclusive, out T out_vals[ITEMS])
{
	T p = prefix;
	for (uint j = 0u; j < ITEMS; j++) {
		if (exclusive) {
			out_vals[j] = scan_out(p);
			p = scan_op(p, vals[j]);
		} else {
			p = scan_op(p, vals[j]);
			out_vals[j] = scan_out(p);
		}
	}
}

// Writes slot's scan given the prefix of everything before it: inclusive, or exclusive.
void store_slot(uint tile, uint slot, T prefix, T vals[ITEMS], bool exclusive)
{
	uint base = tile * TILE + slot * ITEMS;
	T out_vals[ITEMS];
	scan_slot(prefix, vals, exclusive, out_vals);
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
