#version 460
// scan_chained.comp: single-pass prefix scan with decoupled look-back and decoupled
// fallback. The input is read once and the output written once: 2n element transfers
// instead of reduce-then-scan's 3n.
//
// Each workgroup claims the next tile from a counter (so every earlier tile belongs to a
// workgroup that has already started) or takes the tile of its own id (TILES_BY_WORKGROUP),
// loads its 512 slots of ITEMS elements into registers, scans their 512 slot sums across
// the workgroup up to the tile's total
// (tile_upsweep, tile_scan.glsl) and publishes the tile's aggregate A(t) at once. In the
// build with subgroup operations, tiles in device memory are chunked instead (below:
// subgroup rows of coalesced vectors, 32 KiB, held in registers through the look-back and
// stored once).
// Tiles form blocks of BLOCK. A tile's exclusive prefix is Q(b), the prefix before its
// block b, combined with the aggregates of the tiles before it in the block, all read in one
// round trip (one tile per invocation) and folded by a tree. The last tile of a block also
// publishes the block's aggregate B(b) and, once it knows Q(b), the block's inclusive prefix
// Q(b+1). Q(b) comes from a decoupled look-back over blocks: one invocation per earlier
// block, the nearest block whose inclusive prefix is published, and the aggregates of the
// blocks after it. A round of the look-back spans BLOCK_WINDOW blocks (2^20 elements of f32
// per block, 2^21 with chunked tiles), so no chain of prefixes through every tile or every
// block limits the scan.
//
// Determinism. Floating sums are not associative, so every combination has one fixed shape:
// the aggregates of tiles s..t-1 of a block fold by a tree fixed by their count;
// B(b) = tree(A of the block's first BLOCK-1 tiles) + A(last); the block prefixes are the
// left fold Q(b) = ((B(0) + B(1)) + ...) + B(b-1), so a look-back that finds Q(j+1)
// continues the fold from it in order, and which j it found changes no bit. Tile aggregates
// come from one fixed shape whoever computes them: tile_upsweep (slot tiles) and the chunked
// tiles' row folds and chunks_total are the only code that computes one (shapes that depend
// on the device's subgroup size, which is fixed), for the owner and a fallback alike.
//
// Publication. An entry (a tile's or a block's) is one 64-bit word per 32 bits of its value,
// each holding the state beside those bits, stored and loaded whole (aligned 64-bit accesses
// are single-copy atomic on the devices vkreduce runs on), so one look-back round is one
// round trip for every dtype. A 64-bit value's two words are independent: a reader takes the
// smaller of their states, so a half not yet visible reads as nothing published. Every entry
// is written only with one value (an owner and a waiter store the same bits), so no atomics
// are needed and the halves cannot mix two values.
// The look-back reads the tiles before this one and the blocks before its block in the same
// round.
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
#include "scan_op.glsl"

#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

layout(local_size_x = WG_SIZE) in;
layout(constant_id = 1) const bool EXCLUSIVE = false;
// Whole tiles move through shared memory (the pipelines for host memory). A pipeline of its
// own: with the staged path compiled in, tiles in device memory, which never use it, ran 30
// to 40% slower on the H200 (session 4): the path takes the kernel from 46 to 74 registers
// per invocation, 5 workgroups per multiprocessor to 3 (session 5).
layout(constant_id = 2) const bool STAGED = false;
// Each workgroup scans the tile of its own id, not the next one from the counter (gpu.c sets
// it: device memory, on GPUs). The counter's round trip stands before every tile's loads;
// without it the 64-bit scans ran 49 to 73 us faster at 2^28 on the H200 and the 32-bit
// ones up to 8 us faster (session 20, runs S20-1 to S20-4). Correct in any launch order (a
// workgroup waiting for one not yet started does its work, the decoupled fallback), fast
// where the device launches workgroups in order of their ids, as NVIDIA's does. Not on
// lavapipe, whose threads each take a contiguous share of the grid: the first workgroup of
// the second share waits for the whole first share (and there the look-back's first eight
// invocations left its loop early, a fault not found in this shader; docs/BENCHMARKS.md,
// session 20).
layout(constant_id = 3) const bool TILES_BY_WORKGROUP = false;

layout(buffer_reference, scalar, buffer_reference_align = 4) coherent volatile buffer Counter { uint v; };
layout(buffer_reference, scalar, buffer_reference_align = 8) coherent volatile buffer Words { uint64_t v[]; };

// Entries: tiles [0, tiles), block aggregates [tiles, tiles + blocks), block inclusive
// prefixes [tiles + blocks, tiles + 2 * blocks).
layout(push_constant, scalar) uniform Params {
	uvec2 src;      // input elements
	uvec2 dst;      // output elements (may equal src)
	uvec2 counter;  // the tile counter; zeroed
	uvec2 states;   // per entry, one uint64 (state << 32 | value bits) per 32 bits of T; zeroed
	uint n;
	uint tiles;
	uint vec_ok;    // src and dst are 16-byte aligned: whole slots load and store as vectors
	uint patience;  // rounds a workgroup waits before it does stalled work itself
	// An array in several buffers is scanned part after part (kern_part): carry_in holds
	// the total of the parts before this one, carry_out receives it with this part's total
	// added (T's bits, keys included). 0: none.
	uvec2 carry_in;
	uvec2 carry_out;
} pc;

#define AGGREGATE 1u
#define PREFIX 2u
#define BLOCK WG_SIZE     // tiles per block: one per invocation in the look-back
#define BLOCK_WINDOW 32u  // blocks per look-back window (2^25 elements of f32, 2^26 chunked)

shared uint s_tile;
shared T s_vals[BLOCK];
shared T s_fold;
shared T s_block_last;       // block_aggregate: the block's last tile's aggregate

#include "scan_tile.glsl"
#include "tile_scan.glsl"

// Staged tiles (STAGED): a whole tile moves between memory and shared memory with each
// invocation's vectors 4 KiB apart, so that every load or store instruction of the workgroup
// covers one contiguous 4 KiB; the slots are then read from (or written to) shared memory.
// Over PCIe, slot-by-slot accesses (two vectors per invocation, the next invocation 32 bytes
// on) turned into small requests: 8.5 GB/s for a scan of shared memory, against 50 GB/s for a
// reduce, which reads contiguously. Only whole, 16-byte aligned tiles are staged.
#define TILE_VECS (SLOTS * SLOT_VECS)
const uint STAGE_VECS = STAGED ? TILE_VECS : 1u;
shared VT s_stage[STAGE_VECS];

