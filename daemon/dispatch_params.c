/* dispatch_params.c: validation of every parameter of reduce, scan and register_shm; pure
 * functions over decoded msgpack objects (see dispatch.h). */
#include "dispatch.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "proto_names.h"

/* ---- small helpers for untrusted msgpack objects ---------------------------------------- */

bool dispatch_str_is(const msgpack_object *o, const char *s)
{
	size_t len = strlen(s);
	return o->type == MSGPACK_OBJECT_STR && o->via.str.size == len &&
	       memcmp(o->via.str.ptr, s, len) == 0;
}

const char *dispatch_type_name(const msgpack_object *o)
{
	switch (o->type) {
	case MSGPACK_OBJECT_NIL: return "nil";
	case MSGPACK_OBJECT_BOOLEAN: return "bool";
	case MSGPACK_OBJECT_POSITIVE_INTEGER: return "positive integer";
	case MSGPACK_OBJECT_NEGATIVE_INTEGER: return "negative integer";
	case MSGPACK_OBJECT_FLOAT32: case MSGPACK_OBJECT_FLOAT64: return "float";
	case MSGPACK_OBJECT_STR: return "string";
	case MSGPACK_OBJECT_ARRAY: return "array";
	case MSGPACK_OBJECT_MAP: return "map";
	case MSGPACK_OBJECT_BIN: return "bin";
	case MSGPACK_OBJECT_EXT: return "ext";
	}
	return "unknown";
}

/* A key of a map, rendered safely for an error message. */
static void key_text(const msgpack_object *key, char *out, size_t size)
{
	if (key->type == MSGPACK_OBJECT_STR)
		log_sanitize(key->via.str.ptr, key->via.str.size < 40 ? key->via.str.size : 40, out, size);
	else
		snprintf(out, size, "<%s>", dispatch_type_name(key));
}

int dispatch_expect_uint(const msgpack_object *o, const char *field, uint64_t *out, char *msg,
		       size_t msg_size)
{
	if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER) {
		snprintf(msg, msg_size, "%s: expected a non-negative integer, got %s", field,
			 o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER ? "a negative integer" : dispatch_type_name(o));
		return VKR_WIRE_INVALID_ARGUMENT;
	}
	*out = o->via.u64;
	return 0;
}

static int expect_bool(const msgpack_object *o, const char *field, bool *out, char *msg,
		       size_t msg_size)
{
	if (o->type != MSGPACK_OBJECT_BOOLEAN) {
		snprintf(msg, msg_size, "%s: expected a bool, got %s", field, dispatch_type_name(o));
		return VKR_WIRE_INVALID_ARGUMENT;
	}
	*out = o->via.boolean;
	return 0;
}

static int unknown_key(const char *where, const msgpack_object *key, char *msg, size_t msg_size)
{
	char k[200];

	key_text(key, k, sizeof(k));
	snprintf(msg, msg_size, "%s: unknown key '%s'", where, k);
	return VKR_WIRE_INVALID_ARGUMENT;
}

/* ---- parameter parsing (pure) ---------------------------------------------------------- */

static int parse_name(const msgpack_object *o, const char *field, char *msg, size_t msg_size)
{
	if (o->type != MSGPACK_OBJECT_STR) {
		snprintf(msg, msg_size, "%s: expected a string, got %s", field, dispatch_type_name(o));
		return VKR_WIRE_INVALID_ARGUMENT;
	}
	return 0;
}

static void bad_name(const msgpack_object *o, const char *field, const char *choices, char *msg,
		     size_t msg_size)
{
	char text[64];

	log_sanitize(o->via.str.ptr, o->via.str.size < 32 ? o->via.str.size : 32, text, sizeof(text));
	snprintf(msg, msg_size, "%s: unknown '%s' (expected %s)", field, text, choices);
}

static int parse_src(const msgpack_object *o, vkr_dtype dtype, const struct limits *limits,
		     struct dispatch_src *src, char *msg, size_t msg_size)
{
	uint64_t esize = proto_dtype_size(dtype);
	bool have_region = false, have_count = false;
	int r;

