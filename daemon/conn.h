/*
 * conn.h: one client connection: non-blocking socket I/O on a uv_poll_t with recvmsg and
 * sendmsg (so that SCM_RIGHTS fds can be received), bounded msgpack framing and decoding,
 * the reply buffer, and per-connection state (regions, in-flight accounting).
 *
 * A connection is reference-counted: the open socket holds one reference and every job holds
 * one, so that a completion arriving after the client went away never touches freed memory.
 * After conn_close() replies are discarded. Loop thread only.
 */
#ifndef VKRD_CONN_H
#define VKRD_CONN_H

#include <msgpack.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "batch.h"
#include "shm.h"

struct vkrd;

/* A receive buffer, shared by the connection and the queued jobs whose inline arrays lie in
 * it. Freed (or cached for reuse) when the last reference goes. */
struct rxbuf {
	unsigned refs;
	size_t cap;
	char data[];
};

static inline struct rxbuf *rxbuf_ref(struct rxbuf *rx)
{
	rx->refs++;
	return rx;
}
/* Accepts NULL. */
void rxbuf_unref(struct rxbuf *rx);
/* Frees the cache of unused receive buffers (at exit). */
void conn_free_caches(void);

/* File descriptors received but not yet claimed by a message. */
#define CONN_MAX_PENDING_FDS 4

struct conn {
	struct vkrd *d;             /* borrowed */
	uv_poll_t poll;             /* embedded; closed by conn_close */
	int fd;                     /* the socket, closed when poll is closed */
	unsigned refs;
	uint64_t id;                /* for logs */
	pid_t peer_pid;             /* SO_PEERCRED, for logs */
	uid_t peer_uid;             /* SO_PEERCRED: counted in d->access while open */
	bool uid_counted;           /* access_conn_open succeeded: undo on close */
	uv_timer_t soft_timer;      /* embedded: fires when replies stayed above the soft limit */
	uint64_t soft_since_ns;     /* 0, or when unsent replies first passed output_soft_bytes */
	uint64_t written_ms;        /* loop time (uv_now) the peer last took replies, or output began */
	int events;                 /* UV_READABLE/UV_WRITABLE currently polled */
	bool closing;               /* conn_close called: no more I/O, replies discarded */
	bool close_after_flush;     /* protocol error: close once the reply is written */
	bool read_eof;              /* the peer shut its sending side: answer what is owed, close */
	bool out_failed;            /* a reply could not be buffered (out of memory) */
	bool in_dirty_list;

	/* Received bytes: unparsed ones are rx->data[rx_off, rx_len). Inline arrays of queued
	 * jobs point into rx, and each such job holds a reference, so the bytes are copied only
	 * once, into the upload ring. */
	struct rxbuf *rx;           /* owned reference, never NULL */
	size_t rx_off, rx_len;
	msgpack_zone zone;          /* embedded; objects of the message being dispatched */
	uint64_t rx_bytes;          /* bytes received so far (stream offset of the end) */
	/* A message larger than one receive buffer is charged to the daemon's memory budget
	 * (stats.memory_bytes) as its header declares its size, before its buffer is grown;
	 * the charge goes when the message is complete (dispatch charges its request) or the
	 * connection closes. While it does not fit, the connection is not read. */
	uint64_t rx_charged;        /* bytes of the unfinished message charged */
	uint64_t received_ms;       /* loop time (uv_now) bytes last arrived, or reading resumed */
	bool waiting_memory;        /* not read until rx_charged can grow (conn_admit_waiting) */
	bool waiting_rdhup;         /* the peer shut its sending side while we waited */
	uint64_t rx_wanted;         /* waiting: the charge the unfinished message needs */
	struct conn *waiting_next;  /* borrowed: d->waiting_first list */
	uint64_t msg_start;         /* stream offset of the first unparsed message */
	struct {
		int fd;             /* owned */
		uint64_t end;       /* stream offset just past the recvmsg that brought it */
	} fds[CONN_MAX_PENDING_FDS];
	unsigned nfds;

	msgpack_packer packer;      /* writes into out */
	char *out;                  /* owned, may be NULL: buffered reply bytes */
	size_t out_off, out_len, out_cap; /* unsent bytes are out[out_off, out_len) */

	uint64_t requests_in_flight; /* jobs queued or on the GPU */
	uint64_t bytes_in_flight;    /* their charged bytes */
	struct shm_table regions;
	struct batch_lane lane;      /* managed by batch.c */
	char client_name[64];        /* from hello, sanitized */

	struct conn *prev, *next;    /* borrowed: d->conns list */
	struct conn *dirty_next;     /* borrowed: d->dirty list */
};

/* Takes over fd (a connected, non-blocking, close-on-exec socket), checks the peer against
 * the allow lists and the per-uid connection limit, and starts reading. On failure closes
 * fd and returns -errno: -EACCES (not allowed), -EUSERS (the uid has max_connections_per_uid),
 * -ENOMEM or another error of the loop. */
int conn_create(struct vkrd *d, int fd);
/* Stops I/O, drops queued jobs and regions (work on the GPU keeps its references), closes
 * the socket. Safe to call more than once. */
void conn_close(struct conn *conn);
struct conn *conn_ref(struct conn *conn);
void conn_unref(struct conn *conn);

/* Starts a reply [1, msgid, nil, <result>]: the caller packs exactly one result object with
 * the returned packer, then calls conn_reply_end. */
msgpack_packer *conn_reply_begin(struct conn *conn, uint32_t msgid);
void conn_reply_end(struct conn *conn);
/* The fast path for small replies: returns room for max bytes of encoded reply in the
 * output buffer (NULL when replies are discarded or memory ran out), then conn_reply_raw_end
 * with the bytes written. conn_reply_raw_end must be called either way. */
char *conn_reply_raw_begin(struct conn *conn, size_t max);
void conn_reply_raw_end(struct conn *conn, size_t used);
/* Replies [1, msgid, [code, message], nil] and counts the error. */
void conn_reply_error(struct conn *conn, uint32_t msgid, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Writes what the connections replied since the last flush. */
void conn_flush_dirty(struct vkrd *d);
/* Closes every connection (shutdown). */
void conn_close_all(struct vkrd *d);

/* Whether charging more bytes would pass the daemon's memory budget (max_memory_bytes).
 * already: bytes of the budget the asker holds itself, so that a lone request or message of
 * any size is admitted (the per-message limit bounds that) and the budget cannot wedge the
 * daemon. */
bool conn_memory_spent(const struct vkrd *d, uint64_t charged, uint64_t already);
/* While the daemon's memory budget is spent: closes the connection, other than except, that
 * holds the most of it among the stalled ones: readers the daemon stopped reading (above
 * output_pause_bytes) that took no reply for output_soft_seconds, and senders of an unfinished
 * message that sent nothing for output_soft_seconds. Returns whether it closed one. */
bool conn_close_stalled(struct vkrd *d, const struct conn *except);
/* Reads again the connections that stopped for memory (rx_charged could not grow), oldest
 * first, as long as their messages fit. At every turn of the loop (make_room false: only
 * where memory was freed since the last refusal) and each second from a waiting
 * connection's timer (make_room true: closing stalled connections to make room). */
void conn_admit_waiting(struct vkrd *d, bool make_room);
/* Shutdown, once no work is left: reads and answers what the client has already sent,
 * stops reading, and closes the connection as soon as its replies are written (at once if
 * none are pending). */
void conn_finish(struct conn *conn);

#endif /* VKRD_CONN_H */
