/* dispatch.c: msgpack-RPC envelope and the method table; parameters are checked by
 * dispatch_params.c. */
#include "dispatch.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch.h"
#include "conn.h"
#include "daemon.h"
#include "gpu.h"
#include "irq_cpus.h"
#include "log.h"
#include "proto_names.h"
#include "shm.h"
#include "vkr_config.h"

#define MSG_SIZE 256

/* ---- methods --------------------------------------------------------------------------- */

typedef void (*method_fn)(struct conn *conn, uint32_t msgid, const msgpack_object_array *params,
			  struct rxbuf *rx, int fd);

static void reply_simple_error(struct conn *conn, uint32_t msgid, int code, const char *msg)
{
	conn_reply_error(conn, msgid, code, "%s", msg);
}

static void method_ping(struct conn *conn, uint32_t msgid, const msgpack_object_array *params,
			struct rxbuf *rx, int fd)
{
	(void)rx;
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
			 struct rxbuf *rx, int fd)
{
	struct vkrd *d = conn->d;
	const struct gpu_info *info = gpu_get_info(d->gpu);
	msgpack_packer *pk;
	unsigned ndtypes = 0;

	(void)rx;
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
	msgpack_pack_map(pk, 15);
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
	stats_pack_str(pk, "max_buffer_bytes");
	msgpack_pack_uint64(pk, info->array_buffer_limit);
	stats_pack_str(pk, "max_array_bytes");
	msgpack_pack_uint64(pk, batch_max_array_bytes(d->gpu));
	/* Where the GPU's interrupts land ("" where unknown) and where the daemon's threads run,
	 * so that latency-bound clients can be placed off the first (OPERATIONS.md). */
	char cpus[128];
	stats_pack_str(pk, "irq_cpus");
	stats_pack_str(pk, d->irq_watch && d->irq_watch->pci_address[0]
				   ? irq_cpus_format(&d->irq_watch->avoid, cpus, sizeof(cpus))
				   : "");
	cpu_set_t daemon_cpus;
	stats_pack_str(pk, "daemon_cpus");
	stats_pack_str(pk, pthread_getaffinity_np(pthread_self(), sizeof(daemon_cpus), &daemon_cpus) == 0
				   ? irq_cpus_format(&daemon_cpus, cpus, sizeof(cpus))
				   : "");
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
			 struct rxbuf *rx, int fd)
{
	(void)rx;
	(void)fd;
	if (params->size != 0) {
		conn_reply_error(conn, msgid, VKR_WIRE_INVALID_ARGUMENT, "params: stats takes [], got %u items",
				 params->size);
		return;
	}
	conn->d->stats.loop_idle_ns = uv_metrics_idle_time(conn->d->loop);
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

/* Checks a parsed reduce or scan against the connection, the device and the limits, and
 * queues it or answers the error. */
static void compute_enqueue(struct conn *conn, uint32_t msgid, const struct dispatch_compute *cp,
			    struct rxbuf *rx, enum kern_kind kind)
{
	struct vkrd *d = conn->d;
	const struct dispatch_compute c = *cp;
	struct shm_region *src_region = NULL, *dst_region = NULL;
	struct batch_job *job;
	struct kern_job kj;
	char msg[MSG_SIZE];
	uint64_t esize, bytes, charged;
	int r;

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
		/* In place (the same bytes) is a scan's right; a partial overlap is not: tiles would
		 * read input that an earlier tile has already overwritten. Both ranges are in
		 * bounds of the region, so these sums cannot overflow. */
		if (c.src.shm && c.src.region == c.dst_region && c.src.offset != c.dst_offset &&
		    c.src.offset < c.dst_offset + bytes && c.dst_offset < c.src.offset + bytes) {
			conn_reply_error(conn, msgid, VKR_WIRE_INVALID_ARGUMENT,
					 "opts.dst.offset: %" PRIu64 " bytes overlap src (offset %" PRIu64
					 ") without being the same range; scan in place or to disjoint bytes",
					 c.dst_offset, c.src.offset);
			return;
		}
	} else if (kind == KERN_SCAN && bytes > d->limits.max_inline_bytes) {
		conn_reply_error(conn, msgid, VKR_WIRE_TOO_LARGE,
				 "src.count: a scan result of %" PRIu64 " bytes exceeds max_inline_bytes %" PRIu64
				 "; pass opts.dst", bytes, d->limits.max_inline_bytes);
		return;
	}

