/*
 * vkreduce.h: the client library of vkreduce (libvkreduce).
 *
 * libvkreduce talks to the vkreduced daemon over its Unix socket (msgpack-RPC) and asks it for
 * reductions (sum, prod, min, max, count-if) and prefix scans of numeric arrays. Arrays travel
 * either inline, copied into the request, or through shared memory: a sealed memfd that the
 * daemon maps once and then reads (and, for scans, writes) directly.
 *
 * Errors. Every function that can fail returns an int: 0 (or a non-negative count where said)
 * on success, else a negative code. Codes the daemon sends are VKR_E* (vkreduce_types.h, e.g.
 * VKR_EINVALID_ARGUMENT); failures of the system are negative errno values (-ECONNREFUSED,
 * -ENOMEM, ...). The library adds a few errno values with fixed meanings:
 *   -EPROTO       the daemon sent something that is not a valid reply; the connection is
 *                 closed and every request in flight fails with -EPROTO.
 *   -ECONNRESET   the daemon closed the connection; requests in flight fail with it (those
 *                 it answered before it closed get their answers first).
 *   -ETIMEDOUT    a blocking call waited longer than vkr_set_timeout() allows.
 *   -EBUSY        a blocking call, vkr_flush or a vkr_dispatch that may wait was made from
 *                 inside a callback.
 * vkr_strerror() turns any of them into text; vkr_last_error_message() gives the daemon's own
 * message for the last wire error, which names the bad field.
 *
 * Thread-safety. A vkr_client is not thread-safe: use it from one thread at a time (one
 * connection per thread is the intended pattern, and connections are cheap). Different
 * clients may be used concurrently from different threads. vkr_shm objects may be shared
 * between threads once created, but vkr_shm_seal and vkr_shm_free must not race with other
 * uses of the same object. vkr_strerror is thread-safe.
 *
 * Callbacks. Asynchronous calls deliver their result through a callback, which the library
 * calls only from inside vkr_dispatch, vkr_flush, or a blocking call on the same client (a
 * blocking call keeps earlier asynchronous requests moving while it waits), never from
 * inside an asynchronous call or vkr_cork, even when a send there fails. A callback may start
 * new asynchronous requests and call vkr_dispatch with timeout 0; it must not call blocking
 * functions, vkr_flush or vkr_dispatch with another timeout on its client (they return
 * -EBUSY), nor vkr_close (it then does nothing). This holds in callbacks run by such a
 * nested vkr_dispatch too, and in the outer callback after it returns.
 *
 * The library requires a little-endian host: arrays go on the wire as the bytes in memory.
 */
#ifndef VKREDUCE_H
#define VKREDUCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vkreduce_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An open connection to the daemon. */
typedef struct vkr_client vkr_client;

/* A region id, as register_shm hands it out. It is scoped to the connection that registered
 * it and dies with it. */
typedef uint64_t vkr_region;

/* ---- connection ---------------------------------------------------------------------------- */

/*
 * Connects to the daemon at path, or at the default path when path is NULL: $VKREDUCE_SOCKET,
 * else /run/vkreduce/vkreduce.sock for root, else $XDG_RUNTIME_DIR/vkreduce.sock.
 * On success *out is a new client (owned by the caller, freed by vkr_close).
 * Errors: -ENOENT (no socket there, or no default applies), -ECONNREFUSED (no daemon
 * listening), -ENAMETOOLONG, -EACCES, -ENOMEM, other -errno from socket/connect.
 */
int vkr_connect(const char *path, vkr_client **out);

/*
 * Closes the connection and frees the client. Requests still in flight are dropped without
 * calling their callbacks; regions registered on this connection die with it (the daemon
 * finishes any work that still uses them first). Accepts NULL. Returns nothing: closing
 * cannot fail in a way the caller could act on. Must not be called from a callback (it then
 * does nothing; call it after vkr_dispatch returns).
 */
void vkr_close(vkr_client *client);

/* Text for any code this library returns (VKR_E*, -errno, or 0). Never NULL. */
const char *vkr_strerror(int err);

/*
 * The daemon's message for the most recent wire error on this client (e.g. "params[2]: bin
 * length 10 is not a multiple of 4"), or the library's own reason where it refused a request
 * or a reply itself (VKR_ETOO_LARGE for an inline array of 4 GiB, -EPROTO), or "" if there was
 * none. The string is borrowed and valid until the next call on the client.
 */
