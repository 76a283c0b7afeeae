#version 460
// reduce.comp: the strided two-dispatch reduction (and count-if, with KERNEL_COUNT).
//
// Pass 0 runs a fixed number of workgroups chosen for the device, whatever n is: each
// invocation folds a strided range of the input into registers (Brent: many elements per
// invocation, so the tree below is paid once per workgroup, not once per 512 elements),
// loading 16-byte vectors into two independent accumulators so that two loads are in flight
// per iteration. Then a workgroup tree with sequential addressing and neutral padding writes
// one partial per workgroup. Pass 1 is the same kernel with one workgroup over the partials;
// it writes the result into an 8-byte slot that can stay on the GPU or be read back. Pass 3
// runs both in one dispatch: pass 0, then the last workgroup to finish (counted on a zeroed
// word) folds the partials as pass 1 would, which saves the second dispatch and the barrier
// before it (kern.c uses it for every reduction of one buffer but the small ones, pass 2).
// Pass 3 runs in pipelines of its own (ONE_DISPATCH below).
// Where FLAGGED_PARTIALS is set, pass 3's partials need no fences (below). Built with
// ATOMIC_SUM32 (count-if, and sums of 32-bit integers) or ATOMIC_VALUE (min and max, and
// sums of 64-bit integers), pass 3 has no partials and no last workgroup at all: each
// workgroup takes its value into the result slot itself by one atomic add or max (below).
//
// Element order of the fold depends only on n and the workgroup count, so the same input
// gives the same bits on every run and in every batch.

#include "common.glsl"
#extension GL_EXT_control_flow_attributes : require
#ifndef TILE_BLELLOCH
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#endif

layout(local_size_x = WG_SIZE) in;

#ifdef KERNEL_COUNT
// count-if: elements map to 0/1 and are summed as uint (n < 2^31 fits).
#define ACC uint
#define ACC_NEUTRAL 0u
#define acc_op(a, b) ((a) + (b))
#elif EXACT_COMPARE
// Floats on a device that may flush subnormals (common.glsl): min and max fold order keys
// with integer min/max, so every bit of the answer survives at the cost of a few integer
// operations per element. NaN maps to the extreme key, so it wins as in numpy, and comes back
// as the quiet NaN; of two equal zeros, -0 is the smaller. Accumulators of every op travel as
// integer bits (ACC), never in float registers, where a key's bit pattern could be altered.
#define KEYED (OP >= 2u)
#if defined(DTYPE_F32)
#define ACC uint
T acc_value(ACC a) { return uintBitsToFloat(a); }
ACC acc_bits(T x) { return floatBitsToUint(x); }
ACC key_elem(T x) { return uint(is_nan(x) ? (OP == 2u ? int(0x80000000u) : 0x7fffffff) : order_key(x)); }
ACC key_op(ACC a, ACC b) { return uint(OP == 2u ? min(int(a), int(b)) : max(int(a), int(b))); }
// The NaN probe (fold_strided): an element's magnitude bits, above PROBE_NAN for a NaN.
uint nan_probe(T x) { return floatBitsToUint(x) & 0x7fffffffu; }
#define PROBE_NAN 0x7f800000u
#define NAN_VALUE uintBitsToFloat(0x7fc00000u) // the quiet NaN every NaN result comes back as
ACC plain_key(T x) { return uint(order_key(x)); }
T key_value(ACC k)
{
	int x = int(k);
	if (x == (OP == 2u ? int(0x80000000u) : 0x7fffffff))
		return NAN_VALUE;
	return intBitsToFloat(x ^ ((x >> 31) & 0x7fffffff));
}
#else
#define ACC uvec2
T acc_value(ACC a) { return packDouble2x32(a); }
ACC acc_bits(T x) { return unpackDouble2x32(x); }
// Component by component: a vector selected by a specialization constant came out wrong on
// lavapipe (the same select on scalars is right).
uvec2 nan_key() { return uvec2(OP == 2u ? 0u : 0xffffffffu, OP == 2u ? 0x80000000u : 0x7fffffffu); }
KEY acc_key(ACC a) { return int64_t(packUint2x32(a)); }
ACC plain_key(T x) { return unpackUint2x32(uint64_t(order_key(x))); }
ACC key_elem(T x) { return is_nan(x) ? nan_key() : plain_key(x); }
ACC key_op(ACC a, ACC b) { return (OP == 2u) == key_less(acc_key(a), acc_key(b)) ? a : b; }
// The NaN probe (fold_strided): the high word's magnitude bits, plus one where the low word
// is not zero (at most 0x80000000), above PROBE_NAN for a NaN only: exponent all ones and a
// mantissa bit set in either word.
uint nan_probe(T x)
{
	uvec2 b = unpackDouble2x32(x);
	return (b.y & 0x7fffffffu) + uint(b.x != 0u);
}
#define PROBE_NAN 0x7ff00000u
#define NAN_VALUE packDouble2x32(uvec2(0u, 0x7ff80000u)) // the quiet NaN of every NaN result
T key_value(ACC k)
{
	if (k == nan_key())
		return NAN_VALUE;
	ivec2 x = ivec2(k);
	int flip = x.y >> 31;
	return packDouble2x32(uvec2(ivec2(x.x ^ flip, x.y ^ (flip & 0x7fffffff))));
}
#endif
ACC map_elem(T x) { return KEYED ? key_elem(x) : acc_bits(x); }
ACC acc_op(ACC a, ACC b) { return KEYED ? key_op(a, b) : acc_bits(op(acc_value(a), acc_value(b))); }
#define ACC_NEUTRAL map_elem(NEUTRAL)
// The bits of the value a final accumulator stands for.
ACC result_bits(ACC r) { return KEYED ? acc_bits(key_value(r)) : r; }
#else
#define ACC T
#define ACC_NEUTRAL NEUTRAL
#define acc_op(a, b) op(a, b)
#endif

