// common.glsl: element types, operators and neutrals shared by every kernel.
//
// Each kernel is compiled once per dtype (DTYPE_F32 ... DTYPE_U64 defined by meson); the
// operation is the specialization constant OP, so the driver folds the switch away and the
// inner loops carry no branch on the operator. Buffers are reached through device addresses
// (GL_EXT_buffer_reference) passed in push constants: no descriptor sets, and no
// maxStorageBufferRange limit on how large one array can be.

#if defined(DENORM_PRESERVE) && (defined(DTYPE_F32) || defined(DTYPE_F64))
// Subnormals are values (numpy keeps them); where the device can keep them in every float
// instruction, the module says so and compares natively. Elsewhere EXACT_COMPARE below.
#extension GL_EXT_spirv_intrinsics : require
spirv_instruction(extensions = ["SPV_KHR_float_controls"], capabilities = [4464], id = 0)
void denorm_preserve_capability(); // declares the DenormPreserve capability; never called
#if defined(DTYPE_F32)
spirv_execution_mode(4459, 32); // DenormPreserve, 32-bit
#else
spirv_execution_mode(4459, 64); // DenormPreserve, 64-bit
#endif
#define EXACT_COMPARE 0
#elif defined(DTYPE_F32) || defined(DTYPE_F64)
#define EXACT_COMPARE 1
#else
#define EXACT_COMPARE 0
#endif

#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_scalar_block_layout : require

#if defined(DTYPE_I64) || defined(DTYPE_U64)
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#endif

// OP values match vkr_op: 0 sum, 1 prod, 2 min, 3 max.
layout(constant_id = 0) const uint OP = 0;

#define WG_SIZE 256

#if defined(DTYPE_F32)
#define T float
#define VT vec4
#define VEC 4
#elif defined(DTYPE_F64)
#define T double
#define VT dvec2
#define VEC 2
#elif defined(DTYPE_I32)
#define T int
#define VT ivec4
#define VEC 4
#elif defined(DTYPE_U32)
#define T uint
#define VT uvec4
#define VEC 4
#elif defined(DTYPE_I64)
#define T int64_t
#define VT i64vec2
#define VEC 2
#elif defined(DTYPE_U64)
#define T uint64_t
#define VT u64vec2
#define VEC 2
#else
#error "no DTYPE_ defined"
#endif

#if defined(DTYPE_F64) || defined(DTYPE_I64) || defined(DTYPE_U64)
#define ELEM_ALIGN 8
#else
#define ELEM_ALIGN 4
#endif

layout(buffer_reference, scalar, buffer_reference_align = ELEM_ALIGN) buffer Elems { T v[]; };
layout(buffer_reference, scalar, buffer_reference_align = 16) readonly buffer Vecs { VT v[]; };

// NaN tests on the bits: a compiler allowed to assume no NaNs cannot fold these away, and
// min/max must propagate NaN exactly as numpy does.
#if defined(DTYPE_F32)
bool is_nan(float x) { return (floatBitsToUint(x) & 0x7fffffffu) > 0x7f800000u; }
T value_from_bits(uvec2 b) { return uintBitsToFloat(b.x); }
#define POS_LIMIT uintBitsToFloat(0x7f800000u) // +inf
#define NEG_LIMIT uintBitsToFloat(0xff800000u) // -inf
#elif defined(DTYPE_F64)
bool is_nan(double x)
{
	uvec2 b = unpackDouble2x32(x);
	uint hi = b.y & 0x7fffffffu;
	return hi > 0x7ff00000u || (hi == 0x7ff00000u && b.x != 0u);
}
T value_from_bits(uvec2 b) { return packDouble2x32(b); }
#define POS_LIMIT packDouble2x32(uvec2(0u, 0x7ff00000u))
#define NEG_LIMIT packDouble2x32(uvec2(0u, 0xfff00000u))
#elif defined(DTYPE_I32)
bool is_nan(T x) { return false; }
T value_from_bits(uvec2 b) { return int(b.x); }
const T POS_LIMIT = 0x7fffffff;
const T NEG_LIMIT = int(0x80000000u);
#elif defined(DTYPE_U32)
bool is_nan(T x) { return false; }
T value_from_bits(uvec2 b) { return b.x; }
const T POS_LIMIT = 0xffffffffu;
const T NEG_LIMIT = 0u;
#elif defined(DTYPE_I64)
bool is_nan(T x) { return false; }
T value_from_bits(uvec2 b) { return int64_t(pack64(b)); }
const T POS_LIMIT = 0x7fffffffffffffffl;
const T NEG_LIMIT = int64_t(0x8000000000000000ul);
#elif defined(DTYPE_U64)
bool is_nan(T x) { return false; }
T value_from_bits(uvec2 b) { return pack64(b); }
const T POS_LIMIT = 0xfffffffffffffffful;
const T NEG_LIMIT = 0ul;
#endif