bool staged_tile(uint t)
{
	return STAGED && pc.vec_ok != 0u && (t + 1u) * TILE <= pc.n;
}

// Loads tile t: invocation lid's slots lid and lid + 256 into vals[0] and vals[1].
void load_tile(uint lid, uint t, out T vals[2][ITEMS])
{
	if (!staged_tile(t)) {
		load_slot(t, lid, vals[0]);
		load_slot(t, lid + 256u, vals[1]);
		return;
	}
	Vecs vecs = Vecs(pc.src);
	uint base = t * (TILE / VEC);
	VT x[TILE_VECS / WG_SIZE];
	for (uint k = 0u; k < TILE_VECS / WG_SIZE; k++)
		x[k] = vecs.v[base + k * WG_SIZE + lid];
	barrier(); // s_stage is free
	for (uint k = 0u; k < TILE_VECS / WG_SIZE; k++)
		s_stage[k * WG_SIZE + lid] = x[k];
	barrier();
	for (uint h = 0u; h < 2u; h++)
		for (uint k = 0u; k < SLOT_VECS; k++) {
			VT v = s_stage[(lid + h * 256u) * SLOT_VECS + k];
			for (uint c = 0u; c < VEC; c++)
				vals[h][k * VEC + c] = scan_in(v[c]);
		}
}

// Writes tile t's scan: each slot's prefix, then its items in order.
void store_tile(uint lid, uint t, T prefix[2], T vals[2][ITEMS])
{
	if (!staged_tile(t)) {
		store_slot(t, lid, prefix[0], vals[0], EXCLUSIVE);
		store_slot(t, lid + 256u, prefix[1], vals[1], EXCLUSIVE);
		return;
	}
	barrier(); // s_stage is free
	for (uint h = 0u; h < 2u; h++) {
		T out_vals[ITEMS];
		scan_slot(prefix[h], vals[h], EXCLUSIVE, out_vals);
		for (uint k = 0u; k < SLOT_VECS; k++) {
			VT v;
			for (uint c = 0u; c < VEC; c++)
				v[c] = out_vals[k * VEC + c];
			s_stage[(lid + h * 256u) * SLOT_VECS + k] = v;
		}
	}
	barrier();
	OutVecs outv = OutVecs(pc.dst);
	uint base = t * (TILE / VEC);
	for (uint k = 0u; k < TILE_VECS / WG_SIZE; k++)
		outv.v[base + k * WG_SIZE + lid] = s_stage[k * WG_SIZE + lid];
}

#if !defined(TILE_BLELLOCH)
// Chunked tiles (the build with subgroup operations, device memory): subgroup g of the
// workgroup owns CHUNK_ROWS rows of gl_SubgroupSize consecutive vectors, one vector per lane
// per row, and its rows are consecutive in memory, so every load or store instruction of a
// subgroup covers one contiguous run of 16-byte vectors (512 bytes for 32 lanes). The
// subgroup scans each row with shuffles and carries the rows' totals from row to row; the
// subgroups' totals meet in shared memory behind one barrier. Slot-by-slot accesses (two
// vectors per invocation, the next invocation 32 bytes on) cost ~170 us of the f32 scan's
// time at 2^28 on the H200 (session 6), and the look-back costs ~3 us per tile, so the tiles
// are also twice as large: 32 KiB. The tile stays in registers through the look-back and is
// stored once, with its prefix. Storing the tile's own scan before the look-back and
// completing it afterwards from memory (session 6) freed the registers, but the second pass
// cost ~180 us at 2^28 f32 on the H200 (session 7: 770 us against 710 held; the same kernel
// without that pass took 590 us, so the stores overlapping the look-back are worth having,
// if anything can keep them without it: loading the next tile during the look-back took
// the kernel to 99 registers and 900 us).
#extension GL_KHR_shader_subgroup_shuffle : require
// Every loop over a chunk's rows or a vector's elements is unrolled: where the driver kept
// a loop, the arrays indexed by it went to local memory (f32 max and the 64-bit types ran
// 2.4 to 5.5 times slower on the H200).
#extension GL_EXT_control_flow_attributes : require
// Rows per invocation: fixed when compiled (CHUNK_ROWS from shaders/meson.build's
// scan_fixed_chunk_rows), or in the scan_chained_rows build (SPECIALIZED_CHUNK_ROWS) a
// specialization constant, so that each op and dtype runs the tile size measured best for
// it (kern_scan_chunk_rows() in kern.c, which sizes the tiles from the same value;
// VKR_SCAN_CHUNK_ROWS overrides it for measurements). The driver compiles each
// specialization on its own, so the arrays below still live in registers once it has
// unrolled the loops.
#if defined(SPECIALIZED_CHUNK_ROWS)
layout(constant_id = 4) const uint CHUNK_ROWS = 8u;
// Parked rows: with PARK_ROWS > 0 a tile is two parts, each laid out as a chunked tile of
// its own: PARK_ROWS rows per invocation, then CHUNK_ROWS. The first part is loaded, scanned
// within itself and parked in shared memory before the second is loaded into the registers
// it used, so that a tile (and so each look-back) covers more data at the registers of
// CHUNK_ROWS rows. The look-back costs the f64 sum ~180 us of its 1315 at 2^28 on the H200
// with 56 KiB tiles, the f32 sum ~95 of 636 with 36 KiB (session 26, run S26-1: the kernel
// without it, wrong output, 1136 and 543 us). At most CHUNK_ROWS (the first part's arrays
// are the second's); kern_scan_park_rows() in kern.c chooses it, within the device's shared
// memory, and sizes the tiles from it: 0 (off) by default, since the driver gave every
// kernel more registers with parked rows and every scan ran slower (session 26).
// At 0 its code costs nothing on NVIDIA's compiler (H200, run S38-1: every scan within 0.5%
// of a build with PARK_ROWS a plain constant, the same registers, shared memory and binary
// size), unlike session 37's blocked lanes, whose branch behind a constant set to false made
// the default f32 and f64 scans 20% slower (run S37-2).
layout(constant_id = 5) const uint PARK_ROWS = 0u;
#else
const uint PARK_ROWS = 0u;
#endif
#define TILE_ROWS (PARK_ROWS + CHUNK_ROWS) // vectors per invocation in a tile
const bool CHUNKED = !STAGED;
shared T s_chunk[WG_SIZE / MIN_SUBGROUP];       // the subgroups' totals
shared VT s_park[PARK_ROWS * WG_SIZE + 1u];     // the first part's scans, by row and invocation
// Whether each lane finishes its rows' scans within the tile before the look-back (8-byte
// types): the rows' shuffles, the chain of row totals and each vector's own scan all wait in
// the look-back's round trips, and their results replace the lane's vectors, so that only
// the earlier tiles' prefix and the stores follow the answer, with nothing more held through
// the look-back than the tile itself. On the H200 at 2^28 (session 23, run S23-2): i64 and
// u64 products 1650 -> 1475 us, minima and maxima 1545-1567 -> 1477-1481, f64 product
// 1426 -> 1414, sums within 6 us (run S23-3, against 8716055 in the same run: i64 product
// 1648 -> 1479, i64 max 1558 -> 1480); the driver kept 80 registers and spilled nothing (16
// to 32 bytes before). For 32-bit types it took the f32 sum and product and the i32 and u32
// minima and maxima from 64 registers to 80 (+20 to +28 us), and slowed the i32 and u32
// sums by 4 to 7 us at 64.
const bool LOCAL_SCAN_EARLY = ELEM_ALIGN == 8;
// For 32-bit types, whether each lane's in-tile prefixes of its rows are computed before the
// look-back (the vectors' own scans stay after it). Where it holds the driver's register
// count it was measured faster at 2^28 on the H200 (session 21, runs S21-4 and S21-5): i32
// sum 684 -> 621 us, f32 max 837 -> 793. Where the values held through the look-back cost
// registers it is off: f32 sum and product went from 64 to 80 and gained nothing, i32
// product and max 3 to 6 us slower at 80. Parking them in shared memory instead took every
// build to 80 registers and was slower everywhere.
#if defined(DTYPE_F32)
const bool ROW_PREFIX_EARLY = OP >= 2u;
#else
const bool ROW_PREFIX_EARLY = OP == 0u;
#endif