layout(buffer_reference, scalar, buffer_reference_align = 4) buffer Accs { ACC v[]; };

layout(push_constant, scalar) uniform Params {
	uvec2 src;      // pass 0 and 3: element 0 of the input; pass 1: the partials
	uvec2 src_vec;  // pass 0 and 3: the first 16-byte aligned element (element `head`)
	uvec2 dst;      // pass 0: partials, one per workgroup; pass 1 and 3: the result slot
	uvec2 cmp_bits; // count: the comparison value's bits
	uint n;         // pass 0 and 3: elements; pass 1: partials; pass 2: entries in the table
	uint head;      // pass 0 and 3: elements before src_vec
	uint nvec;      // pass 0 and 3: whole vectors from src_vec
	uint pass_index; // 0, 1 or 2 (small jobs, one workgroup each, described by the table); 3 in
	                 // the ONE_DISPATCH pipelines, which run pass 3 only; 2 in the SPREAD_JOBS builds
	uint cmp;       // count: vkr_cmp
	uvec2 partials; // pass 3 with partials: one per workgroup (FLAGGED_PARTIALS: flagged, zeroed)
	uvec2 counter;  // pass 3 with partials: 16 zeroed bytes, 16-aligned: the arrivals' counter
} pc;

// Pass 3 ("one dispatch"): pass 0, then the workgroup that arrives last folds every partial
// as pass 1 would. Partials and the counter are shared between workgroups: coherent, so the
// last one reads them from memory and not from a stale cache. The CPU zeroes the counter each
// time it records the command buffer (command buffers are submitted once).
layout(buffer_reference, scalar, buffer_reference_align = 4) coherent buffer SharedAccs { ACC v[]; };
layout(buffer_reference, scalar, buffer_reference_align = 4) coherent volatile buffer Arrivals { uint v; };
shared bool s_last;

// The atomic tails (the _summed and reduce_atomic builds): each workgroup of pass 3 takes its
// value into the 8-byte result slot by one atomic and is done. No partials, no arrival
// counted, no last workgroup, and no answer awaited: nothing follows the atomic, so the
// workgroup ends as soon as it is issued, and the command buffer's completion makes every
// atomic visible to the host. The slot must read zero when the command buffer starts (kern.h),
// and zero is the neutral of every tail: the sums add to it, and min and max travel as
// "ordered" unsigned integers (below). The tail that waited for its atomic's answer, then
// counted its arrival, then let the last workgroup read the word again and store the result
// paid three round trips on the last workgroup's path: posting the atomic alone took 0.9 us
// off i32 max and 0.6 off f32 and i64 max at 2^24 on the H200, 1.0 to 1.2 us at 2^22
// (session 31, run S31-1). Atomics on one word are totally ordered, and integer sums wrap
// and extremes compare the same in any order, so the bits never depend on which workgroup
// came first.
//
// ATOMIC_SUM32 (count-if, and sums of i32 and u32: 32-bit integer sums, whose value does not
// depend on the order of the fold): an atomic add to the slot's low 32 bits.
#ifdef ATOMIC_SUM32
#if !(defined(KERNEL_COUNT) || defined(DTYPE_I32) || defined(DTYPE_U32))
#error "32-bit atomic sums: count-if and sums of 32-bit integers only"
#endif
layout(buffer_reference, scalar, buffer_reference_align = 8) buffer Sum32Slot { uint v; };
#endif

#ifdef ATOMIC_VALUE
// Min and max by atomics (the reduce_atomic builds, for integers, and floats where keys are
// compared, EXACT_COMPARE), and sums of 64-bit integers (ATOMIC_SUM): an unsigned atomic
// max (or add) on the slot. Min and max travel as "ordered" unsigned integers, whose
// unsigned order is the op's order reversed for min, so that zero is the neutral and one
// atomic (max) serves both ops; the host turns the slot back into the value
// (kern_result_decode). A 64-bit integer sum wraps modulo 2^64 in any order, so the atomic
// adds give the bits of the ordered fold, and the slot holds the sum itself.
#if defined(DTYPE_I64) || defined(DTYPE_U64) || defined(DTYPE_F64)
#extension GL_EXT_shader_atomic_int64 : require
#endif
#if defined(KERNEL_COUNT) || defined(DENORM_PRESERVE) || !(defined(DTYPE_I32) || defined(DTYPE_U32) || \
	defined(DTYPE_I64) || defined(DTYPE_U64) || EXACT_COMPARE)