	memset(src, 0, sizeof(*src));
	if (o->type == MSGPACK_OBJECT_BIN) {
		src->data = o->via.bin.ptr;
		src->bytes = o->via.bin.size;
		if (src->bytes > limits->max_inline_bytes) {
			snprintf(msg, msg_size, "src: %" PRIu64 " bytes exceed max_inline_bytes %" PRIu64
				 " (use shared memory)", src->bytes, limits->max_inline_bytes);
			return VKR_WIRE_TOO_LARGE;
		}
		if (src->bytes % esize != 0) {
			snprintf(msg, msg_size, "src: bin length %" PRIu64 " is not a multiple of the %s element size %" PRIu64,
				 src->bytes, proto_dtype_name(dtype), esize);
			return VKR_WIRE_INVALID_ARGUMENT;
		}
		src->count = src->bytes / esize;
		return 0;
	}
	if (o->type != MSGPACK_OBJECT_MAP) {
		snprintf(msg, msg_size, "src: expected a bin or a map {region, offset, count}, got %s",
			 dispatch_type_name(o));
		return VKR_WIRE_INVALID_ARGUMENT;
	}
	src->shm = true;
	for (uint32_t i = 0; i < o->via.map.size; i++) {
		const msgpack_object *k = &o->via.map.ptr[i].key, *v = &o->via.map.ptr[i].val;
		if (dispatch_str_is(k, "region")) {
			if ((r = dispatch_expect_uint(v, "src.region", &src->region, msg, msg_size)))
				return r;
			have_region = true;
		} else if (dispatch_str_is(k, "offset")) {
			if ((r = dispatch_expect_uint(v, "src.offset", &src->offset, msg, msg_size)))
				return r;
		} else if (dispatch_str_is(k, "count")) {
			if ((r = dispatch_expect_uint(v, "src.count", &src->count, msg, msg_size)))
				return r;
			have_count = true;
		} else {
			return unknown_key("src", k, msg, msg_size);
		}
	}
	if (!have_region || !have_count) {
		snprintf(msg, msg_size, "src.%s: required", have_region ? "count" : "region");
		return VKR_WIRE_INVALID_ARGUMENT;
	}
	if (src->offset % esize != 0) {
		snprintf(msg, msg_size, "src.offset: %" PRIu64 " is not a multiple of the %s element size %" PRIu64,
			 src->offset, proto_dtype_name(dtype), esize);
		return VKR_WIRE_INVALID_ARGUMENT;
	}
	return 0;
}

int dispatch_convert_value(vkr_dtype dtype, const msgpack_object *o, vkr_value *out, char *msg,
			   size_t msg_size)
{
	bool is_float = o->type == MSGPACK_OBJECT_FLOAT32 || o->type == MSGPACK_OBJECT_FLOAT64;
	bool is_neg = o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER;
	bool is_pos = o->type == MSGPACK_OBJECT_POSITIVE_INTEGER;
	int64_t lo;
	uint64_t hi;

	memset(out, 0, sizeof(*out));
	if (!is_float && !is_neg && !is_pos) {
		snprintf(msg, msg_size, "opts.value: expected a number, got %s", dispatch_type_name(o));
		return VKR_WIRE_INVALID_ARGUMENT;
	}
	if (dtype == VKR_DTYPE_F32 || dtype == VKR_DTYPE_F64) {
		double v = is_float ? o->via.f64 : is_neg ? (double)o->via.i64 : (double)o->via.u64;
		if (dtype == VKR_DTYPE_F64) {
			out->f64 = v;
			return 0;
		}
		/* NaN and infinities compare as they do in the kernels; a finite value that
		 * would turn into an infinity would silently change the comparison. */
		if (isfinite(v) && fabs(v) > (double)FLT_MAX) {
			snprintf(msg, msg_size, "opts.value: %g is outside the range of f32", v);
			return VKR_WIRE_INVALID_ARGUMENT;
		}
		out->f32 = (float)v;
		return 0;
	}
	switch (dtype) {
	case VKR_DTYPE_I32: lo = INT32_MIN; hi = INT32_MAX; break;
	case VKR_DTYPE_U32: lo = 0; hi = UINT32_MAX; break;
	case VKR_DTYPE_I64: lo = INT64_MIN; hi = INT64_MAX; break;
	default: lo = 0; hi = UINT64_MAX; break;
	}
	if (is_float) {
		double v = o->via.f64;
		/* An integral float within range stands for that integer; anything else has no
		 * exact meaning for an integer comparison and is refused rather than rounded.
		 * 2^63 and 2^64 are exact doubles, so the bounds below are exact. */
		if (!isfinite(v) || v != floor(v) || v < (double)lo ||
		    v >= (hi == UINT64_MAX ? 18446744073709551616.0 : hi == INT64_MAX ? 9223372036854775808.0 : (double)hi + 1.0)) {
			snprintf(msg, msg_size, "opts.value: %g is not an integer representable as %s", v,
				 proto_dtype_name(dtype));
			return VKR_WIRE_INVALID_ARGUMENT;
		}
		if (v < 0) {
			is_neg = true;
			out->i64 = (int64_t)v;
		} else {
			is_pos = true;
			out->u64 = (uint64_t)v;
		}
	} else if (is_neg) {
		out->i64 = o->via.i64;
	} else {
		out->u64 = o->via.u64;
	}
	if ((is_neg && out->i64 < lo) || (is_pos && out->u64 > hi)) {
		snprintf(msg, msg_size, "opts.value: out of range for %s", proto_dtype_name(dtype));
		return VKR_WIRE_INVALID_ARGUMENT;
	}
	/* Store in the member of the dtype (the union's low bytes are little-endian shared
	 * for i64/u64, but i32/u32 must be narrowed explicitly). */
	switch (dtype) {
	case VKR_DTYPE_I32: { int32_t v = (int32_t)(is_neg ? out->i64 : (int64_t)out->u64); out->u64 = 0; out->i32 = v; break; }
	case VKR_DTYPE_U32: { uint32_t v = (uint32_t)out->u64; out->u64 = 0; out->u32 = v; break; }
	default: break;
	}
	return 0;
}