	/* An array larger than one buffer is held in several (batch.c), up to a limit. */
	if (bytes > batch_max_array_bytes(d->gpu)) {
		conn_reply_error(conn, msgid, VKR_WIRE_TOO_LARGE,
				 "src.count: %" PRIu64 " elements are %" PRIu64 " bytes, more than the %" PRIu64
				 " bytes one request may hold on this device (%s)", c.src.count, bytes,
				 batch_max_array_bytes(d->gpu), gpu_get_info(d->gpu)->name);
		return;
	}

	/* The engine has the last word on op, dtype and n; addresses are placeholders (aligned)
	 * until the job is placed in a batch, in parts of gpu_array_part_bytes() where the array
	 * is larger than one buffer (placement also cuts it where an imported region's pieces
	 * end, within the same limits: batch_max_array_bytes()). */
	memset(&kj, 0, sizeof(kj));
	kj.kind = kind;
	kj.op = c.op;
	kj.dtype = c.dtype;
	kj.cmp = c.cmp;
	kj.cmp_value = c.value;
	kj.exclusive = c.exclusive;
	kj.n = c.src.count;
	kj.src = kj.dst = kj.scratch = 4096;
	struct kern_part parts[KERN_MAX_PARTS];
	if (bytes > gpu_get_info(d->gpu)->array_buffer_limit) {
		uint64_t part_n = gpu_array_part_bytes(d->gpu) / esize;
		for (uint64_t first = 0; first < kj.n; first += part_n, kj.part_count++) {
			uint64_t address = 4096 + kj.part_count * 2 * gpu_array_part_bytes(d->gpu);
			parts[kj.part_count] = (struct kern_part){
				.n = kj.n - first < part_n ? kj.n - first : part_n, .src = address, .dst = address,
			};
		}
		kj.parts = parts;
	}
	r = kern_validate(d->gpu, &kj, msg, sizeof(msg));
	kj.parts = NULL; /* placeholders on this stack: the batch places the parts */
	kj.part_count = 0;
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
	/* The daemon as a whole: inline inputs, results and unsent replies of every connection
	 * share one budget. Where it is spent, a connection that stopped reading its replies
	 * long ago makes room before this request is refused. */
	bool spent = conn_memory_spent(d, charged, 0);
	while (spent && conn_close_stalled(d, conn))
		spent = conn_memory_spent(d, charged, 0);
	if (spent) {
		d->stats.busy_memory++;
		conn_reply_error(conn, msgid, VKR_WIRE_BUSY,
				 "the daemon holds %" PRIu64 " bytes for all clients (max_memory_bytes %" PRIu64
				 "); retry later", d->stats.memory_bytes, d->limits.max_memory_bytes);
		return;
	}
	job = batch_job_alloc(d->batch);
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
		/* The bin lives in the receive buffer, which the job's reference keeps alive
		 * until the bytes are copied into the staging ring. */
		job->rx = rxbuf_ref(rx);
		d->stats.inline_bytes_in += bytes;
	}
	if (dst_region) {
		job->dst_region = shm_region_ref(dst_region);
		job->dst_offset = c.dst_offset;
	}
	conn->requests_in_flight++;
	conn->bytes_in_flight += charged;
	d->stats.memory_bytes += charged;
	job->enqueue_ns = vkrd_now_ns();
	batch_enqueue(d->batch, job);
}

static void method_compute(struct conn *conn, uint32_t msgid, const msgpack_object_array *params,
			   struct rxbuf *rx, enum kern_kind kind)
{
	struct dispatch_compute c;
	char msg[MSG_SIZE];
	int r;

	if ((r = dispatch_parse_compute(kind, params, &conn->d->limits, &c, msg, sizeof(msg)))) {
		reply_simple_error(conn, msgid, r, msg);
		return;
	}
	compute_enqueue(conn, msgid, &c, rx, kind);
}

static void method_reduce(struct conn *conn, uint32_t msgid, const msgpack_object_array *params,
			  struct rxbuf *rx, int fd)
{
	(void)fd;
	method_compute(conn, msgid, params, rx, KERN_REDUCE);
}

static void method_scan(struct conn *conn, uint32_t msgid, const msgpack_object_array *params,
			struct rxbuf *rx, int fd)
{
	(void)fd;
	method_compute(conn, msgid, params, rx, KERN_SCAN);
}