#error "min and max by atomics: integers, and floats compared by keys"
#endif
#if defined(DTYPE_I64) || defined(DTYPE_U64)
// OP is a specialization constant: kern.c describes the sum and product pipelines of these
// dtypes, besides min and max.
const bool ATOMIC_SUM = OP == 0u;
#else
const bool ATOMIC_SUM = false;
#endif
#if defined(DTYPE_I32) || defined(DTYPE_U32) || defined(DTYPE_I64) || defined(DTYPE_U64)
// Products of integers by exponents (VKR_REDUCE_INT_PROD=exponents; kern.c builds the
// product pipelines of the integer dtypes only where it is set). A product modulo 2^k has
// no atomic, but every x modulo 2^k is 2^t * (+-1) * 5^e (the odd residues are the group
// {+-1} x <5>, 5 of order 2^(k-2)): multiplying adds the t, adds the e modulo 2^(k-2) and
// XORs the signs, which atomics do in any order. Each workgroup takes its partial apart
// and posts three atomics to its result area: an add of e to word 0, of t to word 1 (k for
// a zero partial), and an XOR of the sign into word 2 (words of the dtype's width). The
// host puts the product together again (kern_result.c's decode_exponents): 0 where the t add up
// to k or more, else ((+-1) * 5^e) << t. A partial 2^t * u knows its odd part u only modulo
// 2^(k-t), which is all the product needs modulo 2^(k - sum of t). The bits are those of the
// ordered fold: the product modulo 2^k is the same in any order.
const bool ATOMIC_PROD = OP == 1u;
#if defined(DTYPE_I32) || defined(DTYPE_U32)
#define WORD uint
#define WORD_BITS 32
#define SLOT 2u
#define INVERSE_OF_5 0xcccccccdu
#else
#define WORD uint64_t
#define WORD_BITS 64
#define SLOT 1u
#define INVERSE_OF_5 0xcccccccccccccccdul
#endif
// The three words in 8-byte slots, whatever their width: index k * SLOT.
layout(buffer_reference, scalar, buffer_reference_align = 8) buffer ExponentWords { WORD v[]; };

// The e of an odd y = 1 (mod 4) with 5^e = y: bit i of y * 5^-(the bits found so far) says
// whether 5^(2^(i-2)), which is 1 + 2^i modulo 2^(i+1), is a factor; k - 2 steps.
WORD log_base_5(WORD y)
{
	WORD e = WORD(0u), q = INVERSE_OF_5; // 5^-(2^(i-2)) at step i
	for (uint i = 2u; i < uint(WORD_BITS); i++) {
		if (((y >> i) & WORD(1u)) != WORD(0u)) {
			y *= q;
			e |= WORD(1u) << (i - 2u);
		}
		q *= q;
	}
	return e;
}

void post_exponents(uvec2 dst, ACC r)
{
	ExponentWords words = ExponentWords(dst);
	WORD x = WORD(r);
	if (x == WORD(0u)) {
		atomicAdd(words.v[SLOT], WORD(uint(WORD_BITS)));
		return;
	}
#if WORD_BITS == 32
	uint t = uint(findLSB(x));
#else
	uvec2 halves = unpackUint2x32(x);
	uint t = halves.x != 0u ? uint(findLSB(halves.x)) : 32u + uint(findLSB(halves.y));
#endif
	WORD u = x >> t;
	bool negative = (u & WORD(3u)) == WORD(3u);
	if (negative)
		u = WORD(0u) - u;
	atomicAdd(words.v[0], log_base_5(u));
	if (t != 0u)
		atomicAdd(words.v[SLOT], WORD(t));
	if (negative)
		atomicXor(words.v[2u * SLOT], WORD(1u));
}
#else
const bool ATOMIC_PROD = false;
#endif
#if defined(DTYPE_I32) || defined(DTYPE_U32) || defined(DTYPE_F32)
#define ORDERED uint
#define ORDERED_SIGN 0x80000000u
#else
#define ORDERED uint64_t
#define ORDERED_SIGN 0x8000000000000000ul
#endif
layout(buffer_reference, scalar, buffer_reference_align = 8) buffer ExtremeWord { ORDERED v; };

// The signed types (and the keys, signed) flip their sign bit into unsigned order.
ORDERED ordered_from(ACC r)
{
#if defined(DTYPE_I64) || defined(DTYPE_U64)
	if (ATOMIC_SUM)
		return uint64_t(r);
#endif
#if defined(DTYPE_U32) || defined(DTYPE_U64)
	ORDERED u = r;
#elif defined(DTYPE_I32) || defined(DTYPE_F32)
	ORDERED u = uint(r) ^ ORDERED_SIGN;
#elif defined(DTYPE_I64)
	ORDERED u = uint64_t(r) ^ ORDERED_SIGN;
#else
	ORDERED u = packUint2x32(r) ^ ORDERED_SIGN; // the key (low word, high word) as int64
#endif
	return OP == 2u ? ~u : u;
}
#endif

// Pass 2 ("segmented"): many small jobs of one op and dtype in one dispatch. Workgroup j
// reduces job j of the table at pc.src whole, with the same fold and tree as a lone job of
// that size, and writes its result slot: a small job costs a table entry, not two dispatches.
// One workgroup alone runs at one multiprocessor's bandwidth, about 45 GB/s on the H200: a
// 2^14-element f64 sum took 8.5 us and an f64 count-if 11.9, against 7.3 and 6.6 for 2^15
// elements spread over workgroups (session 28; eight loads in flight per invocation ran no
// faster, run S28-1). So the small jobs of more than 64 KiB (kern.c: 8-byte types above 8192
// elements) are spread instead (SPREAD_JOBS below): one workgroup per 1024 vectors, as pass
// 0's grid, each folding its share as pass 0 would, with a table entry each; the last of a
// job's workgroups to arrive folds their partials as pass 3's fenced tail does. 8.5 -> 7.7 us
// for that f64 sum, 11.9 -> 8.2 for the count-if (runs S28-2 to S28-4). That tail costs about
// 1.3 us, more than spreading saves at 64 KiB or less. Either way a job's shape depends only
// on its size and alignment, so a lone small job runs as one in a table, and its bits never
// depend on its batch. The spread jobs have modules of their own (meson's _spread builds):
// with their code in this module, even behind a specialization constant, every one-part job
// ran 0.10 to 0.16 us slower on the H200 (runs S28-3 to S28-5).
struct SmallJob {
	uvec2 src;
	uvec2 src_vec;
	uvec2 dst;
	uvec2 cmp_bits;
	uint n;
	uint head;
	uint nvec;
	uint cmp;
};
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer JobTable { SmallJob v[]; };
#ifdef SPREAD_JOBS
struct SpreadJob {
	SmallJob job;
	uvec2 counter;  // a zeroed word: the parts' arrivals
	uvec2 partials; // one per part
	uint part;      // this workgroup's share, of parts
	uint parts;
};
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer SpreadTable { SpreadJob v[]; };
#endif

