/*
 * rpc.h: the transport under libvkreduce (internal). It owns the socket, frames msgpack-RPC
 * requests into a send buffer, decodes replies with the streaming unpacker, and matches them
 * to calls in flight by msgid. It knows nothing of the methods: calls.c builds the params
 * and interprets the results through the reply function of each call.
 */
#ifndef VKR_CLIENT_RPC_H
#define VKR_CLIENT_RPC_H

#include <msgpack.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vkreduce.h"

struct rpc_call;

/* Called once per call, with the reply (status 0 and result) or a failure (status < 0 and
 * result NULL). result is borrowed and valid only during the call. */
typedef void (*rpc_reply_fn)(vkr_client *client, struct rpc_call *call, int status,
                             const msgpack_object *result);

/* One request in flight. The fields after msgid belong to whoever started the call; the
 * transport only passes them back. */
struct rpc_call {
	uint32_t msgid;
	size_t mark; /* transport only: where the request starts in the send buffer */
	rpc_reply_fn fn; /* NULL once abandoned: the reply is then read and dropped */
	union {
		vkr_reduce_cb reduce;
		vkr_scan_cb scan;
	} cb;
	void *userdata; /* borrowed from the caller, may be NULL */
	vkr_dtype dtype;
	vkr_op op;
	void *out; /* borrowed: where a scan's data goes, may be NULL */
	uint64_t n; /* elements expected back (inline scans) */
	uint32_t arena_slot; /* 1 + the arena slot holding the input, 0: none (arena.h) */
	bool quiet; /* the library's own call: an error reply does not set the last message */
	struct rpc_call *next; /* hash chain, owned by the table */
};

/* Opens the socket at path (NULL: the default path). */
int rpc_connect(const char *path, vkr_client **out);
void rpc_close(vkr_client *client);

/*
 * Starts a request: allocates a call with a fresh msgid and packs [0, msgid, method, [ with
 * nparams to follow. The caller packs exactly nparams objects with the returned packer, then
 * calls rpc_commit (or rpc_abort to take the request back out of the buffer). Returns NULL
 * and sets *err when the client is unusable or out of memory.
 */
msgpack_packer *rpc_begin(vkr_client *client, const char *method, uint32_t nparams,
                          struct rpc_call **call, int *err);
/* Enters the call into the table and sends what the socket takes. Returns 0 or an error (the
 * call is then freed and fn is not called). A failed send does not fail the call here: its fn
 * runs with the error in the next dispatch, flush or wait. */
int rpc_commit(vkr_client *client, struct rpc_call *call);
void rpc_abort(vkr_client *client, struct rpc_call *call);
/* Sends the whole send buffer within timeout_ms (-1: forever), handling replies meanwhile. */
int rpc_drain(vkr_client *client, int timeout_ms);
int rpc_timeout(const vkr_client *client);
/* As rpc_commit, but the request leaves in one sendmsg with fd attached (SCM_RIGHTS). The caller
 * calls rpc_drain before rpc_begin, so that the fd arrives with this request's first byte.
 * Without may_wait a full socket aborts the call and returns -EAGAIN instead of waiting. While
 * it waits for room it reads and handles replies (callbacks run; requests they start queue
 * behind this one), so only a caller that may run callbacks passes may_wait. */
int rpc_commit_with_fd(vkr_client *client, struct rpc_call *call, int fd, bool may_wait);
/* True when nothing waits in the send buffer (and the connection has not failed). */
bool rpc_send_idle(const vkr_client *client);

/* Runs the socket until *done turns true (set by the call's reply function), within the
 * client's timeout. On -ETIMEDOUT the call with msgid is abandoned. */
int rpc_wait(vkr_client *client, const bool *done, uint32_t msgid);

/* Remembers the daemon's message of the latest wire error (sanitized, truncated). */
void rpc_set_error_message(vkr_client *client, const char *msg, size_t len);

/* The connection's shared-memory arena (arena.h); a call's slot is released when the call
 * is freed, whatever ended it. */
struct arena *rpc_arena(vkr_client *client);

/* The blocking entry points refuse to run inside callbacks; this says whether we are. */
bool rpc_in_callback(const vkr_client *client);

#endif /* VKR_CLIENT_RPC_H */