static void method_register_shm(struct conn *conn, uint32_t msgid, const msgpack_object_array *params,
				struct rxbuf *rx, int fd)
{
	struct vkrd *d = conn->d;
	struct shm_region *region;
	msgpack_packer *pk;
	char msg[MSG_SIZE];
	bool writable;
	int r;

	(void)rx;
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
	/* Per user as well: many connections of one uid must not add up past its share. */
	if (access_shm_charge(&d->access, conn->peer_uid, region->size, d->limits.max_shm_bytes_per_uid)) {
		conn_reply_error(conn, msgid, VKR_WIRE_BUSY,
				 "fd: %" PRIu64 " more bytes would exceed max_shm_bytes_per_uid %" PRIu64
				 " (uid %u has %" PRIu64 " registered)", region->size, d->limits.max_shm_bytes_per_uid,
				 (unsigned)conn->peer_uid, access_shm_bytes(&d->access, conn->peer_uid));
		shm_region_unref(region);
		return;
	}
	if (shm_table_add(&conn->regions, region)) {
		access_shm_release(&d->access, conn->peer_uid, region->size);
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
				  struct rxbuf *rx, int fd)
{
	struct vkrd *d = conn->d;
	struct shm_region *region;
	char msg[MSG_SIZE];
	uint64_t id;
	int r;

	(void)rx;
	(void)fd;
	if (params->size != 1) {
		conn_reply_error(conn, msgid, VKR_WIRE_INVALID_ARGUMENT, "params: expected [region], got %u items",
				 params->size);
		return;
	}
	if ((r = dispatch_expect_uint(&params->ptr[0], "region", &id, msg, sizeof(msg)))) {
		reply_simple_error(conn, msgid, r, msg);
		return;
	}
	if (!(region = find_region(conn, msgid, id, "region")))
		return;
	d->stats.regions--;
	d->stats.region_bytes -= region->size;
	d->stats.regions_imported -= region->imported;
	access_shm_release(&d->access, conn->peer_uid, region->size);
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

/* ---- the fast path ---------------------------------------------------------------------- */

/* A fixstr at p: its bytes and length, or false. */
static bool fixstr(const unsigned char **p, const unsigned char *end, const char **str, size_t *len)
{
	if (*p >= end || (**p & 0xe0) != 0xa0)
		return false;
	*len = **p & 0x1f;
	if ((size_t)(end - *p - 1) < *len)
		return false;
	*str = (const char *)*p + 1;
	*p += 1 + *len;
	return true;
}

/* The big-endian field of width bytes after the type byte at q, if it lies before end. */
static bool field_after_type(const unsigned char *q, const unsigned char *end, unsigned width,
			     uint64_t *out)
{
	if ((size_t)(end - q - 1) < width)
		return false;
	*out = 0;
	for (unsigned i = 1; i <= width; i++)
		*out = *out << 8 | q[i];
	return true;
}

/* The len bytes of a packed msgpack prefix (a key, or a method name and what follows) at p:
 * skips them, or false. */
static bool key_at(const unsigned char **p, const unsigned char *end, const char *key, size_t len)
{
	if ((size_t)(end - *p) < len || memcmp(*p, key, len) != 0)
		return false;
	*p += len;
	return true;
}

/* A msgpack unsigned integer at p (any width), or false. */
static bool uint_at(const unsigned char **p, const unsigned char *end, uint64_t *out)
{
	const unsigned char *q = *p;
	unsigned width;

	if (q >= end)
		return false;
	if (*q <= 0x7f) {
		*out = *q;
		*p = q + 1;
		return true;
	}
	switch (*q) {
	case 0xcc: width = 1; break;
	case 0xcd: width = 2; break;
	case 0xce: width = 4; break;
	case 0xcf: width = 8; break;
	default: return false;
	}
	if (!field_after_type(q, end, width, out))
		return false;
	*p = q + 1 + width;
	return true;
}

/* {"region": R, "offset": O, "count": N} at p, in that order (as libvkreduce sends it), with
 * an offset aligned to the element size and a count within the kernels' limit. */
static bool region_src_at(const unsigned char **p, const unsigned char *end, vkr_dtype dtype,
			  struct dispatch_src *src)
{
	const unsigned char *q = *p;

