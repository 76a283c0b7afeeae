/*
 * kern_result.c: a reduction's result area, the host's side of reduce.comp's tails: how many
 * bytes it takes (kern_result_bytes) and the value it holds once the work is done
 * (kern_result_decode): an accumulator the GPU stored, an atomic min or max's ordered slot,
 * a float sum's limbs, a product's exponents, or the partials the host folds.
 */
#include "kern.h"

#include <math.h>
#include <string.h>

#include "kern_internal.h"

/* A float sum by limbs: its result area is a flags word, a word of the limbs reached, then
 * the limbs (reduce.comp's LIMB_SUM). The last limb a finite f32 reaches is 8 (bits up to
 * 253 + 24), an f64's 65 (2045 + 53 + 31 bits, in 32-bit pieces). */
#define LIMBS_F32 9u
#define LIMBS_F64 66u
#define LIMB_FIRST 2u

static bool limb_sum(const struct gpu *gpu, const struct kern_job *job)
{
	return (job->dtype == VKR_DTYPE_F32 || job->dtype == VKR_DTYPE_F64) && job->op == VKR_OP_SUM &&
	       kern_result_by_atomics(gpu, job);
}

/* A product by exponents: its result area is three words of the dtype's width (the sum of
 * the exponents of 5, of the powers of two, and the XOR of the signs), in 8-byte slots. */
#define EXPONENT_WORDS 3u

static bool product_exponents(const struct gpu *gpu, const struct kern_job *job)
{
	return job->op == VKR_OP_PROD && kern_result_by_atomics(gpu, job);
}

uint64_t kern_result_bytes(const struct gpu *gpu, const struct kern_job *job)
{
	if (kern_result_by_host_fold(gpu, job))
		return kern_reduce_most_groups(gpu, job) * kern_reduce_acc_bytes(job);
	if (product_exponents(gpu, job))
		return 8 * EXPONENT_WORDS;
	if (!limb_sum(gpu, job))
		return 8;
	return 8 * (LIMB_FIRST + (job->dtype == VKR_DTYPE_F32 ? LIMBS_F32 : LIMBS_F64));
}

uint64_t kern_result_max_bytes(const struct gpu *gpu)
{
	uint64_t folded = (uint64_t)gpu_get_info(gpu)->reduce_workgroups * 8;
	uint64_t limbs = 8 * (LIMB_FIRST + LIMBS_F64);
	return folded > limbs ? folded : limbs;
}

/* The bits of the quiet NaN that every decoder gives for a NaN result of f32 (size 4) or
 * f64 (size 8): positive, the first mantissa bit alone set. */
static uint64_t quiet_nan_bits(uint64_t size)
{
	return size == 4 ? 0x7fc00000u : 0x7ff8000000000000ull;
}

/* The value of an atomic min or max's slot: reduce.comp's ordered_from() undone. The slot
 * holds an "ordered" unsigned integer (complemented for min); signed integers and float keys
 * had their sign bit flipped into unsigned order. A float key is the value's bits with the
 * magnitude bits of negatives flipped (common.glsl's order_key), and NaN the key past every
 * other: it comes back as the quiet NaN, as the other paths give it. */
static vkr_value decode_ordered(const struct kern_job *job, const void *slot)
{
	uint64_t size = kern_dtype_size(job->dtype);
	uint64_t sign = (uint64_t)1 << (8 * size - 1), rest = sign - 1;
	uint64_t u;
	if (size == 4) {
		uint32_t word;
		memcpy(&word, slot, sizeof(word));
		u = word;
	} else {
		memcpy(&u, slot, sizeof(u));
	}
	bool min = job->op == VKR_OP_MIN;
	if (min)
		u = ~u & (sign | rest);
	uint64_t bits;
	if (job->dtype == VKR_DTYPE_U32 || job->dtype == VKR_DTYPE_U64) {
		bits = u;
	} else if (job->dtype == VKR_DTYPE_I32 || job->dtype == VKR_DTYPE_I64) {
		bits = u ^ sign;
	} else {
		uint64_t key = u ^ sign;
		bool nan = key == (min ? sign : rest);
		bits = nan ? quiet_nan_bits(size) : key ^ (key & sign ? rest : 0);
	}
	vkr_value v;
	memset(&v, 0, sizeof(v));
	if (size == 4)
		v.u32 = (uint32_t)bits; /* the bits of i32 and f32 too */
	else
		v.u64 = bits;
	return v;
}