// Order keys of non-NaN values: key(a) < key(b) exactly when a < b, except that -0 orders
// below +0 (both_zero() tells equal zeros apart where that matters, in count-if). Without DenormPreserve a device may flush subnormals to
// zero in float comparisons (the H200 returned 0 for the min of 2^-149), so floats then
// compare by their bits as signed integers, negative values with their order reversed.
#if EXACT_COMPARE && defined(DTYPE_F32)
#define KEY int
KEY order_key(T a)
{
	int x = floatBitsToInt(a);
	return x ^ ((x >> 31) & 0x7fffffff);
}
bool key_less(KEY x, KEY y) { return x < y; }
bool both_zero(T a, T b) { return ((floatBitsToUint(a) | floatBitsToUint(b)) & 0x7fffffffu) == 0u; }
#elif EXACT_COMPARE && defined(DTYPE_F64)
#define KEY ivec2 // (low word, high word), the low word's bits compared unsigned
KEY order_key(T a)
{
	ivec2 x = ivec2(unpackDouble2x32(a));
	int flip = x.y >> 31;
	return ivec2(x.x ^ flip, x.y ^ (flip & 0x7fffffff));
}
bool key_less(KEY x, KEY y) { return x.y < y.y || (x.y == y.y && uint(x.x) < uint(y.x)); }
bool both_zero(T a, T b)
{
	uvec2 x = unpackDouble2x32(a), y = unpackDouble2x32(b);
	return ((x.y | y.y) & 0x7fffffffu) == 0u && (x.x | y.x) == 0u;
}
#else
#define KEY T
KEY order_key(T a) { return a; }
bool key_less(KEY x, KEY y) { return x < y; }
bool both_zero(T a, T b) { return false; } // native compares already treat -0 == +0
#endif
// The order min and max use: by keys, where -0 is below +0 (IEEE totalOrder on the numbers;
// numpy's min of -0 and +0 may give either, and they compare equal).
bool less(T a, T b) { return key_less(order_key(a), order_key(b)); }

// The operator, in one function. The left operand always holds the earlier elements, so
// scans keep the order a non-commutative operator would need. min and max select one operand
// whole (numpy's a < b ? a : b), so every bit of it survives.
T op(T a, T b)
{
	if (OP == 0)
		return a + b;
	if (OP == 1)
		return a * b;
	if (is_nan(a))
		return a;
	if (is_nan(b))
		return b;
	return OP == 2 ? (less(a, b) ? a : b) : (less(b, a) ? a : b);
}

// The operator's neutral, in one constant: op(NEUTRAL, x) == x for every x.
#define NEUTRAL (OP == 0 ? T(0) : OP == 1 ? T(1) : OP == 2 ? POS_LIMIT : NEG_LIMIT)

// Min and max by key (EXACT_COMPARE: floats on a device that may flush subnormals). Elements
// map to their order keys once (key_elem), are combined by integer min/max (key_op) and map
// back once (key_value), so every bit of the answer survives at the cost of a few integer
// operations per element, not per combination. NaN maps to the extreme key, so it wins as in
// numpy, and comes back as the quiet NaN; of two equal zeros, -0 is the smaller. Key bits
// (KEY_BITS) never pass through float arithmetic, where their pattern could be altered.
#if EXACT_COMPARE
#define KEYED (OP >= 2u)
#if defined(DTYPE_F32)
#define KEY_BITS uint
T value_of_bits(KEY_BITS a) { return uintBitsToFloat(a); }
KEY_BITS bits_of(T x) { return floatBitsToUint(x); }
KEY_BITS key_elem(T x) { return uint(is_nan(x) ? (OP == 2u ? int(0x80000000u) : 0x7fffffff) : order_key(x)); }
KEY_BITS key_op(KEY_BITS a, KEY_BITS b) { return uint(OP == 2u ? min(int(a), int(b)) : max(int(a), int(b))); }
T key_value(KEY_BITS k)
{
	int x = int(k);
	if (x == (OP == 2u ? int(0x80000000u) : 0x7fffffff))
		return uintBitsToFloat(0x7fc00000u);
	return intBitsToFloat(x ^ ((x >> 31) & 0x7fffffff));
}
#else
#define KEY_BITS uvec2
T value_of_bits(KEY_BITS a) { return packDouble2x32(a); }
KEY_BITS bits_of(T x) { return unpackDouble2x32(x); }
// Component by component: a vector selected by a specialization constant came out wrong on
// lavapipe (the same select on scalars is right).
uvec2 nan_key() { return uvec2(OP == 2u ? 0u : 0xffffffffu, OP == 2u ? 0x80000000u : 0x7fffffffu); }
KEY_BITS key_elem(T x) { return is_nan(x) ? nan_key() : uvec2(order_key(x)); }
KEY_BITS key_op(KEY_BITS a, KEY_BITS b) { return (OP == 2u) == key_less(ivec2(a), ivec2(b)) ? a : b; }
T key_value(KEY_BITS k)
{
	if (k == nan_key())
		return packDouble2x32(uvec2(0u, 0x7ff80000u));
	ivec2 x = ivec2(k);
	int flip = x.y >> 31;
	return packDouble2x32(uvec2(ivec2(x.x ^ flip, x.y ^ (flip & 0x7fffffff))));
}
#endif
#else
#define KEYED false
#endif

// The scans' view of the operator: between its loads (scan_in) and its stores (scan_out) a
// scan of keyed min or max holds keys in T's bits, so that each of the many combinations in a
// scan (the tile's tree, the look-back, each element's prefix) is one integer min/max. On the
// H200 the float comparisons cost f32 min/max 1006 us against 705 for i32 (2^28,
// reduce-then-scan), and single-pass 1733. Elsewhere these are op() itself.
#if EXACT_COMPARE
T scan_in(T x) { return KEYED ? value_of_bits(key_elem(x)) : x; }
T scan_out(T x) { return KEYED ? key_value(bits_of(x)) : x; }
T scan_op(T a, T b) { return KEYED ? value_of_bits(key_op(bits_of(a), bits_of(b))) : op(a, b); }
#define SCAN_NEUTRAL (KEYED ? scan_in(NEUTRAL) : NEUTRAL)
#else
T scan_in(T x) { return x; }
T scan_out(T x) { return x; }
T scan_op(T a, T b) { return op(a, b); }
#define SCAN_NEUTRAL NEUTRAL
#endif
VT scan_in_vec(VT x)
{
	VT y;
	for (uint c = 0u; c < VEC; c++)
		y[c] = scan_in(x[c]);
	return y;
}