const char *vkr_last_error_message(const vkr_client *client);

/*
 * Upper bound, in milliseconds, that blocking calls wait for their reply; -1 (the default)
 * waits forever. When a call times out its request is abandoned: a late reply is read and
 * discarded and never touches the caller's buffers.
 */
void vkr_set_timeout(vkr_client *client, int timeout_ms);

/* ---- blocking calls ------------------------------------------------------------------------ */

/*
 * A blocking call first polls the socket without sleeping, for VKR_CLIENT_SPIN_US
 * microseconds (read by vkr_connect; default 50, 0 turns it off), then sleeps in poll().
 * Being woken by the scheduler can cost as much as the GPU work of a small request.
 */

/* Round trip to the daemon. Returns 0 when it answered "pong". */
int vkr_ping(vkr_client *client);

/*
 * A key/value list, the decoded form of the maps that hello and stats return. Nested maps are
 * flattened with dotted keys ("device.name", "limits.max_message_bytes"); arrays of strings
 * become one comma-separated string ("sum,prod,min,max,count"); other arrays are flattened
 * with their index as key ("jobs_per_batch.3").
 */
typedef enum vkr_kv_type {
	VKR_KV_NIL,
	VKR_KV_BOOL,
	VKR_KV_UINT,
	VKR_KV_INT, /* negative integers only; non-negative ones are VKR_KV_UINT */
	VKR_KV_FLOAT,
	VKR_KV_STR,
} vkr_kv_type;

typedef struct vkr_kv {
	const char *key; /* owned by the list */
	vkr_kv_type type;
	union {
		bool b;
		uint64_t u;
		int64_t i;
		double f;
		const char *s; /* owned by the list, NUL-terminated */
	} v;
} vkr_kv;

typedef struct vkr_kvlist {
	vkr_kv *items; /* owned, in the daemon's order */
	size_t count;
} vkr_kvlist;

/* Frees a list from vkr_hello or vkr_stats. Accepts NULL. */
void vkr_kvlist_free(vkr_kvlist *list);
/* The entry with this key, or NULL. The pointer is borrowed from the list. */
const vkr_kv *vkr_kvlist_find(const vkr_kvlist *list, const char *key);
/* The entry as a number (uint, int, float or bool), or def when absent or not numeric. */
double vkr_kvlist_number(const vkr_kvlist *list, const char *key, double def);

/*
 * hello: introduces the client (client_name may be NULL: "libvkreduce") and returns what the
 * daemon says about itself: version, device (name, type, subgroup_size, ...), ops, dtypes,
 * limits. *out is owned by the caller (vkr_kvlist_free).
 */
int vkr_hello(vkr_client *client, const char *client_name, vkr_kvlist **out);

/* stats: the daemon's counters (requests, errors, batches, ...). *out as for vkr_hello. */
int vkr_stats(vkr_client *client, vkr_kvlist **out);

/*
 * Options of reduce. Only op VKR_OP_COUNT uses them: it counts elements x with (x cmp value),
 * where value is read through the member of the request's dtype (value.f32 for f32, ...).
 * count requires opts (-EINVAL without them); other ops ignore opts.
 */
typedef struct vkr_reduce_opts {
	vkr_cmp cmp;
	vkr_value value;
} vkr_reduce_opts;

/*
 * Reduces n elements of dtype at data (borrowed; copied into the request) with op.
 * *out receives the result in the member of dtype (u64 for count). Integer sum and prod wrap
 * modulo 2^bits of the dtype; min/max propagate NaN; empty sum/prod/count are 0/1/0, and empty
 * min/max fail with VKR_EINVALID_ARGUMENT.
 * Errors: -EINVAL (bad op/dtype, data NULL with n > 0), VKR_E* from the daemon
 * (VKR_ETOO_LARGE when the request exceeds its limits: use shared memory), connection errors.
 * The library itself returns VKR_ETOO_LARGE for arrays of 4 GiB or more, which no inline
 * request can carry (msgpack bins are at most 4 GiB - 1).
 */
int vkr_reduce(vkr_client *client, vkr_op op, vkr_dtype dtype, const void *data, size_t n,
               const vkr_reduce_opts *opts, vkr_value *out);