/* Bit i of a magnitude held in 32-bit digits. */
static unsigned digit_bit(const uint32_t *digits, size_t count, uint64_t i)
{
	return i / 32 < count ? (digits[i / 32] >> (i % 32)) & 1u : 0u;
}

/* The value of a float sum's limbs (reduce.comp's LIMB_SUM): the exact sum of the partials,
 * rounded once to nearest even. The limbs are signed 64-bit sums of 32-bit pieces, limb k
 * worth 2^(32k) units of the smallest subnormal: they are added with their carries into a
 * two's complement integer of 32-bit digits, whose magnitude M and sign give the value
 * M * 2^-149 (f32) or M * 2^-1074 (f64). Below 2^precision units the value's bits are M
 * itself (subnormals, then the first binade, whose exponent field is 1 where M's bit
 * precision - 1 is); above, M is rounded to precision bits at some shift, and the bits are
 * (shift << (precision - 1)) + the rounded mantissa, hidden bit included. Only the limbs
 * that word 1 says a partial reached are read: on a GPU the area is mapped device memory,
 * whose every read crosses the bus. */
static vkr_value decode_limbs(const struct kern_job *job, const void *area)
{
	bool f32 = job->dtype == VKR_DTYPE_F32;
	unsigned limbs = f32 ? LIMBS_F32 : LIMBS_F64, reach = f32 ? 2 : 3; /* limbs per partial */
	unsigned precision = f32 ? 24 : 53;
	uint64_t exp_all = f32 ? 0xff : 0x7ff, sign_bit = f32 ? 1ull << 31 : 1ull << 63;
	const unsigned char *words = area;
	uint64_t flags, reached;
	memcpy(&flags, words, 8);
	memcpy(&reached, words + 8, 8);
	uint64_t bits;
	bool negative = false;
	if ((flags & 4) || (flags & 3) == 3) {
		/* a NaN partial, or infinities of both signs */
		bits = quiet_nan_bits(kern_dtype_size(job->dtype));
	} else if (flags & 3) {
		negative = flags & 2;
		bits = exp_all << (precision - 1);
	} else {
		/* Limb k holds pieces of the partials whose first limb is k, k - 1 (and k - 2). */
		int64_t limb[LIMBS_F64] = { 0 };
		for (unsigned k = 0; k < limbs; k++) {
			bool read = false;
			for (unsigned back = 0; back < reach && back <= k; back++)
				read = read || (k - back < 64 && (reached >> (k - back)) & 1);
			if (read)
				memcpy(&limb[k], words + 8 * (LIMB_FIRST + k), 8);
		}
		/* The carries: each limb's high half (arithmetic shifts: a negative limb borrows)
		 * and the carry out of the low halves' sum go up. Every |limb| < 2^63 (at most
		 * 2^31 pieces of 32 bits), so none of this overflows. Two digits past the limbs hold
		 * the last carry, sign included. */
		uint32_t digit[LIMBS_F64 + 2];
		int64_t carry = 0;
		for (unsigned k = 0; k < limbs; k++) {
			uint64_t low = (uint64_t)(uint32_t)limb[k] + (uint32_t)carry;
			digit[k] = (uint32_t)low;
			carry = (limb[k] >> 32) + (carry >> 32) + (int64_t)(low >> 32);
		}
		digit[limbs] = (uint32_t)carry;
		digit[limbs + 1] = (uint32_t)((uint64_t)carry >> 32);
		size_t count = limbs + 2;
		negative = carry < 0;
		if (negative) { /* the magnitude: invert and add one */
			uint64_t c = 1;
			for (size_t k = 0; k < count; k++) {
				uint64_t t = (uint64_t)(uint32_t)~digit[k] + c;
				digit[k] = (uint32_t)t;
				c = t >> 32;
			}
		}
		int64_t top = -1;
		for (size_t k = count; k-- > 0 && top < 0;)
			if (digit[k])
				top = (int64_t)(32 * k) + 31 - __builtin_clz(digit[k]);
		if (top < 0) {
			/* An exact zero: +0 if any partial was +0 or non-zero (x + -x is +0), else -0;
			 * the partials start from +0, so -0 does not arise from data. */
			negative = !(flags & 8) && !reached;
			bits = 0;
		} else if (top < (int64_t)precision) {
			bits = digit[0] | (uint64_t)digit[1] << 32; /* M < 2^53: no digit above */
		} else {
			uint64_t shift = (uint64_t)top - (precision - 1), q = 0;
			for (unsigned i = 0; i < precision; i++)
				q |= (uint64_t)digit_bit(digit, count, shift + i) << i;
			bool half = digit_bit(digit, count, shift - 1), sticky = false;
			for (uint64_t i = 0; i + 1 < shift && !sticky; i++)
				sticky = digit_bit(digit, count, i);
			if (half && (sticky || (q & 1))) {
				q++;
				if (q >> precision) {
					q >>= 1;
					shift++;
				}
			}
			/* The exponent field is shift + 1: at the all-ones field the sum overflowed. */
			bits = shift + 1 >= exp_all ? exp_all << (precision - 1) : (shift << (precision - 1)) + q;
		}
	}
	if (negative)
		bits |= sign_bit;
	vkr_value v;
	memset(&v, 0, sizeof(v));
	if (f32)
		v.u32 = (uint32_t)bits;
	else
		v.u64 = bits;
	return v;
}