// x from lane src.
T shuffle_from(T x, uint src)
{
#if defined(DTYPE_F32)
	// As bits, for the keys a scan of min or max may hold (shuffle_up, tile_scan.glsl).
	return uintBitsToFloat(subgroupShuffle(floatBitsToUint(x), src));
#elif defined(DTYPE_F64)
	return packDouble2x32(subgroupShuffle(unpackDouble2x32(x), src));
#elif defined(DTYPE_I64)
	return int64_t(packUint2x32(subgroupShuffle(unpackUint2x32(uint64_t(x)), src)));
#elif defined(DTYPE_U64)
	return packUint2x32(subgroupShuffle(unpackUint2x32(x), src));
#else
	return subgroupShuffle(x, src);
#endif
}

// The index of this invocation's vector in row r of its subgroup's chunk of tile t's first
// part (parked) or second.
uint chunk_vec(uint t, bool parked, uint r)
{
	uint part = parked ? 0u : PARK_ROWS * WG_SIZE, rows = parked ? PARK_ROWS : CHUNK_ROWS;
	return t * TILE_ROWS * WG_SIZE + part + (gl_SubgroupID * rows + r) * gl_SubgroupSize +
	       gl_SubgroupInvocationID;
}

// Elements past n in a chunked tile: the op's exact identity. A float sum's neutral +0.0 is
// not one (-0.0 + +0.0 = +0.0): with it, a partial last tile's total, and so the carry of an
// array held in parts, turned a prefix of -0.0 into +0.0 (session 35).
#if defined(DTYPE_F32)
#define PAD_VALUE (OP == 0u ? uintBitsToFloat(0x80000000u) : SCAN_NEUTRAL)
#elif defined(DTYPE_F64)
#define PAD_VALUE (OP == 0u ? packDouble2x32(uvec2(0u, 0x80000000u)) : SCAN_NEUTRAL)
#else
#define PAD_VALUE SCAN_NEUTRAL
#endif

// This invocation's vector in row r of tile t's part; elements past n are PAD_VALUE.
VT load_row(uint t, bool parked, uint r)
{
	uint v = chunk_vec(t, parked, r), base = v * VEC;
	if (pc.vec_ok != 0u && base + VEC <= pc.n)
		return scan_in_vec(Vecs(pc.src).v[v]);
	Elems src = Elems(pc.src);
	VT x;
	[[unroll]] for (uint c = 0u; c < VEC; c++)
		x[c] = base + c < pc.n ? scan_in(src.v[base + c]) : PAD_VALUE;
	return x;
}

T fold_vec(VT x)
{
	T s = x[0];
	[[unroll]] for (uint c = 1u; c < VEC; c++)
		s = scan_op(s, x[c]);
	return s;
}

// The row totals' left fold, carry, extended by the row whose lanes' inclusive scan is incl.
T carry_row(uint r, T carry, T incl)
{
	T row_total = shuffle_from(incl, gl_SubgroupSize - 1u);
	return r == 0u ? row_total : scan_op(carry, row_total);
}

// The tile's total from the subgroups' chunk totals (left fold in subgroup order); prefix
// gets the fold of the chunks before this invocation's (unused in subgroup 0). Starts and
// ends with a barrier.
T chunks_total(T chunk_total, out T prefix)
{
	barrier(); // s_chunk is free
	if (gl_SubgroupInvocationID == 0u)
		s_chunk[gl_SubgroupID] = chunk_total;
	barrier();
	T total = s_chunk[0];
	prefix = total;
	for (uint g = 1u; g < gl_NumSubgroups; g++) {
		if (g == gl_SubgroupID)
			prefix = total;
		total = scan_op(total, s_chunk[g]);
	}
	barrier();
	return total;
}