// The comparison of count-if: from the push constants, or from the job table entry.
uint g_cmp;
uvec2 g_cmp_bits;

#if defined(KERNEL_COUNT) && (EXACT_COMPARE || !(defined(DTYPE_F32) || defined(DTYPE_F64)))
// Count-if of integers, and of floats where subnormals may flush: each comparison is a range
// of order keys (integers are their own keys), [g_low, g_high] or its complement, set once
// per job, so an element costs its key and two key compares, with no branch on the
// comparison and no NaN test of its own (integer count-if by a switch per element ran 1.5 us
// slower than the sum at 2^24 on the H200; session 14, run S14-4). -0 and +0 are equal: a zero value's range spans
// both keys. NaNs need no test because their keys lie outside [key(-inf), key(+inf)], where
// every range but "ne"'s complement stays, so they count only for "ne", as in numpy; against
// a NaN value the range is empty: "ne" counts everything and the others nothing. (The NaN
// tests per element cost the f64 count 14% at 2^28 on the H200: 551 us against 483 for the
// sum; session 14, run S14-2.)
KEY g_low, g_high;
bool g_outside;

#if !EXACT_COMPARE
#define NEG_ZERO T(0) // unused: integers have one zero
#elif defined(DTYPE_F32)
#define NEG_ZERO uintBitsToFloat(0x80000000u)
#else
#define NEG_ZERO packDouble2x32(uvec2(0u, 0x80000000u))
#endif
// Keys are integers: the next key up or down. Never past the type's ends: set_comparison()
// empties those ranges first.
KEY key_next(KEY k) { return k + KEY(1); }
KEY key_prev(KEY k) { return k - KEY(1); }

void set_comparison(uint cmp, uvec2 bits)
{
	g_cmp = cmp;
	g_cmp_bits = bits;
	T v = value_from_bits(bits);
	bool zero = both_zero(v, v);
	KEY lo = zero ? order_key(NEG_ZERO) : order_key(v);
	KEY hi = zero ? order_key(T(0)) : lo;
	KEY lowest = order_key(NEG_LIMIT), highest = order_key(POS_LIMIT); // -inf, +inf or the type's ends
	g_outside = cmp == 1u;
	g_low = cmp == 2u || cmp == 3u ? lowest : cmp == 4u ? key_next(hi) : lo;
	g_high = cmp == 2u ? key_prev(lo) : cmp == 4u || cmp == 5u ? highest : hi;
	// Nothing is below the lowest value or above the highest, and nothing compares with NaN
	// but by "ne" (the complement of the empty range).
	if (is_nan(v) || (cmp == 2u && lo == lowest) || (cmp == 4u && hi == highest)) {
		g_low = highest;
		g_high = lowest;
	}
}

bool predicate(T x, T v)
{
	KEY k = order_key(x);
	return (!key_less(k, g_low) && !key_less(g_high, k)) != g_outside;
}
#elif defined(KERNEL_COUNT)
// Floats on a device that keeps subnormals: native IEEE comparisons.
void set_comparison(uint cmp, uvec2 bits)
{
	g_cmp = cmp;
	g_cmp_bits = bits;
}

bool predicate(T x, T v)
{
	// IEEE semantics as numpy: every comparison with NaN is false except "ne".
	if (is_nan(x) || is_nan(v))
		return g_cmp == 1u;
	KEY kx = order_key(x), kv = order_key(v); // the values themselves here
	bool zeros = both_zero(x, v); // false: native compares already treat -0 == +0
	switch (g_cmp) {
	case 0u: return kx == kv || zeros;
	case 1u: return kx != kv && !zeros;
	case 2u: return key_less(kx, kv) && !zeros;
	case 3u: return !key_less(kv, kx) || zeros;
	case 4u: return key_less(kv, kx) && !zeros;
	default: return !key_less(kx, kv) || zeros;
	}
}
#endif
#ifdef KERNEL_COUNT
ACC map_elem(T x) { return predicate(x, value_from_bits(g_cmp_bits)) ? 1u : 0u; }
#elif !EXACT_COMPARE
ACC map_elem(T x) { return x; }
#endif

// The vectors' elements, as fold_strided takes them. Min and max of floats by keys take
// each element's order key unchecked, and a NaN's key is some key outside [key(-inf),
// key(+inf)] that may not win; beside the keys each invocation keeps the largest NaN probe
// of its elements, and fold_strided gives the NaN's key where it says a NaN was seen. So a
// NaN is tested for with one max per element instead of a test and a select per element
// (common.glsl's is_nan, in map_elem), and only once per invocation is its key put in.
#if EXACT_COMPARE && !defined(KERNEL_COUNT)
#define PROBED KEYED
ACC vector_elem(T x, inout uint probe)
{
	probe = max(probe, nan_probe(x)); // unused, and dropped by the compiler, unless KEYED
	return KEYED ? plain_key(x) : acc_bits(x);
}
#else
#define PROBED false
#define PROBE_NAN 0u
#define NAN_VALUE T(0)
ACC vector_elem(T x, inout uint probe) { return map_elem(x); }
#endif