/* The value of a product by exponents (reduce.comp's ATOMIC_PROD): (+-1) * 5^e << t modulo
 * 2^k, or 0 where the powers of two add up to k or more. */
static vkr_value decode_exponents(const struct kern_job *job, const void *area)
{
	bool wide = kern_dtype_size(job->dtype) == 8;
	unsigned bits = wide ? 64 : 32;
	uint64_t mask = wide ? UINT64_MAX : UINT32_MAX;
	uint64_t word[EXPONENT_WORDS];
	const unsigned char *at = area;
	for (unsigned k = 0; k < EXPONENT_WORDS; k++) {
		if (wide) {
			memcpy(&word[k], at + 8 * k, 8);
		} else {
			uint32_t w;
			memcpy(&w, at + 8 * k, 4);
			word[k] = w;
		}
	}
	uint64_t e = word[0] & (mask >> 2), twos = word[1], product = 0;
	if (twos < bits) {
		uint64_t power = 1, base = 5; /* 5^e by squaring, modulo 2^64 then masked */
		for (; e; e >>= 1, base *= base)
			if (e & 1)
				power *= base;
		product = (word[2] & 1 ? 0 - power : power) << twos & mask;
	}
	vkr_value v;
	memset(&v, 0, sizeof(v));
	if (wide)
		v.u64 = product;
	else
		v.u32 = (uint32_t)product;
	return v;
}

/* Partials folded on the host (reduce.comp's HOST_FOLD) in the order and tree of the GPU's
 * fold of them (pass 1, or pass 3's last workgroup): invocation i of one workgroup folds the
 * partials i, i + WG_SIZE, ... in turn, the xor butterfly of reduce.comp's workgroup_reduce
 * combines each subgroup's lanes (lane 0 ends with ((l0 l1) (l2 l3)) ..., pairwise, as every
 * operator here is commutative), and invocation 0 folds the subgroups' values in order. The
 * same bits as on the GPU, but where a partial or a step is subnormal and the device flushes
 * it (the host keeps subnormals), and for a NaN, which comes back as the quiet NaN. */