/*
 * Prefix scan of n elements of dtype at data into out (n elements, may equal data). op is
 * sum, prod, min or max; inclusive unless exclusive (then out[0] is the neutral element:
 * 0, 1, +inf/-inf or the integer max/min). Errors as vkr_reduce.
 */
int vkr_scan(vkr_client *client, vkr_op op, vkr_dtype dtype, const void *data, size_t n,
             bool exclusive, void *out);

/* ---- shared memory ------------------------------------------------------------------------- */

/* A memfd-backed buffer mapped read-write into this process. */
typedef struct vkr_shm vkr_shm;

/*
 * Creates a shared buffer of size bytes (memfd_create with MFD_ALLOW_SEALING | MFD_CLOEXEC),
 * zero-filled and mapped read-write. *out is owned by the caller (vkr_shm_free).
 * Errors: -EINVAL (size 0), -ENOMEM, -EMFILE, other -errno.
 */
int vkr_shm_create(size_t size, vkr_shm **out);
/* The mapping (size bytes, page aligned) and its size. Borrowed; valid until vkr_shm_free. */
void *vkr_shm_data(const vkr_shm *shm);
size_t vkr_shm_size(const vkr_shm *shm);
/* The memfd, for callers that pass it on themselves. Borrowed. */
int vkr_shm_fd(const vkr_shm *shm);
/*
 * Seals the size (F_SEAL_SHRINK | F_SEAL_GROW), which the daemon requires before it maps the
 * buffer: it must never find its mapping cut short. Idempotent. Contents stay writable.
 */
int vkr_shm_seal(vkr_shm *shm);
/* Unmaps and closes. Regions registered from it stay valid in the daemon (it holds its own
 * mapping) until unregistered or the connection closes. Accepts NULL. */
void vkr_shm_free(vkr_shm *shm);

/*
 * Registers shm with the daemon (sealing it first if needed) and returns its region id in
 * *region. writable lets scans write their results into it. The buffer may be registered on
 * several connections. Errors: VKR_ESHM_REJECTED, VKR_ETOO_LARGE, VKR_EPERMISSION_DENIED,
 * VKR_EBUSY, connection errors.
 *
 * Quotas. The daemon limits regions per connection (max_regions_per_conn) and registered
 * bytes per connection and per user (max_shm_bytes_per_conn, max_shm_bytes_per_uid); a
 * registration over them fails with VKR_EBUSY (a single region over the per-connection bytes:
 * VKR_ETOO_LARGE). A connection that pipelines small reduce inputs registers one region of
 * its own for its arena (see the asynchronous calls): it takes one of the connection's regions
 * and 4 MiB (VKR_CLIENT_ARENA_KIB) of both byte quotas, for as long as the connection lives.
 * Set VKR_CLIENT_ARENA_KIB=0 before vkr_connect where that share is needed.
 */
int vkr_shm_register(vkr_client *client, vkr_shm *shm, bool writable, vkr_region *region);
/* Drops a region; work already queued on it still completes. Errors: VKR_ENO_SUCH_REGION. */
int vkr_shm_unregister(vkr_client *client, vkr_region region);

/*
 * Reduce of count elements of dtype at byte offset of region. As vkr_reduce otherwise.
 * Errors also VKR_ENO_SUCH_REGION, VKR_EINVALID_ARGUMENT (range outside the region).
 */
int vkr_reduce_shm(vkr_client *client, vkr_op op, vkr_dtype dtype, vkr_region region,
                   uint64_t offset, uint64_t count, const vkr_reduce_opts *opts, vkr_value *out);

/*
 * Scan of count elements at src_offset of src_region into dst_region (registered writable)
 * at dst_offset. The two may be the same region. As vkr_scan otherwise.
 */
int vkr_scan_shm(vkr_client *client, vkr_op op, vkr_dtype dtype, vkr_region src_region,
                 uint64_t src_offset, uint64_t count, bool exclusive, vkr_region dst_region,
                 uint64_t dst_offset);

/* ---- asynchronous calls -------------------------------------------------------------------- */

/*
 * Result callbacks. status is 0 or a negative code as for the blocking calls. For reduce,
 * value is valid only when status is 0 (and only during the call). For scan, the output
 * buffer given at submission is filled before the callback runs (inline form) or the daemon
 * has written the destination region (shm form); count is the number of elements written.
 * userdata is what the caller passed.
 */