ACC fold_vec(VT x, inout uint probe)
{
#if VEC == 4
	return acc_op(acc_op(vector_elem(x.x, probe), vector_elem(x.y, probe)),
		      acc_op(vector_elem(x.z, probe), vector_elem(x.w, probe)));
#else
	return acc_op(vector_elem(x.x, probe), vector_elem(x.y, probe));
#endif
}

shared ACC tree[WG_SIZE];

#if defined(KERNEL_COUNT) || !EXACT_COMPARE
ACC result_bits(ACC r) { return r; }
#endif

// Folds elements first, first + stride, ... of one array into two accumulators, then the
// scalar head and tail; every index and order depends only on (n, alignment, first, stride).
ACC fold_strided(uvec2 src, uvec2 src_vec, uint n, uint head, uint nvec, uint first, uint stride)
{
	ACC a0 = ACC_NEUTRAL;
	ACC a1 = ACC_NEUTRAL;
	uint probe0 = 0u, probe1 = 0u; // the largest NaN probes, one per accumulator (PROBED)
	Vecs vecs = Vecs(src_vec);
	uint i = first;
	for (; i + stride < nvec; i += 2u * stride) {
		VT x = vecs.v[i];
		VT y = vecs.v[i + stride];
		a0 = acc_op(a0, fold_vec(x, probe0));
		a1 = acc_op(a1, fold_vec(y, probe1));
	}
	if (i < nvec)
		a0 = acc_op(a0, fold_vec(vecs.v[i], probe0));
	// Scalar elements before the aligned part and after the last whole vector.
	Elems elems = Elems(src);
	uint tail_start = head + nvec * VEC;
	if (first < head)
		a1 = acc_op(a1, map_elem(elems.v[first]));
	if (first < n - tail_start)
		a0 = acc_op(a0, map_elem(elems.v[tail_start + first]));
	if (PROBED && max(probe0, probe1) > PROBE_NAN)
		return map_elem(NAN_VALUE);
	return acc_op(a0, a1);
}

// An accumulator as 32-bit words, for the shuffles and the flagged partials (64-bit
// integers as two words: subgroup operations on 64-bit integer types would need
// shaderSubgroupExtendedTypes).
#if defined(KERNEL_COUNT) || (EXACT_COMPARE && defined(DTYPE_F32)) || defined(DTYPE_U32)
#define ACC_BITS uint
#define ACC_WORDS 1
ACC_BITS acc_to_bits(ACC x) { return x; }
ACC acc_from_bits(ACC_BITS b) { return b; }
#elif EXACT_COMPARE
#define ACC_BITS uvec2
#define ACC_WORDS 2
ACC_BITS acc_to_bits(ACC x) { return x; }
ACC acc_from_bits(ACC_BITS b) { return b; }
#elif defined(DTYPE_F32)
#define ACC_BITS uint
#define ACC_WORDS 1
ACC_BITS acc_to_bits(ACC x) { return floatBitsToUint(x); }
ACC acc_from_bits(ACC_BITS b) { return uintBitsToFloat(b); }
#elif defined(DTYPE_F64)
#define ACC_BITS uvec2
#define ACC_WORDS 2
ACC_BITS acc_to_bits(ACC x) { return unpackDouble2x32(x); }
ACC acc_from_bits(ACC_BITS b) { return packDouble2x32(b); }
#elif defined(DTYPE_I32)
#define ACC_BITS uint
#define ACC_WORDS 1
ACC_BITS acc_to_bits(ACC x) { return uint(x); }
ACC acc_from_bits(ACC_BITS b) { return int(b); }
#elif defined(DTYPE_I64)
#define ACC_BITS uvec2
#define ACC_WORDS 2
ACC_BITS acc_to_bits(ACC x) { return unpackUint2x32(uint64_t(x)); }
ACC acc_from_bits(ACC_BITS b) { return int64_t(packUint2x32(b)); }
#else
#define ACC_BITS uvec2
#define ACC_WORDS 2
ACC_BITS acc_to_bits(ACC x) { return unpackUint2x32(x); }
ACC acc_from_bits(ACC_BITS b) { return packUint2x32(b); }
#endif

#ifdef HOST_FOLD
// Partials folded by the host (the reduce_hostfold builds, sums and products of every dtype;
// kern.c runs them, unless VKR_REDUCE_FOLD=device, where a sum or product has no atomic tail):
// each workgroup of pass 3 stores its partial into entry gl_WorkGroupID.x of the result area,
// in host memory, and ends. No arrival, no last workgroup: the host folds the partials in
// pass 1's order and tree (kern_result.c's fold_on_host), so the bits are those of two dispatches
// but where a partial or a step is subnormal (the host keeps what the device may flush).
// Float products have no exact atomic form, and this is their only tail without a last
// workgroup.
#if defined(KERNEL_COUNT) || defined(TILE_BLELLOCH)
#error "partials folded by the host: sums and products, in the subgroup build"
#endif
#endif