#define FOLD_ON_HOST(T, OP, NEUTRAL, partials, groups, subgroup, out)                               \
	do {                                                                                     \
		T lane_[WG_SIZE];                                                                \
		for (uint32_t i_ = 0; i_ < WG_SIZE; i_++) {                                      \
			T a_ = (NEUTRAL);                                                        \
			for (uint32_t g_ = i_; g_ < (groups); g_ += WG_SIZE) {                   \
				T p_;                                                            \
				memcpy(&p_, (const unsigned char *)(partials) + g_ * sizeof(T), sizeof(T)); \
				a_ = OP(a_, p_);                                                 \
			}                                                                        \
			lane_[i_] = a_;                                                          \
		}                                                                                \
		for (uint32_t m_ = 1; m_ < (subgroup); m_ <<= 1)                                 \
			for (uint32_t i_ = 0; i_ < WG_SIZE; i_ += 2 * m_)                        \
				lane_[i_] = OP(lane_[i_], lane_[i_ + m_]);                       \
		T r_ = lane_[0];                                                                 \
		for (uint32_t i_ = (subgroup); i_ < WG_SIZE; i_ += (subgroup))                   \
			r_ = OP(r_, lane_[i_]);                                                  \
		memcpy(&(out), &r_, sizeof(T));                                                  \
	} while (0)
/* The job's operator, sum or product (the branch goes the same way on every step). */
#define FOLD_OP(a, b) (sum ? (a) + (b) : (a) * (b))

static vkr_value fold_on_host(const struct gpu *gpu, const struct kern_job *job, const void *partials)
{
	uint32_t groups = kern_reduce_groups(gpu, job);
	uint32_t subgroup = gpu_get_info(gpu)->subgroup_size; /* 4 to 256 where the subgroup tree runs */
	bool sum = job->op == VKR_OP_SUM;
	vkr_value v;
	memset(&v, 0, sizeof(v));
	switch (job->dtype) {
	case VKR_DTYPE_F32:
		FOLD_ON_HOST(float, FOLD_OP, sum ? 0.0f : 1.0f, partials, groups, subgroup, v.u32);
		break;
	case VKR_DTYPE_F64:
		FOLD_ON_HOST(double, FOLD_OP, sum ? 0.0 : 1.0, partials, groups, subgroup, v.u64);
		break;
	case VKR_DTYPE_I32:
	case VKR_DTYPE_U32: /* wrapping: the same bits signed or not */
		FOLD_ON_HOST(uint32_t, FOLD_OP, sum ? 0u : 1u, partials, groups, subgroup, v.u32);
		break;
	default:
		FOLD_ON_HOST(uint64_t, FOLD_OP, sum ? 0u : 1u, partials, groups, subgroup, v.u64);
		break;
	}
	/* A NaN (a NaN partial, or infinities of both signs) comes back as the quiet NaN, as the
	 * other paths give it: the x86 host's own NaN has its sign bit set. */
	if (job->dtype == VKR_DTYPE_F32 && isnan(v.f32))
		v.u32 = (uint32_t)quiet_nan_bits(4);
	else if (job->dtype == VKR_DTYPE_F64 && isnan(v.f64))
		v.u64 = quiet_nan_bits(8);
	return v;
}

vkr_value kern_result_decode(const struct gpu *gpu, const struct kern_job *job, const void *slot)
{
	if (kern_result_by_host_fold(gpu, job))
		return fold_on_host(gpu, job, slot);
	if (kern_result_by_atomics(gpu, job) && (job->op == VKR_OP_MIN || job->op == VKR_OP_MAX))
		return decode_ordered(job, slot);
	if (limb_sum(gpu, job))
		return decode_limbs(job, slot);
	if (product_exponents(gpu, job))
		return decode_exponents(job, slot);
	vkr_value v;
	memset(&v, 0, sizeof(v));
	if (job->kind == KERN_REDUCE && job->op == VKR_OP_COUNT) {
		uint32_t c;
		memcpy(&c, slot, sizeof(c));
		v.u64 = c;
	} else {
		memcpy(&v, slot, kern_dtype_size(job->dtype));
	}
	return v;
}
