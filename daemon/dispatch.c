/* dispatch.c: msgpack-RPC envelope, method table and validation of every parameter. */
#include "dispatch.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch.h"
#include "conn.h"
#include "daemon.h"
#include "gpu.h"
#include "log.h"
#include "proto_names.h"
#include "shm.h"
#include "vkr_config.h"

#define MSG_SIZE 256

/* ---- small helpers for untrusted msgpack objects ---------------------------------------- */

static bool str_is(const msgpack_object *o, const char *s)
{
	size_t len = strlen(s);
	return o->type == MSGPACK_OBJECT_STR && o->via.str.size == len &&
	       memcmp(o->via.str.ptr, s, len) == 0;
}

static const char *type_name(const msgpack_object *o)
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
		snprintf(out, size, "<%s>", type_name(key));
}

static int expect_uint(const msgpack_object *o, const char *field, uint64_t *out, char *msg,
		       size_t msg_size)
{
	if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER) {
		snprintf(msg, msg_size, "%s: expected a non-negative integer, got %s", field,
			 o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER ? "a negative integer" : type_name(o));
		return VKR_WIRE_INVALID_ARGUMENT;
	}
	*out = o->via.u64;
	return 0;
}

static int expect_bool(const msgpack_object *o, const char *field, bool *out, char *msg,
		       size_t msg_size)
{
	if (o->type != MSGPACK_OBJECT_BOOLEAN) {
		snprintf(msg, msg_size, "%s: expected a bool, got %s", field, type_name(o));
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
		snprintf(msg, msg_size, "%s: expected a string, got %s", field, type_name(o));
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
			 type_name(o));
		return VKR_WIRE_INVALID_ARGUMENT;
	}
	src->shm = true;
	for (uint32_t i = 0; i < o->via.map.size; i++) {
		const msgpack_object *k = &o->via.map.ptr[i].key, *v = &o->via.map.ptr[i].val;
		if (str_is(k, "region")) {
			if ((r = expect_uint(v, "src.region", &src->region, msg, msg_size)))
				return r;
			have_region = true;
		} else if (str_is(k, "offset")) {
			if ((r = expect_uint(v, "src.offset", &src->offset, msg, msg_size)))
				return r;
		} else if (str_is(k, "count")) {
			if ((r = expect_uint(v, "src.count", &src->count, msg, msg_size)))
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
		snprintf(msg, msg_size, "opts.value: expected a number, got %s", type_name(o));
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
		snprintf(msg, msg_size, "opts: expected a map, got %s", type_name(o));
		return VKR_WIRE_INVALID_ARGUMENT;
	}
	for (uint32_t i = 0; i < o->via.map.size; i++) {
		const msgpack_object *k = &o->via.map.ptr[i].key;
		if (str_is(k, "cmp"))
			cmp = &o->via.map.ptr[i].val;
		else if (str_is(k, "value"))
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
		snprintf(msg, msg_size, "opts: expected a map, got %s", type_name(o));
		return VKR_WIRE_INVALID_ARGUMENT;
	}
	for (uint32_t i = 0; i < o->via.map.size; i++) {
		const msgpack_object *k = &o->via.map.ptr[i].key, *v = &o->via.map.ptr[i].val;
		if (str_is(k, "exclusive")) {
			if ((r = expect_bool(v, "opts.exclusive", &c->exclusive, msg, msg_size)))
				return r;
		} else if (str_is(k, "dst")) {
			bool have_region = false;
			if (v->type != MSGPACK_OBJECT_MAP) {
				snprintf(msg, msg_size, "opts.dst: expected a map {region, offset}, got %s",
					 type_name(v));
				return VKR_WIRE_INVALID_ARGUMENT;
			}
			c->has_dst = true;
			for (uint32_t j = 0; j < v->via.map.size; j++) {
				const msgpack_object *dk = &v->via.map.ptr[j].key, *dv = &v->via.map.ptr[j].val;
				if (str_is(dk, "region")) {
					if ((r = expect_uint(dv, "opts.dst.region", &c->dst_region, msg, msg_size)))
						return r;
					have_region = true;
				} else if (str_is(dk, "offset")) {
					if ((r = expect_uint(dv, "opts.dst.offset", &c->dst_offset, msg, msg_size)))
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
		snprintf(msg, msg_size, "opts: expected a map, got %s", type_name(o));
		return VKR_WIRE_INVALID_ARGUMENT;
	}
	for (uint32_t i = 0; i < o->via.map.size; i++) {
		const msgpack_object *k = &o->via.map.ptr[i].key;
		int r;
		if (!str_is(k, "writable"))
			return unknown_key("opts", k, msg, msg_size);
		if ((r = expect_bool(&o->via.map.ptr[i].val, "opts.writable", writable, msg, msg_size)))
			return r;
	}
	return 0;
}

/* ---- methods --------------------------------------------------------------------------- */

typedef void (*method_fn)(struct conn *conn, uint32_t msgid, const msgpack_object_array *params,
			  msgpack_zone **zone, int fd);

static void reply_simple_error(struct conn *conn, uint32_t msgid, int code, const char *msg)
{
	conn_reply_error(conn, msgid, code, "%s", msg);
}

static void method_ping(struct conn *conn, uint32_t msgid, const msgpack_object_array *params,
			msgpack_zone **zone, int fd)
{
	(void)zone;
	(void)fd;
	if (params->size != 0) {
		conn_reply_error(conn, msgid, VKR_WIRE_INVALID_ARGUMENT, "params: ping takes [], got %u items",
				 params->size);
		return;
	}
	stats_pack_str(conn_reply_begin(conn, msgid), "pong");
	conn_reply_end(conn);
}

static void method_hello(struct conn *conn, uint32_t msgid, const msgpack_object_array *params,
			 msgpack_zone **zone, int fd)
{
	struct vkrd *d = conn->d;
	const struct gpu_info *info = gpu_get_info(d->gpu);
	msgpack_packer *pk;
	unsigned ndtypes = 0;

	(void)zone;
	(void)fd;
	if (params->size > 1 || (params->size == 1 && params->ptr[0].type != MSGPACK_OBJECT_STR)) {
		conn_reply_error(conn, msgid, VKR_WIRE_INVALID_ARGUMENT,
				 "params: expected [client_name] with a string name");
		return;
	}
	if (params->size == 1) {
		const msgpack_object_str *s = &params->ptr[0].via.str;
		log_sanitize(s->ptr, s->size < 32 ? s->size : 32, conn->client_name, sizeof(conn->client_name));
		log_debug("conn %" PRIu64 ": hello from '%s'", conn->id, conn->client_name);
	}
	pk = conn_reply_begin(conn, msgid);
	msgpack_pack_map(pk, 6);
	stats_pack_str(pk, "version");
	stats_pack_str(pk, VKR_VERSION);
	stats_pack_str(pk, "protocol");
	msgpack_pack_uint32(pk, 1);
	stats_pack_str(pk, "device");
	msgpack_pack_map(pk, 11);
	stats_pack_str(pk, "name");
	stats_pack_str(pk, info->name);
	stats_pack_str(pk, "type");
	stats_pack_str(pk, info->type ? info->type : "other");
	stats_pack_str(pk, "vendor_id");
	msgpack_pack_uint32(pk, info->vendor_id);
	stats_pack_str(pk, "device_id");
	msgpack_pack_uint32(pk, info->device_id);
	stats_pack_str(pk, "driver");
	stats_pack_str(pk, info->driver);
	stats_pack_str(pk, "api_version");
	msgpack_pack_uint32(pk, info->api_version);
	stats_pack_str(pk, "subgroup_size");
	msgpack_pack_uint32(pk, info->subgroup_size);
	stats_pack_str(pk, "shader_float64");
	info->shader_float64 ? msgpack_pack_true(pk) : msgpack_pack_false(pk);
	stats_pack_str(pk, "shader_int64");
	info->shader_int64 ? msgpack_pack_true(pk) : msgpack_pack_false(pk);
	stats_pack_str(pk, "host_import");
	info->host_import ? msgpack_pack_true(pk) : msgpack_pack_false(pk);
	stats_pack_str(pk, "max_storage_buffer_range");
	msgpack_pack_uint64(pk, info->max_storage_buffer_range);
	/* Only the dtypes this device runs, so a client can choose before it sends. */
	stats_pack_str(pk, "ops");
	msgpack_pack_array(pk, VKR_OP_COUNT_);
	for (int op = 0; op < VKR_OP_COUNT_; op++)
		stats_pack_str(pk, proto_op_name((vkr_op)op));
	for (int t = 0; t < VKR_DTYPE_COUNT_; t++)
		ndtypes += gpu_supports_dtype(d->gpu, (vkr_dtype)t);
	stats_pack_str(pk, "dtypes");
	msgpack_pack_array(pk, ndtypes);
	for (int t = 0; t < VKR_DTYPE_COUNT_; t++)
		if (gpu_supports_dtype(d->gpu, (vkr_dtype)t))
			stats_pack_str(pk, proto_dtype_name((vkr_dtype)t));
	stats_pack_str(pk, "limits");
	stats_pack_limits(&d->limits, pk);
	conn_reply_end(conn);
}

static void method_stats(struct conn *conn, uint32_t msgid, const msgpack_object_array *params,
			 msgpack_zone **zone, int fd)
{
	(void)zone;
	(void)fd;
	if (params->size != 0) {
		conn_reply_error(conn, msgid, VKR_WIRE_INVALID_ARGUMENT, "params: stats takes [], got %u items",
				 params->size);
		return;
	}
	stats_pack(&conn->d->stats, &conn->d->limits, conn_reply_begin(conn, msgid));
	conn_reply_end(conn);
}

/* Finds a region of this connection, or answers "no such region". */
static struct shm_region *find_region(struct conn *conn, uint32_t msgid, uint64_t id, const char *field)
{
	struct shm_region *region = shm_table_find(&conn->regions, id);

	if (!region)
		conn_reply_error(conn, msgid, VKR_WIRE_NO_SUCH_REGION, "%s: no region %" PRIu64
				 " on this connection", field, id);
	return region;
}

static void reply_empty_scan(struct conn *conn, uint32_t msgid, bool has_dst)
{
	msgpack_packer *pk = conn_reply_begin(conn, msgid);

	msgpack_pack_map(pk, 1);
	if (has_dst) {
		stats_pack_str(pk, "count");
		msgpack_pack_uint64(pk, 0);
	} else {
		stats_pack_str(pk, "data");
		msgpack_pack_bin(pk, 0);
	}
	conn_reply_end(conn);
}

static void method_compute(struct conn *conn, uint32_t msgid, const msgpack_object_array *params,
			   msgpack_zone **zone, enum kern_kind kind)
{
	struct vkrd *d = conn->d;
	struct dispatch_compute c;
	struct shm_region *src_region = NULL, *dst_region = NULL;
	struct batch_job *job;
	struct kern_job kj;
	char msg[MSG_SIZE];
	uint64_t esize, bytes, charged;
	int r;

	if ((r = dispatch_parse_compute(kind, params, &d->limits, &c, msg, sizeof(msg)))) {
		reply_simple_error(conn, msgid, r, msg);
		return;
	}
	esize = proto_dtype_size(c.dtype);
	if (d->shutting_down) {
		conn_reply_error(conn, msgid, VKR_WIRE_SHUTTING_DOWN, "the daemon is shutting down");
		return;
	}
	if (gpu_is_lost(d->gpu)) {
		conn_reply_error(conn, msgid, VKR_WIRE_DEVICE_LOST, "the device was lost");
		return;
	}
	if (!gpu_supports_dtype(d->gpu, c.dtype)) {
		conn_reply_error(conn, msgid, VKR_WIRE_INVALID_ARGUMENT,
				 "dtype: the device '%s' lacks %s support (shaderFloat64/shaderInt64)",
				 gpu_get_info(d->gpu)->name, proto_dtype_name(c.dtype));
		return;
	}
	if (c.src.shm) {
		if (!(src_region = find_region(conn, msgid, c.src.region, "src.region")))
			return;
		if (shm_range_check(src_region->size, c.src.offset, c.src.count, esize, msg, sizeof(msg))) {
			conn_reply_error(conn, msgid, VKR_WIRE_INVALID_ARGUMENT, "src: %s", msg);
			return;
		}
	}
	bytes = c.src.count * esize; /* <= 2^31 * 8: no overflow */
	if (c.has_dst) {
		if (!(dst_region = find_region(conn, msgid, c.dst_region, "opts.dst.region")))
			return;
		if (!dst_region->writable) {
			conn_reply_error(conn, msgid, VKR_WIRE_PERMISSION_DENIED,
					 "opts.dst.region: region %" PRIu64 " is read-only (register it with writable: true)",
					 c.dst_region);
			return;
		}
		if (shm_range_check(dst_region->size, c.dst_offset, c.src.count, esize, msg, sizeof(msg))) {
			conn_reply_error(conn, msgid, VKR_WIRE_INVALID_ARGUMENT, "opts.dst: %s", msg);
			return;
		}
	} else if (kind == KERN_SCAN && bytes > d->limits.max_inline_bytes) {
		conn_reply_error(conn, msgid, VKR_WIRE_TOO_LARGE,
				 "src.count: a scan result of %" PRIu64 " bytes exceeds max_inline_bytes %" PRIu64
				 "; pass opts.dst", bytes, d->limits.max_inline_bytes);
		return;
	}

	/* The engine has the last word on op, dtype and n; addresses are placeholders (aligned)
	 * until the job is placed in a batch. */
	memset(&kj, 0, sizeof(kj));
	kj.kind = kind;
	kj.op = c.op;
	kj.dtype = c.dtype;
	kj.cmp = c.cmp;
	kj.cmp_value = c.value;
	kj.exclusive = c.exclusive;
	kj.n = c.src.count;
	kj.src = kj.dst = kj.scratch = 4096;
	r = kern_validate(d->gpu, &kj, msg, sizeof(msg));
	if (r) {
		conn_reply_error(conn, msgid, r == -E2BIG ? VKR_WIRE_TOO_LARGE : VKR_WIRE_INVALID_ARGUMENT,
				 "%s", msg);
		return;
	}
	if (kind == KERN_SCAN && kj.n == 0) {
		reply_empty_scan(conn, msgid, c.has_dst);
		return;
	}

	/* Backpressure: a connection may only have so much queued; a single request always
	 * fits when nothing else is in flight, so limits cannot deadlock a client. */
	charged = (c.src.shm ? 0 : bytes) + (kind == KERN_SCAN && !c.has_dst ? bytes : 0);
	if (conn->requests_in_flight >= d->limits.max_requests_per_conn ||
	    (conn->requests_in_flight > 0 && conn->bytes_in_flight + charged > d->limits.max_bytes_per_conn)) {
		conn_reply_error(conn, msgid, VKR_WIRE_BUSY,
				 "connection has %" PRIu64 " requests and %" PRIu64 " bytes in flight (limits %" PRIu64
				 ", %" PRIu64 ")", conn->requests_in_flight, conn->bytes_in_flight,
				 d->limits.max_requests_per_conn, d->limits.max_bytes_per_conn);
		return;
	}
	job = calloc(1, sizeof(*job));
	if (!job) {
		conn_reply_error(conn, msgid, VKR_WIRE_INTERNAL, "out of memory");
		return;
	}
	job->conn = conn_ref(conn);
	job->msgid = msgid;
	job->kern = kj;
	job->charged_bytes = charged;
	if (c.src.shm) {
		job->src_region = shm_region_ref(src_region);
		job->src_offset = c.src.offset;
		d->stats.shm_bytes_in += bytes;
	} else {
		job->inline_data = c.src.data;
		/* The bin lives in the unpacker's buffer, which the zone keeps alive until the
		 * bytes are copied into the staging ring. */
		job->zone = *zone;
		*zone = NULL;
		d->stats.inline_bytes_in += bytes;
	}
	if (dst_region) {
		job->dst_region = shm_region_ref(dst_region);
		job->dst_offset = c.dst_offset;
	}
	conn->requests_in_flight++;
	conn->bytes_in_flight += charged;
	job->enqueue_ns = vkrd_now_ns();
	batch_enqueue(d->batch, job);
}

static void method_reduce(struct conn *conn, uint32_t msgid, const msgpack_object_array *params,
			  msgpack_zone **zone, int fd)
{
	(void)fd;
	method_compute(conn, msgid, params, zone, KERN_REDUCE);
}

static void method_scan(struct conn *conn, uint32_t msgid, const msgpack_object_array *params,
			msgpack_zone **zone, int fd)
{
	(void)fd;
	method_compute(conn, msgid, params, zone, KERN_SCAN);
}

static void method_register_shm(struct conn *conn, uint32_t msgid, const msgpack_object_array *params,
				msgpack_zone **zone, int fd)
{
	struct vkrd *d = conn->d;
	struct shm_region *region;
	msgpack_packer *pk;
	char msg[MSG_SIZE];
	bool writable;
	int r;

	(void)zone;
	if ((r = dispatch_parse_register(params, &writable, msg, sizeof(msg)))) {
		reply_simple_error(conn, msgid, r, msg);
		return;
	}
	if (fd < 0) {
		conn_reply_error(conn, msgid, VKR_WIRE_SHM_REJECTED,
				 "fd: register_shm needs exactly one memfd attached with SCM_RIGHTS");
		return;
	}
	if (d->shutting_down) {
		conn_reply_error(conn, msgid, VKR_WIRE_SHUTTING_DOWN, "the daemon is shutting down");
		return;
	}
	if (conn->regions.count >= d->limits.max_regions_per_conn) {
		conn_reply_error(conn, msgid, VKR_WIRE_BUSY, "connection has %zu regions (max_regions_per_conn)",
				 conn->regions.count);
		return;
	}
	r = shm_region_create(d->gpu, fd, writable, d->limits.max_shm_bytes_per_conn, &region, msg, sizeof(msg));
	if (r) {
		conn_reply_error(conn, msgid, r == -E2BIG ? VKR_WIRE_TOO_LARGE : r == -ENOMEM ? VKR_WIRE_INTERNAL :
				 VKR_WIRE_SHM_REJECTED, "%s", msg);
		return;
	}
	if (conn->regions.bytes + region->size > d->limits.max_shm_bytes_per_conn) {
		conn_reply_error(conn, msgid, VKR_WIRE_BUSY,
				 "fd: %" PRIu64 " more bytes would exceed max_shm_bytes_per_conn %" PRIu64
				 " (%" PRIu64 " registered)", region->size, d->limits.max_shm_bytes_per_conn,
				 conn->regions.bytes);
		shm_region_unref(region);
		return;
	}
	if (shm_table_add(&conn->regions, region)) {
		conn_reply_error(conn, msgid, VKR_WIRE_INTERNAL, "out of memory");
		shm_region_unref(region);
		return;
	}
	d->stats.regions++;
	d->stats.regions_total++;
	d->stats.region_bytes += region->size;
	d->stats.regions_imported += region->imported;
	pk = conn_reply_begin(conn, msgid);
	msgpack_pack_map(pk, 4);
	stats_pack_str(pk, "region");
	msgpack_pack_uint32(pk, region->id);
	stats_pack_str(pk, "size");
	msgpack_pack_uint64(pk, region->size);
	stats_pack_str(pk, "writable");
	region->writable ? msgpack_pack_true(pk) : msgpack_pack_false(pk);
	stats_pack_str(pk, "imported");
	region->imported ? msgpack_pack_true(pk) : msgpack_pack_false(pk);
	conn_reply_end(conn);
}

static void method_unregister_shm(struct conn *conn, uint32_t msgid, const msgpack_object_array *params,
				  msgpack_zone **zone, int fd)
{
	struct vkrd *d = conn->d;
	struct shm_region *region;
	char msg[MSG_SIZE];
	uint64_t id;
	int r;

	(void)zone;
	(void)fd;
	if (params->size != 1) {
		conn_reply_error(conn, msgid, VKR_WIRE_INVALID_ARGUMENT, "params: expected [region], got %u items",
				 params->size);
		return;
	}
	if ((r = expect_uint(&params->ptr[0], "region", &id, msg, sizeof(msg)))) {
		reply_simple_error(conn, msgid, r, msg);
		return;
	}
	if (!(region = find_region(conn, msgid, id, "region")))
		return;
	d->stats.regions--;
	d->stats.region_bytes -= region->size;
	d->stats.regions_imported -= region->imported;
	/* Jobs that use the region keep it mapped until they complete. */
	shm_table_remove(&conn->regions, id);
	msgpack_pack_true(conn_reply_begin(conn, msgid));
	conn_reply_end(conn);
}

static const struct {
	const char *name;
	method_fn fn;
	bool takes_fd;
} methods[STATS_METHOD_COUNT_] = {
	[STATS_METHOD_PING] = { "ping", method_ping, false },
	[STATS_METHOD_HELLO] = { "hello", method_hello, false },
	[STATS_METHOD_REDUCE] = { "reduce", method_reduce, false },
	[STATS_METHOD_SCAN] = { "scan", method_scan, false },
	[STATS_METHOD_REGISTER_SHM] = { "register_shm", method_register_shm, true },
	[STATS_METHOD_UNREGISTER_SHM] = { "unregister_shm", method_unregister_shm, false },
	[STATS_METHOD_STATS] = { "stats", method_stats, false },
};

static void close_fds(int *fds, unsigned nfds)
{
	for (unsigned i = 0; i < nfds; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

int dispatch_message(struct conn *conn, const msgpack_object *msg, msgpack_zone **zone, int *fds,
		     unsigned nfds)
{
	struct vkrd *d = conn->d;
	const msgpack_object_array *a;
	const msgpack_object *method;
	char name[64];
	uint32_t msgid;
	int m;

	if (msg->type != MSGPACK_OBJECT_ARRAY || msg->via.array.size < 3) {
		close_fds(fds, nfds);
		return -EPROTO;
	}
	a = &msg->via.array;
	/* Notifications [2, method, params]: the daemon defines none, so they are ignored
	 * (msgpack-RPC gives no way to answer them). */
	if (a->size == 3 && a->ptr[0].type == MSGPACK_OBJECT_POSITIVE_INTEGER && a->ptr[0].via.u64 == 2) {
		d->stats.requests_unknown++;
		close_fds(fds, nfds);
		return 0;
	}
	if (a->size != 4 || a->ptr[0].type != MSGPACK_OBJECT_POSITIVE_INTEGER || a->ptr[0].via.u64 != 0 ||
	    a->ptr[1].type != MSGPACK_OBJECT_POSITIVE_INTEGER || a->ptr[1].via.u64 > UINT32_MAX) {
		close_fds(fds, nfds);
		return -EPROTO;
	}
	msgid = (uint32_t)a->ptr[1].via.u64;
	method = &a->ptr[2];
	d->stats.requests++;
	if (method->type != MSGPACK_OBJECT_STR) {
		close_fds(fds, nfds);
		conn_reply_error(conn, msgid, VKR_WIRE_INVALID_ARGUMENT, "method: expected a string, got %s",
				 type_name(method));
		return 0;
	}
	for (m = 0; m < STATS_METHOD_COUNT_; m++)
		if (str_is(method, methods[m].name))
			break;
	if (m == STATS_METHOD_COUNT_) {
		d->stats.requests_unknown++;
		close_fds(fds, nfds);
		log_sanitize(method->via.str.ptr, method->via.str.size < 40 ? method->via.str.size : 40, name,
			     sizeof(name));
		conn_reply_error(conn, msgid, VKR_WIRE_NO_SUCH_METHOD, "method: no method '%s'", name);
		return 0;
	}
	d->stats.requests_by_method[m]++;
	if (a->ptr[3].type != MSGPACK_OBJECT_ARRAY) {
		close_fds(fds, nfds);
		conn_reply_error(conn, msgid, VKR_WIRE_INVALID_ARGUMENT, "params: expected an array, got %s",
				 type_name(&a->ptr[3]));
		return 0;
	}
	if (nfds > 0 && !methods[m].takes_fd) {
		close_fds(fds, nfds);
		conn_reply_error(conn, msgid, VKR_WIRE_INVALID_ARGUMENT,
				 "fd: %u file descriptor(s) attached to '%s'; only register_shm takes one", nfds,
				 methods[m].name);
		return 0;
	}
	methods[m].fn(conn, msgid, &a->ptr[3].via.array, zone, nfds > 0 ? fds[0] : -1);
	/* The region (if any) holds its own mapping; the fd itself is never kept. */
	close_fds(fds, nfds);
	return 0;
}