// Min and max come out the same whatever the shape of their combinations, so a tile's
// aggregate may skip the rows' scans: each lane folds its vectors, then one subgroup scan per
// chunk, and the owner publishes before it scans its rows. For 64-bit types, where it was
// measured faster on the H200: i64 and u64 max 1616 to 1623 us at 2^28 against 1715 to 1722
// (session 20, run S20-1); i32 max 16 us slower (session 19), f32 max no faster (S20-1).
// Sums and products of i64 and u64, exact too, were 111-115 and 25 us slower (run S21-9).
#if ELEM_ALIGN == 8
const bool LANE_FOLD_AGGREGATE = OP >= 2u;
#else
const bool LANE_FOLD_AGGREGATE = false;
#endif
// For the f64 sum and product, each row is scanned within its subgroup's chunk as soon as
// its subgroup scan is known, so no row's inclusive scan is held until the chunks' totals
// meet: the chunk's prefix is combined into the earlier tiles' prefix instead, once per
// lane, and each output is op(op(excl, chunk prefix), its scan in the chunk), a fixed shape.
// The tile is published after its rows' scans rather than before: at the same rows that
// cost time (H100, 2^28, run S35-1: f64 sum at 14 rows 1728 -> 1742 us, i64 sum at 10 rows
// 1591 -> 1662), but it frees the registers the held scans took, so that 16 rows fit
// without spilling: f64 sum and product 1728 / 1724 us at 14 rows -> 1622 / 1620 at 16
// (i64 sum 1622 at 16, slower than 1591 at 10 without it; i64 product 2019).
#if defined(DTYPE_F64)
const bool ROWS_SCANNED_IN_CHUNK = LOCAL_SCAN_EARLY && !LANE_FOLD_AGGREGATE && PARK_ROWS == 0u;
#else
const bool ROWS_SCANNED_IN_CHUNK = false;
#endif

// The prefix in the tile before this lane's vector of row r, whose lanes' inclusive scan is
// incl_r; run holds the fold of everything in the tile before row r (has: whether there is
// any), and moves past row r.
T row_prefix(T incl_r, inout T run, inout bool has)
{
	T before = shuffle_up(incl_r, 1u); // the lanes before this one (lane 0: none)
	T row_total = shuffle_from(incl_r, gl_SubgroupSize - 1u);
	T prefix = gl_SubgroupInvocationID == 0u ? run : has ? scan_op(run, before) : before;
	run = has ? scan_op(run, row_total) : row_total;
	has = true;
	return prefix;
}

// A chunk's total from its lanes' folds of their vectors (LANE_FOLD_AGGREGATE).
T chunk_total_of(T lane_fold)
{
	return shuffle_from(subgroup_inclusive(lane_fold), gl_SubgroupSize - 1u);
}

// The aggregate of a part of chunked tile m, in the owner's shape, loaded row by row.
T part_aggregate(uint m, bool parked)
{
	uint rows = parked ? PARK_ROWS : CHUNK_ROWS;
	T carry = SCAN_NEUTRAL, ignored;
	[[unroll]] for (uint r = 0u; r < CHUNK_ROWS; r++) {
		if (r >= rows)
			break;
		T lane = fold_vec(load_row(m, parked, r));
		if (LANE_FOLD_AGGREGATE)
			carry = r == 0u ? lane : scan_op(carry, lane);
		else
			carry = carry_row(r, carry, subgroup_inclusive(lane));
	}
	return chunks_total(LANE_FOLD_AGGREGATE ? chunk_total_of(carry) : carry, ignored);
}

// A chunked tile's aggregate, in the owner's shape: its parked part's, then the other's.
T chunk_aggregate(uint m)
{
	T second = part_aggregate(m, false);
	return PARK_ROWS > 0u ? scan_op(part_aggregate(m, true), second) : second;
}

// Row r's scan within the tile for this lane's vector x, given the prefix of everything
// before that vector in the tile (has: there is something before it): inclusive, or
// exclusive; still without the earlier tiles' prefix, and in the scan's representation.
VT row_local_scan(bool has, T prefix, VT x)
{
	VT out_vals;
	T p = prefix;
	[[unroll]] for (uint c = 0u; c < VEC; c++) {
		if (EXCLUSIVE) {
			out_vals[c] = has ? p : SCAN_NEUTRAL;
			p = has ? scan_op(p, x[c]) : x[c];
		} else {
			p = has ? scan_op(p, x[c]) : x[c];
			out_vals[c] = p;
		}
		has = true;
	}
	return out_vals;
}

// Stores row r's local scan combined with the prefix of earlier tiles, excl, where there
// are any (has_excl). first_is_excl: the vector's first output is excl itself (an exclusive
// scan's element with nothing before it in its chunk, whose local value is the neutral:
// op(excl, +0.0) would turn an f64 prefix of -0.0 into +0.0).
void store_scanned_row(uint t, bool parked, uint r, VT local, bool has_excl, T excl, bool first_is_excl)
{
	T out_vals[VEC];
	[[unroll]] for (uint c = 0u; c < VEC; c++)
		out_vals[c] = scan_out(has_excl ? (c == 0u && first_is_excl ? excl : scan_op(excl, local[c])) : local[c]);
	uint v = chunk_vec(t, parked, r), base = v * VEC;
	if (pc.vec_ok != 0u && base + VEC <= pc.n) {
		VT y;
		[[unroll]] for (uint c = 0u; c < VEC; c++)
			y[c] = out_vals[c];
		OutVecs(pc.dst).v[v] = y;
	} else {
		Elems dst = Elems(pc.dst);
		[[unroll]] for (uint c = 0u; c < VEC && base + c < pc.n; c++)
			dst.v[base + c] = out_vals[c];
	}
}

// Stores row r's scan given the prefix of everything before this lane's vector in the tile
// (has: there is something before it), combined with the prefix of earlier tiles, excl,
// where there are any (has_excl).
void store_row(uint t, uint r, bool has, T prefix, VT x, bool has_excl, T excl)
{
	store_scanned_row(t, false, r, row_local_scan(has, prefix, x), has_excl, excl, false);
}