#ifdef LIMB_SUM
// Float sums by limbs (the reduce_limbs builds, for f32 and f64 where the device does not
// preserve subnormals; kern.c runs them with VKR_REDUCE_FLOAT_SUM=limbs): each workgroup
// adds its partial, exactly, into fixed-point limbs of the result area by posted atomics, as
// the atomic tails above take integers: no partials stored, no arrival, no last workgroup.
// A finite partial is m * 2^(pos - BIAS) with m an integer of MANT_BITS + 1 bits and
// pos = max(biased exponent, 1) - 1 (BIAS 149 for f32, 1074 for f64): m << (pos % 32) is cut
// into 32-bit pieces, each added (negated for a negative partial: the limbs are signed
// 64-bit sums) to limb pos / 32 and the next ones, so a limb takes at most 2^31 pieces of
// 32 bits before it could overflow. The host adds the limbs with their carries and rounds
// the exact sum once, to nearest even (kern_result.c's decode_limbs): the bits do not depend on
// the order in which the workgroups arrive, nor on any other job. They are the exact sum of
// the partials rounded once, which the fold of the partials in order (pass 1, and the
// partials' tails) is not: the two paths may differ in the last bits, as they differ in
// accuracy. Word 0 of the area ORs flags (an infinite partial of either sign, a NaN one, a
// +0 one); word 1 ORs a bit per first limb of each finite non-zero partial, so that the host
// reads only the limbs that were reached; the limbs follow (9 for f32, 66 for f64).
#extension GL_EXT_shader_atomic_int64 : require
#if !(defined(DTYPE_F32) || defined(DTYPE_F64)) || defined(KERNEL_COUNT) || defined(DENORM_PRESERVE)
#error "limb sums: sums of f32 and f64, on devices that do not preserve subnormals"
#endif
layout(buffer_reference, scalar, buffer_reference_align = 8) buffer LimbArea { uint64_t v[]; };
#define LIMB_FLAG_POS_INF 1ul
#define LIMB_FLAG_NEG_INF 2ul
#define LIMB_FLAG_NAN 4ul
#define LIMB_FLAG_POS_ZERO 8ul
#define LIMB_FIRST 2u

void add_piece(LimbArea area, uint limb, uint64_t piece, bool negative)
{
	if (piece != 0ul)
		atomicAdd(area.v[LIMB_FIRST + limb], negative ? 0ul - piece : piece);
}

void post_limbs(uvec2 dst, ACC r)
{
	LimbArea area = LimbArea(dst);
#if defined(DTYPE_F32)
	uint bits = acc_to_bits(r);
	bool negative = (bits >> 31) != 0u;
	uint e = (bits >> 23) & 0xffu;
	uint64_t m = uint64_t(bits & 0x7fffffu);
	const uint EXP_ALL = 0xffu;
	const uint MANT_BITS = 23u;
#else
	uvec2 bits = acc_to_bits(r);
	bool negative = (bits.y >> 31) != 0u;
	uint e = (bits.y >> 20) & 0x7ffu;
	uint64_t m = packUint2x32(uvec2(bits.x, bits.y & 0xfffffu));
	const uint EXP_ALL = 0x7ffu;
	const uint MANT_BITS = 52u;
#endif
	if (e == EXP_ALL) {
		atomicOr(area.v[0], m != 0ul ? LIMB_FLAG_NAN : negative ? LIMB_FLAG_NEG_INF : LIMB_FLAG_POS_INF);
		return;
	}
	if (e == 0u && m == 0ul) {
		if (!negative) // never otherwise: the sum's neutral is +0
			atomicOr(area.v[0], LIMB_FLAG_POS_ZERO);
		return;
	}
	if (e != 0u)
		m |= 1ul << MANT_BITS;
	uint pos = max(e, 1u) - 1u;
	uint limb = pos >> 5u, shift = pos & 31u;
	uint64_t w = m << shift; // f64: bits 64 and up are lost here, and come back as piece 2
	add_piece(area, limb, w & 0xfffffffful, negative);
	add_piece(area, limb + 1u, w >> 32u, negative);
#if defined(DTYPE_F64)
	add_piece(area, limb + 2u, shift == 0u ? 0ul : m >> (64u - shift), negative);
#endif
	atomicOr(area.v[1], 1ul << limb);
}
#endif

// Flagged partials (FLAGGED_PARTIALS, set by gpu.c where kern_flagged_partials() says so:
// 4-byte accumulators, on devices whose host-visible memory is device-local): pass 3 without
// its fences. Each partial is stored as its bits followed by their complement, in words the
// CPU zeroed (the command buffer's table), and the last workgroup to arrive reads each
// partial again until the two agree. Every word is either still zero or holds its final
// value, so a pair read half old and half new either disagrees or already is the value (a
// value of all ones or all zeros reads the same either way): no 64-bit atomicity is assumed,
// nor even 32-bit (a bit of x still zero makes y's bit one only where the value's is zero).
// Every partial was stored before its workgroup's arrival, so the wait ends once the stores
// land, whatever runs meanwhile. Like the single-pass scan's look-back, this relies on
// coherent volatile stores reaching the other workgroups' loads eventually; under the Vulkan
// memory model it is formally a data race (relaxed atomics would be the strict form). On a
// CPU implementation the re-read never happens (the arrival's atomic orders the stores), so
// lavapipe's tests check the layout and the fold, and the H200's runs the ordering. The CPU
// pays a memset of 8 bytes per workgroup per reduction when it records. On the H200 this
// took 0.6 to 1.1 us off every reduction from 2^16 to 2^22 elements and 0 to 0.3 us from 2^24
// up (session 15, run S15-2). With 8-byte accumulators (two words and their complements) the
// same gain below 2^22 came with 0.1 to 0.7 us lost at 2^23 to 2^25 for f64 sum and max and
// i64 max, at the same registers; not understood, so they keep the fences unless
// VKR_REDUCE=flagged. A specialization constant,
// not a pass of its own, so that the driver compiles one tail into each pipeline: with both in
// one pipeline (a runtime pass index) the fenced tail ran up to 0.5 us slower at 2^24 (run
// S15-1).
layout(constant_id = 1) const bool FLAGGED_PARTIALS = false;
#if ACC_WORDS == 1
#define FLAGGED uvec2
#else
#define FLAGGED uvec4
#endif
layout(buffer_reference, scalar, buffer_reference_align = 8) coherent volatile buffer FlaggedAccs { FLAGGED v[]; };
#if ACC_WORDS == 1
FLAGGED flag_acc(ACC x) { uint b = acc_to_bits(x); return uvec2(b, ~b); }
bool flag_ready(FLAGGED f) { return f.y == ~f.x; }
ACC flag_value(FLAGGED f) { return acc_from_bits(f.x); }
#else
FLAGGED flag_acc(ACC x) { uvec2 b = acc_to_bits(x); return uvec4(b, ~b); }
bool flag_ready(FLAGGED f) { return f.zw == ~f.xy; }
ACC flag_value(FLAGGED f) { return acc_from_bits(f.xy); }
#endif