	if (q >= end || *q++ != 0x83)
		return false;
	if (!key_at(&q, end, "\xa6" "region", 7) || !uint_at(&q, end, &src->region) ||
	    !key_at(&q, end, "\xa6" "offset", 7) || !uint_at(&q, end, &src->offset) ||
	    !key_at(&q, end, "\xa5" "count", 6) || !uint_at(&q, end, &src->count))
		return false;
	if (src->offset % proto_dtype_size(dtype) != 0 || src->count > KERN_MAX_ELEMENTS)
		return false;
	src->shm = true;
	*p = q;
	return true;
}

/* A complete bin at p within max_bytes whose length is a multiple of the element size. */
static bool bin_src_at(const unsigned char **p, const unsigned char *end, vkr_dtype dtype,
		       uint64_t max_bytes, struct dispatch_src *src)
{
	const unsigned char *q = *p;
	unsigned width;
	uint64_t bytes;

	if (q >= end)
		return false;
	switch (*q) {
	case 0xc4: width = 1; break;
	case 0xc5: width = 2; break;
	case 0xc6: width = 4; break;
	default: return false;
	}
	if (!field_after_type(q, end, width, &bytes))
		return false;
	q += 1 + width;
	if (bytes > max_bytes || bytes > (uint64_t)(end - q) || bytes % proto_dtype_size(dtype) != 0)
		return false;
	src->data = q;
	src->bytes = bytes;
	src->count = bytes / proto_dtype_size(dtype);
	*p = q + bytes;
	return true;
}

size_t dispatch_fast_reduce(struct conn *conn, const void *data, size_t len, struct rxbuf *rx)
{
	struct vkrd *d = conn->d;
	const unsigned char *p = data, *end = p + len;
	struct dispatch_compute c;
	uint64_t msgid;
	const char *str;
	size_t slen;
	vkr_op op;
	vkr_dtype dtype;

	/* [0, msgid, "reduce", [op, dtype, src]] exactly, src a complete bin within the limits
	 * or a region reference as libvkreduce packs it; anything else is left to the general
	 * path, which also explains errors. */
	if (len < 16 || p[0] != 0x94 || p[1] != 0x00)
		return 0;
	p += 2;
	if (!uint_at(&p, end, &msgid) || msgid > UINT32_MAX)
		return 0;
	if (!key_at(&p, end, "\xa6" "reduce" "\x93", 8))
		return 0;
	if (!fixstr(&p, end, &str, &slen) || !proto_op_parse(str, slen, &op) || op == VKR_OP_COUNT)
		return 0; /* count takes opts */
	if (!fixstr(&p, end, &str, &slen) || !proto_dtype_parse(str, slen, &dtype))
		return 0;
	memset(&c, 0, sizeof(c));
	if (!region_src_at(&p, end, dtype, &c.src) &&
	    !bin_src_at(&p, end, dtype, d->limits.max_inline_bytes, &c.src))
		return 0;
	c.kind = KERN_REDUCE;
	c.op = op;
	c.dtype = dtype;
	d->stats.requests++;
	d->stats.requests_by_method[STATS_METHOD_REDUCE]++;
	/* Only an inline input lives in the receive buffer. */
	compute_enqueue(conn, (uint32_t)msgid, &c, c.src.shm ? NULL : rx, KERN_REDUCE);
	return (size_t)(p - (const unsigned char *)data);
}

static void close_fds(int *fds, unsigned nfds)
{
	for (unsigned i = 0; i < nfds; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

int dispatch_message(struct conn *conn, const msgpack_object *msg, struct rxbuf *rx, int *fds,
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
				 dispatch_type_name(method));
		return 0;
	}
	for (m = 0; m < STATS_METHOD_COUNT_; m++)
		if (dispatch_str_is(method, methods[m].name))
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
				 dispatch_type_name(&a->ptr[3]));
		return 0;
	}
	if (nfds > 0 && !methods[m].takes_fd) {
		close_fds(fds, nfds);
		conn_reply_error(conn, msgid, VKR_WIRE_INVALID_ARGUMENT,
				 "fd: %u file descriptor(s) attached to '%s'; only register_shm takes one", nfds,
				 methods[m].name);
		return 0;
	}
	methods[m].fn(conn, msgid, &a->ptr[3].via.array, rx, nfds > 0 ? fds[0] : -1);
	/* The region (if any) holds its own mapping; the fd itself is never kept. */
	close_fds(fds, nfds);
	return 0;
}