// The first part of tile t (PARK_ROWS > 0): loaded, each vector's scan within the part
// computed (without anything before the part) and parked in s_park; returns the part's
// aggregate, in part_aggregate's shape. The rows' arrays are sized CHUNK_ROWS so that the
// second part reuses their registers.
T park_first_part(uint t)
{
	VT x[CHUNK_ROWS];
	T incl[CHUNK_ROWS], carry = SCAN_NEUTRAL, prefix;
	[[unroll]] for (uint r = 0u; r < CHUNK_ROWS; r++)
		if (r < PARK_ROWS)
			x[r] = load_row(t, true, r);
	[[unroll]] for (uint r = 0u; r < CHUNK_ROWS; r++) {
		if (r >= PARK_ROWS)
			break;
		if (LANE_FOLD_AGGREGATE) {
			T lane = fold_vec(x[r]);
			carry = r == 0u ? lane : scan_op(carry, lane);
		} else {
			incl[r] = subgroup_inclusive(fold_vec(x[r]));
			carry = carry_row(r, carry, incl[r]);
		}
	}
	T total = chunks_total(LANE_FOLD_AGGREGATE ? chunk_total_of(carry) : carry, prefix);
	bool first_has = gl_SubgroupID > 0u || gl_SubgroupInvocationID > 0u;
	T run = prefix;
	bool has = gl_SubgroupID > 0u;
	[[unroll]] for (uint r = 0u; r < CHUNK_ROWS; r++) {
		if (r >= PARK_ROWS)
			break;
		if (LANE_FOLD_AGGREGATE)
			incl[r] = subgroup_inclusive(fold_vec(x[r]));
		s_park[r * WG_SIZE + gl_LocalInvocationIndex] =
			row_local_scan(r > 0u || first_has, row_prefix(incl[r], run, has), x[r]);
	}
	return total;
}

#else
const bool CHUNKED = false;
T chunk_aggregate(uint m) { return SCAN_NEUTRAL; }
#endif

uint blocks() { return (pc.tiles + BLOCK - 1u) / BLOCK; }
uint tile_entry(uint t) { return t; }
uint block_aggregate_entry(uint b) { return pc.tiles + b; }
uint block_prefix_entry(uint b) { return pc.tiles + blocks() + b; }

#if ELEM_ALIGN == 4
#if defined(DTYPE_F32)
uint value_bits(T v) { return floatBitsToUint(v); }
#else
uint value_bits(T v) { return uint(v); }
#endif
void publish(uint entry, T value)
{
	Words(pc.states).v[entry] = (uint64_t(AGGREGATE) << 32) | uint64_t(value_bits(value));
}
// The entry's state (0 if nothing is published) and value.
uint read_entry(uint entry, out T value)
{
	uint64_t w = Words(pc.states).v[entry];
	value = value_from_bits(uvec2(uint(w), 0u));
	return uint(w >> 32);
}
#else
// 64-bit T: each 32-bit half of the value shares a 64-bit word with the state, so a read is
// one round trip (two independent loads) with no fence between state and value. The halves
// need no ordering: every writer of an entry (its owner, or a fallback in the owner's shape)
// writes the same bits, so a reader that finds both words published has the value.
uvec2 value_bits(T v)
{
#if defined(DTYPE_F64)
	return unpackDouble2x32(v);
#else
	return unpackUint2x32(uint64_t(v));
#endif
}
void publish(uint entry, T value)
{
	uvec2 b = value_bits(value);
	Words(pc.states).v[2u * entry] = (uint64_t(AGGREGATE) << 32) | uint64_t(b.x);
	Words(pc.states).v[2u * entry + 1u] = (uint64_t(AGGREGATE) << 32) | uint64_t(b.y);
}
uint read_entry(uint entry, out T value)
{
	uint64_t lo = Words(pc.states).v[2u * entry], hi = Words(pc.states).v[2u * entry + 1u];
	value = value_from_bits(uvec2(uint(lo), uint(hi)));
	return min(uint(lo >> 32), uint(hi >> 32));
}
#endif

// The decoupled fallback for a tile: reduces tile m, whose owner has published nothing yet,
// and publishes its aggregate unless the owner did meanwhile. The check comes after the
// loads were consumed: once the owner has published, an in-place scan may overwrite its input.
void fallback_tile(uint lid, uint m)
{
	// The owner's shape (main): slot tiles fold slots lid and lid + 256, then tile_upsweep;
	// chunked tiles fold row by row. Loaded slot by slot (row by row): with slot tiles this
	// runs while the waiter holds its own tile in registers, and the driver gives every
	// invocation the registers of the worst path (on the H200 the whole tile here took the
	// f64 sum to 64 registers, 48 without).
	T aggregate;
	if (CHUNKED) {
		aggregate = chunk_aggregate(m);
	} else {
		T slot[ITEMS], state[2];
		load_slot(m, lid, slot);
		T s0 = fold_slot(slot);
		load_slot(m, lid + 256u, slot);
		T s1 = fold_slot(slot);
		aggregate = tile_upsweep(lid, s0, s1, state);
	}
	memoryBarrierBuffer(); // every invocation's loads are done before the state is checked
	barrier();
	if (lid == 0u) {
		T ignored;
		if (read_entry(tile_entry(m), ignored) == 0u)
			publish(tile_entry(m), aggregate);
	}
}

// The look-back's fold of the aggregates of tiles 0 .. count-1 of a block, v being lane lid's
// (earlier tiles on the left): a pairwise tree whose shape depends on count alone (level k
// combines lanes lid and lid + k for lid a multiple of 2k, where lid + k < count). count >= 1.
// Every invocation gets the result. The two versions compute the same tree, so the same bits.
// In shared memory, a barrier per level: the build without subgroup operations, and 64-bit
// min and max. With the shuffles below the driver took the 64-bit min and max kernels from
// 80 registers to 126, and they ran 280 us slower at 2^28 (session 26, run S26-1); in session
// 12 (run S12-3) it gave an older f64 sum kernel spills with them (1742 us against 1570).
// Ends with a barrier.
T tree_fold_shared(uint lid, T v, uint count)
{
	s_vals[lid] = v;
	barrier();
	for (uint k = 1u; k < count; k <<= 1u) {
		if ((lid & (2u * k - 1u)) == 0u && lid + k < count)
			s_vals[lid] = scan_op(s_vals[lid], s_vals[lid + k]);
		barrier();
	}
	T r = s_vals[0];
	barrier(); // s_vals may be rewritten after the call
	return r;
}