// The last workgroup with flagged partials: the partials lid, lid + WG_SIZE, ... folded in
// order, as pass 1 and the fenced tail fold them. Three loads are issued before any is
// waited for: 1,056 partials in two rounds of loads instead of three, at the same 20
// registers; 0.2 to 0.4 us off 4-byte products and up to 0.13 off f32 sums at 2^23 to 2^25
// on the H200, within 0.1 below (runs S30-7, S30-8). Five (one round) took 30 registers and
// ran 0.1 to 0.2 us slower up to 2^21 (S30-7); four ran no faster than two (S15-2). A
// partial whose words do not agree yet is read again.
ACC fold_flagged(uint lid)
{
	const uint AHEAD = 3u;
	FlaggedAccs partials = FlaggedAccs(pc.partials);
	uint count = gl_NumWorkGroups.x;
	ACC a0 = ACC_NEUTRAL;
	for (uint base = lid; base < count; base += AHEAD * WG_SIZE) {
		FLAGGED f[AHEAD];
		[[unroll]] for (uint k = 0u; k < AHEAD; k++) {
			uint i = base + k * WG_SIZE;
			f[k] = i < count ? partials.v[i] : FLAGGED(0u);
		}
		[[unroll]] for (uint k = 0u; k < AHEAD; k++) {
			uint i = base + k * WG_SIZE;
			if (i < count) {
				while (!flag_ready(f[k]))
					f[k] = partials.v[i];
				a0 = acc_op(a0, flag_value(f[k]));
			}
		}
	}
	return a0;
}

#ifndef TILE_BLELLOCH
// Workgroup tree by subgroup shuffles (the default build; meson's _bl build, TILE_BLELLOCH,
// keeps the shared-memory tree below for devices without them): an xor butterfly within each
// subgroup, then invocation 0 folds the first lane's value of each subgroup in order. The
// order of every fold depends only on the subgroup size, fixed for a device and kernel, so
// the same input still gives the same bits on every run and in every batch. Three barriers
// instead of nine: 0.2 to 0.7 us less per reduction on the H200 (session 14, run S14-1).
uint shuffle_bits(uint x, uint mask) { return subgroupShuffleXor(x, mask); }
uvec2 shuffle_bits(uvec2 x, uint mask) { return uvec2(shuffle_bits(x.x, mask), shuffle_bits(x.y, mask)); }
ACC shuffle_acc(ACC x, uint mask) { return acc_from_bits(shuffle_bits(acc_to_bits(x), mask)); }

ACC workgroup_reduce(uint lid, ACC mine)
{
	for (uint mask = 1u; mask < gl_SubgroupSize; mask <<= 1u)
		mine = acc_op(mine, shuffle_acc(mine, mask));
	barrier(); // a previous call's readers of tree[0] are done
	if (gl_SubgroupInvocationID == 0u)
		tree[gl_SubgroupID] = mine;
	barrier();
	if (lid == 0u) {
		ACC r = tree[0];
		for (uint g = 1u; g < gl_NumSubgroups; g++)
			r = acc_op(r, tree[g]);
		tree[0] = r;
	}
	barrier();
	return tree[0];
}
#else
// Workgroup tree, sequential addressing: the active half is contiguous, and every invocation
// reaches every barrier (invocations without data hold the neutral). lid 0 gets the result.
ACC workgroup_reduce(uint lid, ACC mine)
{
	tree[lid] = mine;
	for (uint k = WG_SIZE / 2u; k > 0u; k >>= 1u) {
		barrier();
		if (lid < k)
			tree[lid] = acc_op(tree[lid], tree[lid + k]);
	}
	barrier(); // invocation 0's last write is visible to every reader
	return tree[0];
}
#endif

// Whether this pipeline runs pass 3 and nothing else (kern.c's one-dispatch pipelines; the
// others run passes 0, 1 and 2 by pc.pass_index). A specialization constant, so that each
// pipeline holds only its own passes' code: with every pass in one pipeline, behind branches
// on pc.pass_index, the first workgroup of a one-dispatch reduction started 0.45 us later
// than the read kernel's at 2^16 and 0.95 us later at 2^24 and above, where the streamed
// array has pushed the kernel's code out of L2 (probably: one instruction fetch from memory
// per branch). Alone, pass 3 started as early as the read kernel (session 16, run S16-4).
layout(constant_id = 2) const bool ONE_DISPATCH = false;

