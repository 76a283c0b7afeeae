// scan_op.glsl: the scans' view of the operator. Between a scan's loads (scan_in) and its
// stores (scan_out), min and max of floats on a device that compares by keys (EXACT_COMPARE,
// common.glsl) hold each element's order key in T's bits, so that each of the many
// combinations in a scan (the tile's tree, the look-back, every element's prefix) is one
// integer min or max: keys are computed once per element, not twice per combination. On the
// H200 at 2^28 (session 8) this took f32 min/max from 1007 to 863 us by reduce-then-scan
// (single pass: 1733 to 895), f64 from 2557 to 1819 (int64 keys; 2593 as two 32-bit words).
// Elsewhere these are op() and NEUTRAL themselves.
//
// NaN: the keys of NaNs lie beyond key(+inf) (positive NaNs) or below key(-inf) (negative
// ones). scan_in moves those on the losing side of the op to the winning extreme, so one NaN
// wins every later combination, as in numpy; the NaN that comes out has an unspecified sign
// and payload. Key bits pass through moves, selects, shuffles (as integers), loads and
// stores only, never float arithmetic, where a pattern could be altered.

#if EXACT_COMPARE
#define SCAN_KEYED (OP >= 2u)
#if defined(DTYPE_F32)
#define SKEY int
#define SKEY_SIGN 31
#define SKEY_MIN int(0x80000000u)
#define SKEY_MAX 0x7fffffff
#define SKEY_POS_INF 0x7f800000        // order_key(+inf)
#define SKEY_NEG_INF int(0x807fffffu)  // order_key(-inf)
SKEY skey_bits(T x) { return floatBitsToInt(x); }
T skey_value(SKEY k) { return intBitsToFloat(k); }
#else
#define SKEY int64_t
#define SKEY_SIGN 63
#define SKEY_MIN int64_t(0x8000000000000000ul)
#define SKEY_MAX 0x7fffffffffffffffl
#define SKEY_POS_INF 0x7ff0000000000000l
#define SKEY_NEG_INF int64_t(0x800ffffffffffffful)
SKEY skey_bits(T x) { return int64_t(packUint2x32(unpackDouble2x32(x))); }
T skey_value(SKEY k) { return packDouble2x32(unpackUint2x32(uint64_t(k))); }
#endif
// The order key and its inverse are the same map: the sign bit is kept, so the mask is too.
SKEY skey_flip(SKEY b) { return b ^ ((b >> SKEY_SIGN) & SKEY_MAX); }
T scan_in(T x)
{
	if (!SCAN_KEYED)
		return x;
	SKEY k = skey_flip(skey_bits(x));
	if (OP == 2u)
		k = k > SKEY_POS_INF ? SKEY_MIN : k;
	else
		k = k < SKEY_NEG_INF ? SKEY_MAX : k;
	return skey_value(k);
}
T scan_out(T x) { return SCAN_KEYED ? skey_value(skey_flip(skey_bits(x))) : x; }
T scan_op(T a, T b)
{
	SKEY x = skey_bits(a), y = skey_bits(b);
	return SCAN_KEYED ? skey_value(OP == 2u ? min(x, y) : max(x, y)) : op(a, b);
}
#define SCAN_NEUTRAL (SCAN_KEYED ? scan_in(NEUTRAL) : NEUTRAL)
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