#if defined(TILE_BLELLOCH)
T tree_fold(uint lid, T v, uint count) { return tree_fold_shared(lid, v, count); }
#else
// With subgroup operations: the levels below the subgroup size by shuffles, the others by
// invocation 0 over the subgroups' results, in two or three barriers where the shared-memory
// tree takes one per level (nine for a block's 255 tiles), on every tile's look-back. About
// 1% faster for 32-bit types on the H200 (runs S12-2, S12-3); for 64-bit sums and products
// at 2^28 (session 26, run S26-1) i64 and u64 products 1416-1426 -> 1395-1398 us, f64
// product -10 us, sums -1 to -4, at the same registers.
shared T s_groups[WG_SIZE / MIN_SUBGROUP];
const bool TREE_BY_SHUFFLES = ELEM_ALIGN == 4 || OP < 2u;

// x from lane d above (undefined past the subgroup's end).
T shuffle_down(T x, uint d)
{
#if defined(DTYPE_F32)
	return uintBitsToFloat(subgroupShuffleDown(floatBitsToUint(x), d)); // keys: shuffle_up
#elif defined(DTYPE_F64)
	return packDouble2x32(subgroupShuffleDown(unpackDouble2x32(x), d));
#elif defined(DTYPE_I64)
	return int64_t(packUint2x32(subgroupShuffleDown(unpackUint2x32(uint64_t(x)), d)));
#elif defined(DTYPE_U64)
	return packUint2x32(subgroupShuffleDown(unpackUint2x32(x), d));
#else
	return subgroupShuffleDown(x, d);
#endif
}

// Ends with a barrier.
T tree_fold(uint lid, T v, uint count)
{
	if (!TREE_BY_SHUFFLES)
		return tree_fold_shared(lid, v, count);
	uint size = gl_SubgroupSize;
	for (uint k = 1u; k < size && k < count; k <<= 1u) {
		T y = shuffle_down(v, k);
		if ((lid & (2u * k - 1u)) == 0u && lid + k < count)
			v = scan_op(v, y);
	}
	if (gl_SubgroupInvocationID == 0u)
		s_groups[gl_SubgroupID] = v;
	barrier();
	// Level k * size: subgroup g takes g + k's result where (g + k) * size < count.
	uint groups = (count + size - 1u) / size;
	if (groups > 1u) {
		if (lid == 0u)
			for (uint k = 1u; k < groups; k <<= 1u)
				for (uint g = 0u; g + k < groups; g += 2u * k)
					s_groups[g] = scan_op(s_groups[g], s_groups[g + k]);
		barrier();
	}
	T r = s_groups[0];
	barrier(); // s_groups may be rewritten after the call
	return r;
}
#endif

// B(b) from the aggregates of block b's tiles, v being lane lid's.
T block_aggregate(uint lid, T v)
{
	if (lid == BLOCK - 1u)
		s_block_last = v; // read after tree_fold's barriers
	T head = tree_fold(lid, v, BLOCK - 1u);
	return scan_op(head, s_block_last);
}

// The lowest lanes for which each condition holds (BLOCK: none); every invocation of the
// workgroup calls it at the same point of a round. Three barriers. (Subgroup ballots, one
// barrier a round with each round's answers kept apart by its parity, ran 20 us slower for
// 32-bit sums at 2^28 on the H200, at the same 64 registers: run S12-2.)
shared uint s_lowest[3];
uvec3 lowest_lanes(uint lid, bvec3 cond)
{
	barrier(); // every invocation has read the previous round's
	if (lid == 0u)
		for (uint c = 0u; c < 3u; c++)
			s_lowest[c] = BLOCK;
	barrier();
	for (uint c = 0u; c < 3u; c++)
		if (cond[c])
			atomicMin(s_lowest[c], lid);
	barrier();
	return uvec3(s_lowest[0], s_lowest[1], s_lowest[2]);
}

// Appends s_vals[0, count) to s_fold, the farthest (highest lane) first: the left fold, in
// order, by invocation 0. Ends with a barrier.
void fold_in_order(uint lid, uint count)
{
	if (lid == 0u) {
		T x = s_fold;
		for (uint j = count; j > 0u; j--)
			x = scan_op(x, s_vals[j - 1u]);
		s_fold = x;
	}
	barrier();
}

// The fallback for a block: its tiles' aggregates gathered (a stalled tile reduced here after
// pc.patience rounds), folded, and published as the block's aggregate.
void fallback_block(uint lid, uint m)
{
	uint first = m * BLOCK;
	uint waited = 0u;
	for (;;) {
		T value;
		uint state = read_entry(tile_entry(first + lid), value);
		uint missing = lowest_lanes(lid, bvec3(state == 0u, false, false)).x;
		if (missing == BLOCK) {
			T aggregate = block_aggregate(lid, value);
			if (lid == 0u)
				publish(block_aggregate_entry(m), aggregate);
			return;
		}
		if (++waited >= pc.patience) {
			waited = 0u;
			fallback_tile(lid, first + missing);
		}
	}
}