static int parse_reduce_opts(const msgpack_object *o, struct dispatch_compute *c, char *msg,
			     size_t msg_size)
{
	const msgpack_object *cmp = NULL, *value = NULL;

	if (o->type != MSGPACK_OBJECT_MAP) {
		snprintf(msg, msg_size, "opts: expected a map, got %s", dispatch_type_name(o));
		return VKR_WIRE_INVALID_ARGUMENT;
	}
	for (uint32_t i = 0; i < o->via.map.size; i++) {
		const msgpack_object *k = &o->via.map.ptr[i].key;
		if (dispatch_str_is(k, "cmp"))
			cmp = &o->via.map.ptr[i].val;
		else if (dispatch_str_is(k, "value"))
			value = &o->via.map.ptr[i].val;
		else
			return unknown_key("opts", k, msg, msg_size);
	}
	if (c->op != VKR_OP_COUNT) {
		if (cmp || value) {
			snprintf(msg, msg_size, "opts.%s: only valid for op 'count'", cmp ? "cmp" : "value");
			return VKR_WIRE_INVALID_ARGUMENT;
		}
		return 0;
	}
	if (!cmp || !value) {
		snprintf(msg, msg_size, "opts.%s: required for op 'count'", cmp ? "value" : "cmp");
		return VKR_WIRE_INVALID_ARGUMENT;
	}
	if (parse_name(cmp, "opts.cmp", msg, msg_size))
		return VKR_WIRE_INVALID_ARGUMENT;
	if (!proto_cmp_parse(cmp->via.str.ptr, cmp->via.str.size, &c->cmp)) {
		bad_name(cmp, "opts.cmp", "eq, ne, lt, le, gt, ge", msg, msg_size);
		return VKR_WIRE_INVALID_ARGUMENT;
	}
	return dispatch_convert_value(c->dtype, value, &c->value, msg, msg_size);
}

static int parse_scan_opts(const msgpack_object *o, struct dispatch_compute *c, char *msg,
			   size_t msg_size)
{
	int r;

	if (o->type != MSGPACK_OBJECT_MAP) {
		snprintf(msg, msg_size, "opts: expected a map, got %s", dispatch_type_name(o));
		return VKR_WIRE_INVALID_ARGUMENT;
	}
	for (uint32_t i = 0; i < o->via.map.size; i++) {
		const msgpack_object *k = &o->via.map.ptr[i].key, *v = &o->via.map.ptr[i].val;
		if (dispatch_str_is(k, "exclusive")) {
			if ((r = expect_bool(v, "opts.exclusive", &c->exclusive, msg, msg_size)))
				return r;
		} else if (dispatch_str_is(k, "dst")) {
			bool have_region = false;
			if (v->type != MSGPACK_OBJECT_MAP) {
				snprintf(msg, msg_size, "opts.dst: expected a map {region, offset}, got %s",
					 dispatch_type_name(v));
				return VKR_WIRE_INVALID_ARGUMENT;
			}
			c->has_dst = true;
			for (uint32_t j = 0; j < v->via.map.size; j++) {
				const msgpack_object *dk = &v->via.map.ptr[j].key, *dv = &v->via.map.ptr[j].val;
				if (dispatch_str_is(dk, "region")) {
					if ((r = dispatch_expect_uint(dv, "opts.dst.region", &c->dst_region, msg, msg_size)))
						return r;
					have_region = true;
				} else if (dispatch_str_is(dk, "offset")) {
					if ((r = dispatch_expect_uint(dv, "opts.dst.offset", &c->dst_offset, msg, msg_size)))
						return r;
				} else {
					return unknown_key("opts.dst", dk, msg, msg_size);
				}
			}
			if (!have_region) {
				snprintf(msg, msg_size, "opts.dst.region: required");
				return VKR_WIRE_INVALID_ARGUMENT;
			}
		} else {
			return unknown_key("opts", k, msg, msg_size);
		}
	}
	return 0;
}

