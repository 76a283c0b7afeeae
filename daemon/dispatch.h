/*
 * dispatch.h: the method table. Checks every field of a decoded request before use, turns
 * reduce and scan into batch jobs, and answers the rest at once. Error messages name the bad
 * field; error codes come from VKR_ERROR_MAP. The dispatch_parse_* functions are pure (no
 * connection, no device) so that tests can feed them hostile input directly.
 * Loop thread only.
 */
#ifndef VKRD_DISPATCH_H
#define VKRD_DISPATCH_H

#include <msgpack.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kern.h"
#include "daemon_limits.h"
#include "vkreduce_types.h"

struct conn;

struct rxbuf;

/* Handles one decoded message whose strings and bins point into rx. Takes ownership of fds
 * (closes them or hands them on); a queued job takes a reference on rx to keep its inline
 * data alive until it is copied into the upload ring. Returns 0, or -EPROTO when the message
 * is not a msgpack-RPC request or notification and the connection must close. */
int dispatch_message(struct conn *conn, const msgpack_object *msg, struct rxbuf *rx,
		     int *fds, unsigned nfds);

/* The fast path for the most common request, an inline reduce without opts: when data
 * (len bytes, no fd pending) starts with one whole such request in its plainest encoding,
 * handles it as dispatch_message would and returns its size; otherwise returns 0 and the
 * caller takes the general path (framing, msgpack-c, dispatch_message). */
size_t dispatch_fast_reduce(struct conn *conn, const void *data, size_t len, struct rxbuf *rx);

/* Where a reduce or scan reads its input. */
struct dispatch_src {
	bool shm;              /* false: inline bin */
	const void *data;      /* inline: borrowed bytes */
	uint64_t bytes;        /* inline: length of data */
	uint64_t region;       /* shm: region id */
	uint64_t offset;       /* shm: byte offset */
	uint64_t count;        /* elements (inline: bytes / element size) */
};

struct dispatch_compute {
	enum kern_kind kind;
	vkr_op op;
	vkr_dtype dtype;
	vkr_cmp cmp;           /* count only */
	vkr_value value;       /* count only, in the member of dtype */
	bool exclusive;        /* scan only */
	struct dispatch_src src;
	bool has_dst;          /* scan only: write into a region */
	uint64_t dst_region;
	uint64_t dst_offset;
};

/* Parses the params of reduce (kind KERN_REDUCE) or scan (KERN_SCAN): 0 or a wire error
 * code with msg naming the bad field. Checks shapes, names, bin length against the element
 * size and limits->max_inline_bytes, and counts against KERN_MAX_ELEMENTS; region bounds
 * are checked later against the region. */
int dispatch_parse_compute(enum kern_kind kind, const msgpack_object_array *params,
			   const struct limits *limits, struct dispatch_compute *out, char *msg,
			   size_t msg_size);

/* Converts a msgpack number into dtype for count-if: floats accept any integer or float
 * (rounded to nearest; finite values beyond the f32 range are refused); integer dtypes accept
 * integers in range and floats with an integral value in range. 0 or VKR_WIRE_INVALID_ARGUMENT. */
int dispatch_convert_value(vkr_dtype dtype, const msgpack_object *obj, vkr_value *out, char *msg,
			   size_t msg_size);

/* Parses register_shm params ([] or [{"writable": bool}]): 0 or a wire error code. */
int dispatch_parse_register(const msgpack_object_array *params, bool *writable, char *msg,
			    size_t msg_size);

/* Helpers shared by dispatch.c and dispatch_params.c for untrusted msgpack objects. */
bool dispatch_str_is(const msgpack_object *o, const char *s);
const char *dispatch_type_name(const msgpack_object *o);
/* 0, or VKR_WIRE_INVALID_ARGUMENT with msg naming field, unless o is a non-negative integer. */
int dispatch_expect_uint(const msgpack_object *o, const char *field, uint64_t *out, char *msg,
			 size_t msg_size);

#endif /* VKRD_DISPATCH_H */