// The look-back of a tile: the prefix of everything before it (returned), from the tiles
// before it in its block and the blocks before its block, read in the same rounds. A lane
// keeps what it has read and reads again only what is still missing, so waiting workgroups
// add little traffic. A block's last tile publishes the block's aggregate and, once it has
// the blocks before, its inclusive prefix.
T look_back(uint lid, uint tile, T total)
{
	uint block = tile / BLOCK, first = block * BLOCK, count = tile - first;
	bool tiles_done = count == 0u, blocks_done = block == 0u;
	T inner = SCAN_NEUTRAL, q = SCAN_NEUTRAL, block_total = total;
	uint window = 0u; // windows [0, window) closer to the block hold block aggregates only
	uint waited_tiles = 0u, waited_blocks = 0u;
	T tile_value = SCAN_NEUTRAL, aggregate = SCAN_NEUTRAL, prefix = SCAN_NEUTRAL;
	uint tile_state = lid < count ? 0u : AGGREGATE;
	uint aggregate_state = 0u, prefix_state = 0u;
	uint read_window = ~0u; // the window this lane's block entries belong to
	while (!tiles_done || !blocks_done) {
		// This round's reads: tile first + lid, and block block - back with its prefix.
		if (!tiles_done && tile_state == 0u)
			tile_state = read_entry(tile_entry(first + lid), tile_value);
		uint back = window * BLOCK_WINDOW + lid + 1u;
		bool exists = !blocks_done && lid < BLOCK_WINDOW && back <= block;
		uint pb = exists ? block - back : 0u;
		if (read_window != window) {
			read_window = window;
			aggregate_state = 0u;
			prefix_state = 0u;
		}
		if (exists) {
			if (aggregate_state == 0u)
				aggregate_state = read_entry(block_aggregate_entry(pb), aggregate);
			if (pb == 0u) { // block 0's aggregate is its inclusive prefix
				prefix_state = aggregate_state;
				prefix = aggregate;
			} else if (prefix_state == 0u) {
				prefix_state = read_entry(block_prefix_entry(pb), prefix);
			}
		}
		// The nearest block with its prefix, the first tile with nothing published and the
		// first block before the nearest with no aggregate.
		uvec3 low = lowest_lanes(lid, bvec3(tile_state == 0u, exists && prefix_state != 0u,
						    exists && aggregate_state == 0u));
		uint missing_tile = low.x, nearest = low.y, missing_block = low.z < nearest ? low.z : BLOCK;

		bool tiles_ready = !tiles_done && missing_tile == BLOCK;
		if (tiles_ready) {
			inner = tree_fold(lid, tile_value, count);
			tiles_done = true;
			if (count == BLOCK - 1u) {
				block_total = scan_op(inner, total);
				if (lid == 0u)
					publish(block_aggregate_entry(block), block_total);
			}
		}
		bool blocks_ready = !blocks_done && nearest < BLOCK && missing_block == BLOCK;
		if (blocks_ready) {
			if (lid <= nearest)
				s_vals[lid] = lid == nearest ? prefix : aggregate;
			barrier();
			if (lid == 0u)
				s_fold = s_vals[nearest];
			fold_in_order(lid, nearest);
			for (uint w = window; w > 0u; w--) {
				T value = SCAN_NEUTRAL;
				if (lid < BLOCK_WINDOW)
					read_entry(block_aggregate_entry(block - ((w - 1u) * BLOCK_WINDOW + lid + 1u)),
						   value);
				s_vals[lid] = value;
				barrier();
				fold_in_order(lid, BLOCK_WINDOW);
			}
			q = s_fold;
			blocks_done = true;
		}

		// A stalled predecessor is taken over by its nearest waiters first: the patience
		// grows with the distance, so that a late tile is not reduced again by every tile
		// after it in its block (that storm cost whole milliseconds on the H200).
		if (!tiles_done && ++waited_tiles >= pc.patience * (count - missing_tile)) {
			waited_tiles = 0u;
			fallback_tile(lid, first + missing_tile);
		}
		if (!blocks_done) {
			++waited_blocks;
			uint m = window * BLOCK_WINDOW + missing_block + 1u; // blocks back
			uint tiles_back = (m - 1u) * BLOCK + count + 1u;      // to that block's last tile
			if (missing_block < BLOCK && waited_blocks >= pc.patience * tiles_back) {
				waited_blocks = 0u;
				fallback_block(lid, block - m);
			} else if (missing_block == BLOCK && nearest == BLOCK && waited_blocks >= pc.patience) {
				waited_blocks = 0u;
				window++; // a window of block aggregates and no prefix yet: look further back
			}
		}
	}
	if (block > 0u && count == BLOCK - 1u && lid == 0u)
		publish(block_prefix_entry(block), scan_op(q, block_total));
	if (block == 0u)
		return inner;
	return count > 0u ? scan_op(q, inner) : q;
}

// The exclusive prefix of a tile from its look-back (has: the tile is not the first),
// preceded by the parts before this one; writes this part's carry-out from its last tile.
T with_parts_before(uint lid, uint tile, inout bool has, T excl, T total)
{
	if (pc.carry_in != uvec2(0u)) {
		T before = Elems(pc.carry_in).v[0];
		excl = has ? scan_op(before, excl) : before;
		has = true;
	}
	if (lid == 0u && tile == pc.tiles - 1u && pc.carry_out != uvec2(0u))
		Elems(pc.carry_out).v[0] = has ? scan_op(excl, total) : total;
	return excl;
}