typedef void (*vkr_reduce_cb)(vkr_client *client, int status, const vkr_value *value,
                              void *userdata);
typedef void (*vkr_scan_cb)(vkr_client *client, int status, uint64_t count, void *userdata);

/*
 * Queue a request. The input is copied into the client's send buffer before the call
 * returns, so data may be reused at once; for vkr_scan_async the out buffer must stay valid
 * until the callback has run (or vkr_close). The request is sent as far as the socket takes
 * it without blocking; the rest goes out in vkr_flush, vkr_dispatch or a later call. If that
 * send fails (the daemon closed), the call still returns 0: the callback reports the failure,
 * or the daemon's answer where it sent one before closing, from the next vkr_dispatch,
 * vkr_flush or blocking call.
 * Reduce inputs of 1 to 16 KiB sent while other calls are in flight go through the
 * connection's shared-memory arena once the connection has sent eight of them inline (the
 * daemon then reads them in place; see VKR_CLIENT_ARENA_KIB in the README). A later
 * vkr_dispatch or vkr_flush registers the arena without waiting for the answer; no call
 * blocks for it. The arena counts against the daemon's shared-memory quotas like any region
 * (one region, 4 MiB by default; see vkr_shm_register). Do not use a client in a forked
 * child: the arena is shared memory.
 * Any number of requests may be in flight; replies may arrive in any order.
 * Returns 0 or a negative code (then cb is never called).
 */
int vkr_reduce_async(vkr_client *client, vkr_op op, vkr_dtype dtype, const void *data, size_t n,
                     const vkr_reduce_opts *opts, vkr_reduce_cb cb, void *userdata);
int vkr_scan_async(vkr_client *client, vkr_op op, vkr_dtype dtype, const void *data, size_t n,
                   bool exclusive, void *out, vkr_scan_cb cb, void *userdata);
int vkr_reduce_shm_async(vkr_client *client, vkr_op op, vkr_dtype dtype, vkr_region region,
                         uint64_t offset, uint64_t count, const vkr_reduce_opts *opts,
                         vkr_reduce_cb cb, void *userdata);
int vkr_scan_shm_async(vkr_client *client, vkr_op op, vkr_dtype dtype, vkr_region src_region,
                       uint64_t src_offset, uint64_t count, bool exclusive,
                       vkr_region dst_region, uint64_t dst_offset, vkr_scan_cb cb,
                       void *userdata);

/* The socket, for poll()/epoll/an event loop: wait for POLLIN, and for POLLOUT too while
 * vkr_want_write() is true. Borrowed: do not close it or read from it. */
int vkr_get_fd(const vkr_client *client);
/*
 * While corked, asynchronous requests collect in the send buffer instead of each going out
 * in a system call of its own; vkr_flush, vkr_dispatch, a blocking call or uncorking sends
 * them. A client that queues many requests at once (a pipeline refill) sends them in one
 * write this way, which saves the daemon a socket read and a wake-up per request. Uncorking
 * sends what the socket takes without blocking. Returns 0 or the connection's error; when
 * the send fails, the callbacks of the requests run in the next vkr_dispatch, vkr_flush or
 * blocking call, not in vkr_cork.
 */
int vkr_cork(vkr_client *client, bool corked); /* client must not be NULL */
/* True while requests wait in the send buffer. */
bool vkr_want_write(const vkr_client *client);
/* Number of requests sent or queued whose reply has not been handled yet. */
size_t vkr_pending(const vkr_client *client);

/*
 * Waits up to timeout_ms (0: do not wait, -1: forever) for the socket, then reads every reply
 * available, calls their callbacks and sends what it can. Returns the number of callbacks
 * called (0 on timeout) or a negative code when the connection failed (then every request in
 * flight has had its callback called: with its answer where the daemon sent one before the
 * connection ended, else with that code). Inside a callback only timeout 0 is allowed; any
 * other returns -EBUSY.
 */
int vkr_dispatch(vkr_client *client, int timeout_ms);

/*
 * Sends the whole send buffer, waiting up to timeout_ms (-1: forever). Replies that arrive
 * meanwhile are handled (callbacks run). Returns 0, -ETIMEDOUT, or a connection error.
 */
int vkr_flush(vkr_client *client, int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif /* VKREDUCE_H */