int dispatch_parse_compute(enum kern_kind kind, const msgpack_object_array *params,
			   const struct limits *limits, struct dispatch_compute *c, char *msg,
			   size_t msg_size)
{
	int r;

	memset(c, 0, sizeof(*c));
	c->kind = kind;
	if (params->size < 3 || params->size > 4) {
		snprintf(msg, msg_size, "params: expected [op, dtype, src] or [op, dtype, src, opts], got %u items",
			 params->size);
		return VKR_WIRE_INVALID_ARGUMENT;
	}
	if (parse_name(&params->ptr[0], "op", msg, msg_size))
		return VKR_WIRE_INVALID_ARGUMENT;
	if (!proto_op_parse(params->ptr[0].via.str.ptr, params->ptr[0].via.str.size, &c->op)) {
		bad_name(&params->ptr[0], "op", kind == KERN_REDUCE ? "sum, prod, min, max, count" :
			 "sum, prod, min, max", msg, msg_size);
		return VKR_WIRE_INVALID_ARGUMENT;
	}
	if (kind == KERN_SCAN && c->op == VKR_OP_COUNT) {
		snprintf(msg, msg_size, "op: 'count' is reduce-only (scan takes sum, prod, min, max)");
		return VKR_WIRE_INVALID_ARGUMENT;
	}
	if (parse_name(&params->ptr[1], "dtype", msg, msg_size))
		return VKR_WIRE_INVALID_ARGUMENT;
	if (!proto_dtype_parse(params->ptr[1].via.str.ptr, params->ptr[1].via.str.size, &c->dtype)) {
		bad_name(&params->ptr[1], "dtype", "f32, f64, i32, u32, i64, u64", msg, msg_size);
		return VKR_WIRE_INVALID_ARGUMENT;
	}
	if ((r = parse_src(&params->ptr[2], c->dtype, limits, &c->src, msg, msg_size)))
		return r;
	if (c->src.count > KERN_MAX_ELEMENTS) {
		snprintf(msg, msg_size, "src.count: %" PRIu64 " elements exceed the maximum %" PRIu64,
			 c->src.count, (uint64_t)KERN_MAX_ELEMENTS);
		return VKR_WIRE_TOO_LARGE;
	}
	if (params->size == 4 && params->ptr[3].type != MSGPACK_OBJECT_NIL) {
		r = kind == KERN_REDUCE ? parse_reduce_opts(&params->ptr[3], c, msg, msg_size) :
					  parse_scan_opts(&params->ptr[3], c, msg, msg_size);
		if (r)
			return r;
	} else if (kind == KERN_REDUCE && c->op == VKR_OP_COUNT) {
		snprintf(msg, msg_size, "opts: op 'count' needs {\"cmp\": ..., \"value\": ...}");
		return VKR_WIRE_INVALID_ARGUMENT;
	}
	if (c->has_dst && c->dst_offset % proto_dtype_size(c->dtype) != 0) {
		snprintf(msg, msg_size, "opts.dst.offset: %" PRIu64 " is not a multiple of the %s element size %zu",
			 c->dst_offset, proto_dtype_name(c->dtype), proto_dtype_size(c->dtype));
		return VKR_WIRE_INVALID_ARGUMENT;
	}
	return 0;
}

int dispatch_parse_register(const msgpack_object_array *params, bool *writable, char *msg,
			    size_t msg_size)
{
	const msgpack_object *o;

	*writable = false;
	if (params->size == 0)
		return 0;
	if (params->size > 1) {
		snprintf(msg, msg_size, "params: expected [] or [opts], got %u items", params->size);
		return VKR_WIRE_INVALID_ARGUMENT;
	}
	o = &params->ptr[0];
	if (o->type == MSGPACK_OBJECT_NIL)
		return 0;
	if (o->type != MSGPACK_OBJECT_MAP) {
		snprintf(msg, msg_size, "opts: expected a map, got %s", dispatch_type_name(o));
		return VKR_WIRE_INVALID_ARGUMENT;
	}
	for (uint32_t i = 0; i < o->via.map.size; i++) {
		const msgpack_object *k = &o->via.map.ptr[i].key;
		int r;
		if (!dispatch_str_is(k, "writable"))
			return unknown_key("opts", k, msg, msg_size);
		if ((r = expect_bool(&o->via.map.ptr[i].val, "opts.writable", writable, msg, msg_size)))
			return r;
	}
	return 0;
}