void main()
{
	// Invocation lid owns slots lid and lid + 256 (numbered by subgroup and lane where the
	// tile scan uses subgroups); the look-back's lanes are numbered the same way.
	uint lid = tile_lane();
	uint tile;
	uint own_tile = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
#if ELEM_ALIGN == 8
	if (TILES_BY_WORKGROUP) {
		tile = own_tile;
	} else
#endif
	{
		// 32-bit types take even their own id through shared memory behind the barrier:
		// read directly, it took the driver's register count from 64 to 80 (four
		// workgroups per multiprocessor to three: 21 to 31 us slower at 2^28 than this);
		// the 64-bit kernels, at 80 either way, ran 3 to 67 us slower with the barrier
		// (run S20-3).
		if (lid == 0u)
			s_tile = TILES_BY_WORKGROUP ? own_tile : atomicAdd(Counter(pc.counter).v, 1u);
		barrier();
		tile = s_tile;
	}
	if (tile >= pc.tiles)
		return; // the grid is rounded up to whole rows; the whole workgroup leaves together

#if !defined(TILE_BLELLOCH)
	if (CHUNKED) {
		// The parked part first: its loads and scans are done before the second part's
		// loads take their registers.
		T parked_total = PARK_ROWS > 0u ? park_first_part(tile) : SCAN_NEUTRAL;
		VT x[CHUNK_ROWS];
		[[unroll]] for (uint r = 0u; r < CHUNK_ROWS; r++)
			x[r] = load_row(tile, false, r);
		if (ROWS_SCANNED_IN_CHUNK) {
			// run after row r is carry_row's fold of the row totals: the shape
			// chunk_aggregate computes for a fallback.
			T run = SCAN_NEUTRAL, chunk_prefix;
			bool has = false, lane_has = gl_SubgroupInvocationID > 0u;
			[[unroll]] for (uint r = 0u; r < CHUNK_ROWS; r++) {
				T incl = subgroup_inclusive(fold_vec(x[r]));
				x[r] = row_local_scan(r > 0u || lane_has, row_prefix(incl, run, has), x[r]);
			}
			T total = chunks_total(run, chunk_prefix);
			if (lid == 0u)
				publish(tile_entry(tile), total);
			memoryBarrierBuffer(); // as below
			barrier();
			memoryBarrierBuffer();
			bool has_excl = tile > 0u;
			T excl = has_excl ? look_back(lid, tile, total) : SCAN_NEUTRAL;
			excl = with_parts_before(lid, tile, has_excl, excl, total);
			if (gl_SubgroupID > 0u) {
				excl = has_excl ? scan_op(excl, chunk_prefix) : chunk_prefix;
				has_excl = true;
			}
			[[unroll]] for (uint r = 0u; r < CHUNK_ROWS; r++)
				store_scanned_row(tile, false, r, x[r], has_excl, excl,
						  EXCLUSIVE && r == 0u && !lane_has);
			return;
		}
		// Each row's inclusive scan across the subgroup, and the chunk's total: the shape
		// chunk_aggregate computes for a fallback.
		T incl[CHUNK_ROWS], carry = SCAN_NEUTRAL, chunk_prefix;
		[[unroll]] for (uint r = 0u; r < CHUNK_ROWS; r++) {
			if (LANE_FOLD_AGGREGATE) {
				T lane = fold_vec(x[r]);
				carry = r == 0u ? lane : scan_op(carry, lane);
			} else {
				incl[r] = subgroup_inclusive(fold_vec(x[r]));
				carry = carry_row(r, carry, incl[r]);
			}
		}
		T total = chunks_total(LANE_FOLD_AGGREGATE ? chunk_total_of(carry) : carry, chunk_prefix);
		if (PARK_ROWS > 0u)
			total = scan_op(parked_total, total);
		if (lid == 0u)
			publish(tile_entry(tile), total);
		// Published before any output is stored: a waiter that reads output where this
		// tile's input was (in place) also sees the state, and discards its fallback. The
		// second fence orders this invocation's stores after the barrier at device scope.
		// Here, before the look-back, and not later: without the fences the successors see
		// the aggregate later (753 against 685 us for the f32 sum at 2^28 on the H200), and
		// moved to before the stores they cost more again (820 us; session 19).
		memoryBarrierBuffer();
		barrier();
		memoryBarrierBuffer();
		if (LANE_FOLD_AGGREGATE)
			[[unroll]] for (uint r = 0u; r < CHUNK_ROWS; r++)
				incl[r] = subgroup_inclusive(fold_vec(x[r]));
		// Only the part's first element has nothing before it in the part.
		bool first_has = gl_SubgroupID > 0u || gl_SubgroupInvocationID > 0u;
		T run = chunk_prefix;
		bool has = gl_SubgroupID > 0u;
		if (LOCAL_SCAN_EARLY) {
			[[unroll]] for (uint r = 0u; r < CHUNK_ROWS; r++)
				x[r] = row_local_scan(r > 0u || first_has, row_prefix(incl[r], run, has), x[r]);
		}
		T prefixes[CHUNK_ROWS];
		if (!LOCAL_SCAN_EARLY && ROW_PREFIX_EARLY)
			[[unroll]] for (uint r = 0u; r < CHUNK_ROWS; r++)
				prefixes[r] = row_prefix(incl[r], run, has);
		// Each element's output is op(excl, its scan in the tile): the shape does not
		// depend on how the look-back found excl.
		bool has_excl = tile > 0u;
		T excl = has_excl ? look_back(lid, tile, total) : SCAN_NEUTRAL;
		excl = with_parts_before(lid, tile, has_excl, excl, total);
		if (PARK_ROWS > 0u) {
			[[unroll]] for (uint r = 0u; r < CHUNK_ROWS; r++)
				if (r < PARK_ROWS)
					store_scanned_row(tile, true, r, s_park[r * WG_SIZE + gl_LocalInvocationIndex],
							  has_excl, excl, false);
			excl = has_excl ? scan_op(excl, parked_total) : parked_total;
			has_excl = true;
		}
		// Every lane stores its rows through one call, its prefix chosen before it. Lane
		// 0's prefix is the row carry, not a shuffle, and as a branch of its own it made
		// every subgroup run the store code twice, once for lane 0 and once for the
		// others: one call took the 32-bit scans that compute their prefixes after the
		// look-back from 674-694 to 631-665 us at 2^28 on the H200 (f32 sum 684-694 ->
		// 655-661; session 21, runs S21-6 to S21-8).
		[[unroll]] for (uint r = 0u; r < CHUNK_ROWS; r++) {
			if (LOCAL_SCAN_EARLY)
				store_scanned_row(tile, false, r, x[r], has_excl, excl, false);
			else
				store_row(tile, r, r > 0u || first_has,
					  ROW_PREFIX_EARLY ? prefixes[r] : row_prefix(incl[r], run, has),
					  x[r], has_excl, excl);
		}
		return;
	}
#endif
	// The tile's aggregate: its two slots per invocation folded, then tile_upsweep (which
	// starts and ends with a barrier; state is what tile_downsweep needs). fallback_tile
	// computes it in the same shape, so the owner and a fallback get the same bits.
	T vals[2][ITEMS], state[2];
	load_tile(lid, tile, vals);
	T total = tile_upsweep(lid, fold_slot(vals[0]), fold_slot(vals[1]), state);
	if (lid == 0u)
		publish(tile_entry(tile), total); // successors may use it from now on
	// Published before any output is stored: a waiter that reads output where this tile's
	// input was (in place) also sees the state, and discards its fallback.
	memoryBarrierBuffer();
	barrier();

	// Each slot's exclusive prefix in the tile, before the look-back (whose fallbacks reuse
	// the tile scan's shared memory).
	T slot_prefix[2];
	tile_downsweep(lid, state, slot_prefix);

	bool has_excl = tile > 0u;
	T excl = has_excl ? look_back(lid, tile, total) : SCAN_NEUTRAL;
	excl = with_parts_before(lid, tile, has_excl, excl, total);

	T prefix[2] = { scan_op(excl, slot_prefix[0]), scan_op(excl, slot_prefix[1]) };
	store_tile(lid, tile, prefix, vals);
}