void main()
{
	uint lid = gl_LocalInvocationID.x;
	uint gid = gl_GlobalInvocationID.x;
	uint stride = gl_NumWorkGroups.x * WG_SIZE;

#ifdef SPREAD_JOBS
	// The _spread builds run spread small jobs (pass 2 above) and nothing else.
	{
		uint entry = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
		if (entry >= pc.n)
			return; // whole workgroup: the grid is rounded up to whole rows
		SpreadJob e = SpreadTable(pc.src).v[entry];
		SmallJob j = e.job;
#ifdef KERNEL_COUNT
		set_comparison(j.cmp, j.cmp_bits);
#endif
		ACC r = workgroup_reduce(lid, fold_strided(j.src, j.src_vec, j.n, j.head, j.nvec,
							   e.part * WG_SIZE + lid, e.parts * WG_SIZE));
		// Pass 3's fenced tail over this job's parts.
		if (lid == 0u) {
			SharedAccs(e.partials).v[e.part] = r;
			memoryBarrierBuffer();
			s_last = atomicAdd(Arrivals(e.counter).v, 1u) == e.parts - 1u;
			memoryBarrierBuffer();
		}
		barrier();
		if (!s_last)
			return; // the whole workgroup: s_last is the same for every invocation
		memoryBarrierBuffer();
		r = workgroup_reduce(lid, lid < e.parts ? SharedAccs(e.partials).v[lid] : ACC_NEUTRAL);
		if (lid == 0u)
			Accs(j.dst).v[0] = result_bits(r);
		return;
	}
#else
#ifdef KERNEL_COUNT
	set_comparison(pc.cmp, pc.cmp_bits);
#endif

	if (!ONE_DISPATCH && pc.pass_index == 2u) {
		uint job = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
		if (job >= pc.n)
			return; // whole workgroup: the grid is rounded up to whole rows
		SmallJob j = JobTable(pc.src).v[job];
#ifdef KERNEL_COUNT
		set_comparison(j.cmp, j.cmp_bits);
#endif
		ACC r = workgroup_reduce(lid, fold_strided(j.src, j.src_vec, j.n, j.head, j.nvec, lid, WG_SIZE));
		if (lid == 0u)
			Accs(j.dst).v[0] = result_bits(r);
		return;
	}
#endif

	if (ONE_DISPATCH) {
		// Every tail written out here, chosen by the build (the atomic tails) or by
		// FLAGGED_PARTIALS: the flagged and fenced tails moved into two functions (the
		// arrival, the fold) ran 0.2 to 0.9 us slower from 2^22 up on the H200 (session 15,
		// run S15-6).
		ACC r = workgroup_reduce(lid, fold_strided(pc.src, pc.src_vec, pc.n, pc.head, pc.nvec, gid, stride));
#if defined(ATOMIC_SUM32)
		if (lid == 0u)
			atomicAdd(Sum32Slot(pc.dst).v, acc_to_bits(r));
#elif defined(ATOMIC_VALUE)
		if (lid == 0u) {
			ExtremeWord slot = ExtremeWord(pc.dst);
#if defined(DTYPE_I32) || defined(DTYPE_U32) || defined(DTYPE_I64) || defined(DTYPE_U64)
			if (ATOMIC_PROD)
				post_exponents(pc.dst, r);
			else
#endif
			if (ATOMIC_SUM)
				atomicAdd(slot.v, ordered_from(r));
			else
				atomicMax(slot.v, ordered_from(r));
		}
#elif defined(LIMB_SUM)
		if (lid == 0u)
			post_limbs(pc.dst, r);
#elif defined(HOST_FOLD)
		if (lid == 0u)
			Accs(pc.dst).v[gl_WorkGroupID.x] = r;
#else
		const bool flagged = FLAGGED_PARTIALS;
		if (lid == 0u) {
			if (flagged) {
				FlaggedAccs(pc.partials).v[gl_WorkGroupID.x] = flag_acc(r);
			} else {
				SharedAccs(pc.partials).v[gl_WorkGroupID.x] = r;
				memoryBarrierBuffer(); // the partial is visible before this arrival counts
			}
			s_last = atomicAdd(Arrivals(pc.counter).v, 1u) == gl_NumWorkGroups.x - 1u;
			// Acquire: the partials of the workgroups counted before this one are visible
			// to this workgroup (barrier() below orders shared memory only).
			if (!flagged)
				memoryBarrierBuffer();
		}
		barrier();
		if (!s_last)
			return; // the whole workgroup: s_last is the same for every invocation
		// As pass 1 over the partials, with one workgroup: the same order, the same bits.
		ACC a0 = ACC_NEUTRAL;
		if (flagged) {
			a0 = fold_flagged(lid);
		} else {
			memoryBarrierBuffer(); // every other workgroup's partial is visible from here
			SharedAccs partials = SharedAccs(pc.partials);
			for (uint i = lid; i < gl_NumWorkGroups.x; i += WG_SIZE)
				a0 = acc_op(a0, partials.v[i]);
		}
		r = workgroup_reduce(lid, a0);
		if (lid == 0u)
			Accs(pc.dst).v[0] = result_bits(r);
#endif
		return;
	}

	ACC mine;
	if (pc.pass_index == 0u) {
		mine = fold_strided(pc.src, pc.src_vec, pc.n, pc.head, pc.nvec, gid, stride);
	} else {
		ACC a0 = ACC_NEUTRAL;
		Accs partials = Accs(pc.src);
		for (uint i = gid; i < pc.n; i += stride)
			a0 = acc_op(a0, partials.v[i]);
		mine = a0;
	}
	ACC r = workgroup_reduce(lid, mine);
	if (lid == 0u) // pass 0 writes partials as they fold; pass 1 the value
		Accs(pc.dst).v[gl_WorkGroupID.x] = pc.pass_index == 1u ? result_bits(r) : r;
}
