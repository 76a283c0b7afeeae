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

// f64 too: scans of f64 min and max hold int64 keys (scan_op.glsl); f32 sums by limbs add
// 64-bit limbs (reduce.comp's LIMB_SUM).
#if defined(DTYPE_I64) || defined(DTYPE_U64) || defined(DTYPE_F64) || defined(LIMB_SUM)
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
// One 64-bit integer, so that a compare is the compiler's own 64-bit compare. As two words
// compared high word first, f64 min and max took 0.35 us more at 2^20, 0.5 to 0.7 at 2^22
// and about 1 at 2^24 and 2^26 on an H100, count-if 0.5 more at 2^20 to 2^22 (session 43,
// run S43-1, where a cheaper NaN probe gained nothing more).
#define KEY int64_t
KEY order_key(T a)
{
	int64_t x = int64_t(packUint2x32(unpackDouble2x32(a)));
	return x ^ ((x >> 63) & 0x7fffffffffffffffl);
}
bool key_less(KEY x, KEY y) { return x < y; }
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

// The operator's neutral, in one constant: op(NEUTRAL, x) == x for every x, but for the sign of
// a float sum's -0.0 (+0.0 + -0.0 is +0.0; README, "Signed zeros").
#define NEUTRAL (OP == 0 ? T(0) : OP == 1 ? T(1) : OP == 2 ? POS_LIMIT : NEG_LIMIT)

