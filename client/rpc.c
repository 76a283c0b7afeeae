/*
 * rpc.c: socket, framing and the table of calls in flight (see rpc.h).
 *
 * The socket is non-blocking. Requests are packed into one send buffer and written as far as
 * the socket takes them; waiting (blocking calls, vkr_flush, vkr_dispatch) always polls for
 * input too, so that a daemon that answers while we are still writing never deadlocks with
 * us. Every reply is validated before it reaches a call: a daemon that sends garbage gets its
 * connection closed and every call in flight fails with -EPROTO, but never crashes us.
 *
 * A daemon that refuses a request often answers and then closes (error 3 for an inline array
 * over max_inline_bytes), so a failed send is never the end of the story: what the daemon sent
 * before it closed is read and handled first, and only the calls left fail. A send fails where
 * callbacks may not run (inside an asynchronous call or vkr_cork) too; the failure then waits
 * in send_error for the next dispatch, flush or blocking call.
 */
#include "rpc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "arena.h"
#include "cpu_relax.h"
#include "proto_path.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "libvkreduce sends arrays as their bytes in memory and needs a little-endian host"
#endif

/* A reply larger than this is garbage: the largest legitimate one is a scan result, and the
 * daemon limits requests far below it. */
#define RPC_MAX_REPLY_BYTES ((size_t)1 << 33)
#define RPC_READ_CHUNK (256 * 1024)
#define RPC_DEFAULT_SPIN_US 50

struct vkr_client {
	int fd; /* owned, non-blocking socket; -1 once the connection failed */
	int error; /* sticky: 0 while usable, else why the connection ended */
	int timeout_ms; /* for blocking calls, -1 forever */
	uint32_t next_msgid; /* msgpack-RPC msgids are 32 bits; wraps, skipping those in use */
	bool in_callback; /* set while a reply function runs, nested ones included */
	/* A send failed (-errno) where callbacks may not run; the connection is failed, after
	 * reading what the daemon sent before it went, by the next dispatch, flush or wait. */
	int send_error;

	/* Send buffer: bytes [off, len) are still to be written. */
	char *out; /* owned */
	size_t out_len, out_off, out_cap;
	bool out_oom; /* a pack ran out of memory: the request being built is void */
	bool corked; /* vkr_cork: committed requests wait for a flush, dispatch or uncork */
	/* rpc_commit_with_fd waits for room: the send buffer starts with a request whose fd must
	 * go with its first byte, so nothing may be sent without it (see send_some). */
	bool fd_request_waiting;
	msgpack_packer pk; /* writes into out */

	/* Receive buffer: bytes [in_off, in_len) are not parsed yet. Replies are decoded in
	 * place; their objects live in zone, which is cleared for the next reply. */
	char *in; /* owned */
	size_t in_off, in_len, in_cap;
	msgpack_zone zone;
	int64_t spin_ns; /* blocking calls poll this long before they sleep in poll() */
	struct arena arena; /* small inline inputs go through shared memory */
	struct rpc_call *free_calls; /* owned: finished calls kept for reuse */
	size_t nfree_calls;

	struct rpc_call **buckets; /* owned; chains by msgid & (nbuckets - 1) */
	size_t nbuckets, ncalls;

	char errmsg[512]; /* the daemon's text for the latest wire error */
};

static int out_write(void *data, const char *buf, size_t len)
{
	vkr_client *c = data;

	if (c->out_oom)
		return -1;
	if (len > c->out_cap - c->out_len) {
		size_t cap = c->out_cap ? c->out_cap : 4096;
		while (cap - c->out_len < len) {
			if (cap > SIZE_MAX / 2) {
				c->out_oom = true;
				return -1;
			}
			cap *= 2;
		}
		char *p = realloc(c->out, cap);
		if (!p) {
			c->out_oom = true;
			return -1;
		}
		c->out = p;
		c->out_cap = cap;
	}
	memcpy(c->out + c->out_len, buf, len);
	c->out_len += len;
	return 0;
}

/* ---- the table of calls in flight ---------------------------------------------------------- */

static struct rpc_call **table_slot(vkr_client *c, uint32_t msgid)
{
	struct rpc_call **p = &c->buckets[msgid & (c->nbuckets - 1)];
	while (*p && (*p)->msgid != msgid)
		p = &(*p)->next;
	return p;
}

static int table_grow(vkr_client *c)
{
	size_t n = c->nbuckets * 2;
	struct rpc_call **b = calloc(n, sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < c->nbuckets; i++) {
		struct rpc_call *call = c->buckets[i];
		while (call) {
			struct rpc_call *next = call->next;
			call->next = b[call->msgid & (n - 1)];
			b[call->msgid & (n - 1)] = call;
			call = next;
		}
	}
	free(c->buckets);
	c->buckets = b;
	c->nbuckets = n;
	return 0;
}

/* Enters call into the table. Growing the table only keeps the chains short: when it cannot
 * grow, longer chains still work, so entering a call never fails. */
static void table_insert(vkr_client *c, struct rpc_call *call)
{
	if (c->ncalls >= c->nbuckets)
		(void)table_grow(c);
	struct rpc_call **slot = table_slot(c, call->msgid);
	call->next = NULL;
	*slot = call;
	c->ncalls++;
}

static struct rpc_call *table_take(vkr_client *c, uint32_t msgid)
{
	struct rpc_call **p = table_slot(c, msgid);
	struct rpc_call *call = *p;
	if (call) {
		*p = call->next;
		call->next = NULL;
		c->ncalls--;
	}
	return call;
}

/* Calls kept for reuse: a window of pipelined calls needs no malloc per call. */
#define RPC_FREE_CALLS_MAX 1024

static struct rpc_call *call_alloc(vkr_client *c)
{
	struct rpc_call *call = c->free_calls;

	if (!call)
		return calloc(1, sizeof(*call));
	c->free_calls = call->next;
	c->nfree_calls--;
	memset(call, 0, sizeof(*call));
	return call;
}

static void call_free(vkr_client *c, struct rpc_call *call)
{
	arena_release(&c->arena, call->arena_slot);
	call->arena_slot = 0;
	if (c->nfree_calls >= RPC_FREE_CALLS_MAX) {
		free(call);
		return;
	}
	call->next = c->free_calls;
	c->free_calls = call;
	c->nfree_calls++;
}

static int run_call(vkr_client *c, struct rpc_call *call, int status, const msgpack_object *res)
{
	int ran = 0;
	if (call->fn) {
		/* Restored, not cleared: a callback may dispatch, and the replies handled there must
		 * not end the outer callback's protection (vkr_close would free the client under
		 * it). */
		bool was_in_callback = c->in_callback;
		c->in_callback = true;
		call->fn(c, call, status, res);
		c->in_callback = was_in_callback;
		ran = 1;
	}
	call_free(c, call);
	return ran;
}

/* Ends the connection: every call in flight learns err. Callbacks may start new requests;
 * rpc_begin refuses them because c->error is set first. */
static int fail_connection(vkr_client *c, int err)
{
	if (c->error)
		return c->error;
	c->error = err;
	if (c->fd >= 0) {
		close(c->fd);
		c->fd = -1;
	}
	c->out_len = c->out_off = 0;
	for (size_t i = 0; i < c->nbuckets; i++) {
		while (c->buckets[i]) {
			struct rpc_call *call = c->buckets[i];
			c->buckets[i] = call->next;
			c->ncalls--;
			run_call(c, call, err, NULL);
		}
	}
	return err;
}

/* ---- connect / close ----------------------------------------------------------------------- */

int rpc_connect(const char *path, vkr_client **out)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	char defpath[sizeof(addr.sun_path)];
	vkr_client *c;
	int err;

	*out = NULL;
	if (!path) {
		err = proto_default_socket_path(defpath, sizeof(defpath));
		if (err)
			return err;
		path = defpath;
	}
	if (strlen(path) >= sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	memcpy(addr.sun_path, path, strlen(path) + 1);

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->timeout_ms = -1;
	c->next_msgid = 1;
	arena_init(&c->arena);
	/* VKR_CLIENT_SPIN_US: how long a blocking call polls the socket before it sleeps. A
	 * sleeping thread is woken by the scheduler, which can cost as much as the GPU work of a
	 * small request; 0 turns the polling off. */
	const char *spin = getenv("VKR_CLIENT_SPIN_US");
	c->spin_ns = (spin && *spin ? strtoll(spin, NULL, 10) : RPC_DEFAULT_SPIN_US) * 1000;
	if (c->spin_ns < 0 || c->spin_ns > (int64_t)1000000000)
		c->spin_ns = 0;
	c->nbuckets = 64;
	c->buckets = calloc(c->nbuckets, sizeof(*c->buckets));
	if (!c->buckets) {
		err = -ENOMEM;
		goto err_client;
	}
	if (!msgpack_zone_init(&c->zone, 2048)) {
		err = -ENOMEM;
		goto err_buckets;
	}
	msgpack_packer_init(&c->pk, c, out_write);

	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		err = -errno;
		goto err_unpacker;
	}
	/* Connect while blocking (a local connect completes or fails at once), then switch to
	 * non-blocking for all I/O. */
	while (connect(c->fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		if (errno != EINTR) {
			err = -errno;
			goto err_fd;
		}
	}
	int fl = fcntl(c->fd, F_GETFL);
	if (fl < 0 || fcntl(c->fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		err = -errno;
		goto err_fd;
	}
	*out = c;
	return 0;

err_fd:
	close(c->fd);
err_unpacker:
	msgpack_zone_destroy(&c->zone);
err_buckets:
	free(c->buckets);
err_client:
	free(c);
	return err;
}

void rpc_close(vkr_client *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	for (size_t i = 0; i < c->nbuckets; i++) {
		while (c->buckets[i]) {
			struct rpc_call *call = c->buckets[i];
			c->buckets[i] = call->next;
			free(call);
		}
	}
	free(c->buckets);
	while (c->free_calls) {
		struct rpc_call *call = c->free_calls;
		c->free_calls = call->next;
		free(call);
	}
	arena_finish(&c->arena);
	msgpack_zone_destroy(&c->zone);
	free(c->in);
	free(c->out);
	free(c);
}

/* ---- sending ------------------------------------------------------------------------------- */

static int recv_all(vkr_client *c);

/* The errno of a send that failed for good, as the library reports it. */
static int send_failure(int err)
{
	return err == EPIPE ? -ECONNRESET : -err;
}

/* Ends the connection after a failed send, once what the daemon sent before it closed has been
 * read and handled: its answer (often the reason it closed) reaches its call, and only the
 * calls left fail. Runs callbacks, so only where they may run. */
static int fail_after_send_error(vkr_client *c)
{
	if (c->error)
		return c->error;
	(void)recv_all(c); /* fails the connection itself at the end of the stream */
	return fail_connection(c, c->send_error);
}

/* Writes what the socket takes now. Returns 0 (maybe with bytes left) or, when a send failed,
 * its error, which stays in c->send_error: the connection is failed by whichever caller may
 * run callbacks (fail_after_send_error), and nothing more is sent on it. */
static int send_some(vkr_client *c)
{
	if (c->send_error)
		return c->send_error;
	/* The request at the front waits to go with its fd (rpc_commit_with_fd). */
	if (c->fd_request_waiting)
		return 0;
	while (c->out_off < c->out_len) {
		ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
		                 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			c->send_error = send_failure(errno);
			return c->send_error;
		}
		c->out_off += (size_t)w;
	}
	c->out_off = c->out_len = 0;
	/* Do not keep a huge buffer around after one large request. */
	if (c->out_cap > ((size_t)16 << 20)) {
		free(c->out);
		c->out = NULL;
		c->out_cap = 0;
	}
	return 0;
}

msgpack_packer *rpc_begin(vkr_client *c, const char *method, uint32_t nparams,
                          struct rpc_call **callp, int *err)
{
	struct rpc_call *call;

	*callp = NULL;
	if (c->error) {
		*err = c->error;
		return NULL;
	}
	if (c->ncalls >= UINT32_MAX / 2) {
		*err = -EAGAIN;
		return NULL;
	}
	call = call_alloc(c);
	if (!call) {
		*err = -ENOMEM;
		return NULL;
	}
	/* msgid 0 is legal, but skipping it keeps "0 = none" usable in callers' bookkeeping. */
	do {
		call->msgid = c->next_msgid++;
	} while (call->msgid == 0 || *table_slot(c, call->msgid));

	/* Reclaim the sent prefix so the buffer does not creep. */
	if (c->out_off > 0 && c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	call->mark = c->out_len;
	c->out_oom = false;
	msgpack_pack_array(&c->pk, 4);
	msgpack_pack_uint8(&c->pk, 0);
	msgpack_pack_uint32(&c->pk, call->msgid);
	msgpack_pack_str_with_body(&c->pk, method, strlen(method));
	msgpack_pack_array(&c->pk, nparams);
	*callp = call;
	return &c->pk;
}

void rpc_abort(vkr_client *c, struct rpc_call *call)
{
	/* The request never left: nothing after the mark was committed (one request is built at
	 * a time, and sending only starts at commit). */
	if (call->mark >= c->out_off && call->mark <= c->out_len)
		c->out_len = call->mark;
	c->out_oom = false;
	call_free(c, call);
}

int rpc_commit(vkr_client *c, struct rpc_call *call)
{
	if (c->out_oom) {
		rpc_abort(c, call);
		return -ENOMEM;
	}
	table_insert(c, call);
	/* A failed send fails the call through its reply function, like any later failure, but
	 * not here: callbacks run only in dispatch, flush and blocking calls (send_some). */
	if (!c->corked)
		(void)send_some(c);
	return 0;
}

/* ---- receiving ----------------------------------------------------------------------------- */

static int protocol_error(vkr_client *c, const char *what)
{
	snprintf(c->errmsg, sizeof(c->errmsg), "protocol error from daemon: %s", what);
	return fail_connection(c, -EPROTO);
}

void rpc_set_error_message(vkr_client *c, const char *msg, size_t len)
{
	size_t n = len < sizeof(c->errmsg) - 1 ? len : sizeof(c->errmsg) - 1;
	/* The text goes to terminals and logs: keep it printable. */
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)msg[i];
		c->errmsg[i] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?';
	}
	c->errmsg[n] = '\0';
}

/* Handles one decoded reply. Returns callbacks run (0 or 1) or a connection error. */
static int handle_reply(vkr_client *c, const msgpack_object *o)
{
	const msgpack_object *a;
	int status = 0;

	if (o->type != MSGPACK_OBJECT_ARRAY)
		return protocol_error(c, "message is not an array");
	a = o->via.array.ptr;
	if (o->via.array.size == 3 && a[0].type == MSGPACK_OBJECT_POSITIVE_INTEGER &&
	    a[0].via.u64 == 2)
		return 0; /* a notification: none is defined for clients yet, so ignore it */
	if (o->via.array.size != 4 || a[0].type != MSGPACK_OBJECT_POSITIVE_INTEGER ||
	    a[0].via.u64 != 1)
		return protocol_error(c, "message is not a response [1, msgid, error, result]");
	if (a[1].type != MSGPACK_OBJECT_POSITIVE_INTEGER || a[1].via.u64 > UINT32_MAX)
		return protocol_error(c, "msgid is not a 32-bit unsigned integer");
	if (a[2].type != MSGPACK_OBJECT_NIL) {
		const msgpack_object *e = a[2].via.array.ptr;
		if (a[2].type != MSGPACK_OBJECT_ARRAY || a[2].via.array.size < 1 ||
		    e[0].type != MSGPACK_OBJECT_POSITIVE_INTEGER || e[0].via.u64 == 0 ||
		    e[0].via.u64 > 1000000)
			return protocol_error(c, "error is not nil or [code, message]");
		status = -(VKR_ERROR_BASE + (int)e[0].via.u64);
	}
	struct rpc_call *call = table_take(c, (uint32_t)a[1].via.u64);
	if (!call)
		return protocol_error(c, "reply to a msgid that is not in flight");
	/* A quiet call is the library's own (the arena's registration): its refusal is not the
	 * caller's last error. */
	if (status && !call->quiet) {
		const msgpack_object *e = a[2].via.array.ptr;
		if (a[2].via.array.size >= 2 && e[1].type == MSGPACK_OBJECT_STR)
			rpc_set_error_message(c, e[1].via.str.ptr, e[1].via.str.size);
		else
			rpc_set_error_message(c, "", 0);
	}
	return run_call(c, call, status, status ? NULL : &a[3]);
}

/* Makes room for RPC_READ_CHUNK more bytes after the unparsed ones. */
static int in_reserve(vkr_client *c)
{
	size_t unparsed = c->in_len - c->in_off;

	if (c->in_off > 0) {
		memmove(c->in, c->in + c->in_off, unparsed);
		c->in_off = 0;
		c->in_len = unparsed;
	}
	/* Do not keep a huge buffer around after one large reply. */
	if (c->in_cap > ((size_t)16 << 20) && unparsed + RPC_READ_CHUNK <= RPC_READ_CHUNK * 2) {
		char *p = malloc(RPC_READ_CHUNK * 2);
		if (p) {
			memcpy(p, c->in, unparsed);
			free(c->in);
			c->in = p;
			c->in_cap = RPC_READ_CHUNK * 2;
		}
	}
	if (c->in_cap - c->in_len < RPC_READ_CHUNK) {
		size_t cap = c->in_cap ? c->in_cap : RPC_READ_CHUNK * 2;
		while (cap - c->in_len < RPC_READ_CHUNK)
			cap *= 2;
		char *p = realloc(c->in, cap);
		if (!p)
			return -ENOMEM;
		c->in = p;
		c->in_cap = cap;
	}
	return 0;
}

/* Handles every complete reply buffered. Returns callbacks run or a connection error. */
static int parse_replies(vkr_client *c)
{
	int ran = 0;

	while (c->in_off < c->in_len) {
		msgpack_object obj;
		size_t off = 0;

		/* The previous reply's objects are dead. Strings and bins point into c->in. */
		msgpack_zone_clear(&c->zone);
		msgpack_unpack_return ur = msgpack_unpack(c->in + c->in_off, c->in_len - c->in_off, &off,
		                                          &c->zone, &obj);
		if (ur == MSGPACK_UNPACK_CONTINUE) {
			if (c->in_len - c->in_off > RPC_MAX_REPLY_BYTES)
				return protocol_error(c, "reply larger than any valid one");
			break;
		}
		if (ur == MSGPACK_UNPACK_NOMEM_ERROR)
			return fail_connection(c, -ENOMEM);
		if (ur != MSGPACK_UNPACK_SUCCESS && ur != MSGPACK_UNPACK_EXTRA_BYTES)
			return protocol_error(c, "bytes that are not msgpack");
		c->in_off += off;
		int n = handle_reply(c, &obj);
		if (n < 0)
			return n;
		ran += n;
		if (c->error)
			return c->error;
	}
	if (c->in_off == c->in_len)
		c->in_off = c->in_len = 0;
	return ran;
}

/* Reads everything available and handles every complete reply. */
static int recv_all(vkr_client *c)
{
	int ran = 0;

	for (;;) {
		if (in_reserve(c) < 0)
			return fail_connection(c, -ENOMEM);
		size_t room = c->in_cap - c->in_len;
		ssize_t r = recv(c->fd, c->in + c->in_len, room, MSG_DONTWAIT);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return ran;
			return fail_connection(c, -errno);
		}
		if (r == 0)
			return fail_connection(c, -ECONNRESET);
		c->in_len += (size_t)r;
		int n = parse_replies(c);
		if (n < 0)
			return n;
		ran += n;
		/* A short read emptied the socket: no need for a recv that says EAGAIN. */
		if ((size_t)r < room)
			return ran;
	}
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One round of I/O: waits up to timeout_ms for the socket, then reads and writes. Returns
 * callbacks run or a connection error. */
static int io_round(vkr_client *c, int timeout_ms)
{
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
	int ran = 0, r;

	if (c->error)
		return c->error;
	if (c->send_error)
		return fail_after_send_error(c);
	if (c->out_off < c->out_len)
		pfd.events |= POLLOUT;
	r = poll(&pfd, 1, timeout_ms);
	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	if (r == 0)
		return 0;
	/* Read first: a daemon that answers and closes at once (input, hang-up and room to write
	 * all reported together) would make the send fail before its answer is read. */
	if (pfd.revents & (POLLIN | POLLERR | POLLHUP | POLLNVAL)) {
		if ((r = recv_all(c)) < 0)
			return r;
		ran += r;
	}
	if ((pfd.revents & (POLLOUT | POLLERR | POLLHUP)) && c->out_off < c->out_len) {
		if (send_some(c) < 0)
			return fail_after_send_error(c);
	}
	/* A callback's request may have failed to go out. */
	if (c->send_error)
		return fail_after_send_error(c);
	return ran;
}

static int remaining(int64_t deadline)
{
	if (deadline < 0)
		return -1;
	int64_t left = deadline - now_ms();
	return left <= 0 ? 0 : (left > INT_MAX ? INT_MAX : (int)left);
}

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Polls for the reply without sleeping, for at most c->spin_ns, once the request is sent. */
static void spin_for(vkr_client *c, const bool *done)
{
	int64_t start;

	if (c->spin_ns <= 0 || c->out_off < c->out_len || c->send_error)
		return;
	start = now_ns();
	while (!*done && !c->error) {
		if (recv_all(c) < 0)
			return;
		if (*done || now_ns() - start >= c->spin_ns)
			return;
		cpu_relax();
	}
}

int rpc_wait(vkr_client *c, const bool *done, uint32_t msgid)
{
	int64_t deadline = c->timeout_ms < 0 ? -1 : now_ms() + c->timeout_ms;

	spin_for(c, done);

	while (!*done) {
		int r = io_round(c, remaining(deadline));
		if (*done)
			break;
		if (r >= 0 && deadline >= 0 && now_ms() >= deadline)
			r = -ETIMEDOUT;
		if (r < 0) {
			/* The caller's state (done, results) dies with its frame: a reply that comes
			 * later must not reach it. */
			struct rpc_call **slot = table_slot(c, msgid);
			if (*slot)
				(*slot)->fn = NULL;
			return r;
		}
	}
	return 0;
}

int rpc_drain(vkr_client *c, int timeout_ms)
{
	int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;

	while (c->out_off < c->out_len) {
		int r = io_round(c, remaining(deadline));
		if (r < 0)
			return r;
		if (c->out_off < c->out_len && deadline >= 0 && now_ms() >= deadline)
			return -ETIMEDOUT;
	}
	if (c->error)
		return c->error;
	c->out_off = c->out_len = 0;
	return 0;
}

/* Waits for room to send the request that carries an fd, reading and handling replies
 * meanwhile: a daemon whose unread replies passed output_pause_bytes stops reading requests
 * until they are read, so waiting for room alone could wait forever. Returns 0 (try again) or
 * an error. */
static int wait_to_send_fd(vkr_client *c, int64_t deadline)
{
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN | POLLOUT };
	int r = poll(&pfd, 1, remaining(deadline));

	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	if (r == 0)
		return -ETIMEDOUT;
	if (pfd.revents & (POLLIN | POLLERR | POLLHUP | POLLNVAL)) {
		if ((r = recv_all(c)) < 0)
			return r;
	}
	if (!(pfd.revents & POLLOUT) && deadline >= 0 && now_ms() >= deadline)
		return -ETIMEDOUT;
	return 0;
}

int rpc_commit_with_fd(vkr_client *c, struct rpc_call *call, int fd, bool may_wait)
{
	int64_t deadline = c->timeout_ms < 0 ? -1 : now_ms() + c->timeout_ms;
	size_t request_end = c->out_len;
	int err;

	if (c->out_oom) {
		rpc_abort(c, call);
		return -ENOMEM;
	}
	/* The caller drained the buffer before rpc_begin, so it holds this request alone and the
	 * fd rides with its first byte. */
	if (call->mark != 0 || c->out_off != 0) {
		rpc_abort(c, call);
		return -EINVAL;
	}

	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctrl;
	memset(&ctrl, 0, sizeof(ctrl));
	struct msghdr mh = {
		.msg_iovlen = 1,
		.msg_control = ctrl.buf,
		.msg_controllen = sizeof(ctrl.buf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));

	/* Callbacks run while we wait may queue requests behind this one; they go with it. */
	c->fd_request_waiting = true;
	ssize_t w;
	for (;;) {
		/* Taken afresh each time: a callback's request may have moved the buffer. This
		 * request alone goes with the fd: the daemon gives an fd to the message holding the
		 * last byte that came with it, so requests queued behind it must not ride along. */
		struct iovec iov = { .iov_base = c->out, .iov_len = request_end };
		mh.msg_iov = &iov;
		w = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w >= 0)
			break;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			c->fd_request_waiting = false;
			c->send_error = send_failure(errno);
			call_free(c, call);
			return fail_after_send_error(c);
		}
		err = may_wait ? wait_to_send_fd(c, deadline) : -EAGAIN;
		if (err < 0)
			goto give_up;
	}
	c->fd_request_waiting = false;
	/* The fd went with the first byte; a short write leaves the tail for ordinary sends. */
	c->out_off = (size_t)w;
	table_insert(c, call);
	if (!c->corked)
		(void)send_some(c);
	return 0;

give_up:
	c->fd_request_waiting = false;
	if (c->error) {
		call_free(c, call); /* the connection ended while we waited; the buffer is gone */
		return c->error;
	}
	/* Nothing of this request left: take it out, keeping what callbacks queued behind it. */
	memmove(c->out, c->out + request_end, c->out_len - request_end);
	c->out_len -= request_end;
	c->out_oom = false;
	call_free(c, call);
	return err;
}

bool rpc_in_callback(const vkr_client *c)
{
	return c->in_callback;
}

int rpc_timeout(const vkr_client *c)
{
	return c->timeout_ms;
}

/* ---- public: connection-level API ---------------------------------------------------------- */

int vkr_connect(const char *path, vkr_client **out)
{
	if (!out)
		return -EINVAL;
	return rpc_connect(path, out);
}

void vkr_close(vkr_client *c)
{
	if (c && c->in_callback)
		return;
	rpc_close(c);
}

const char *vkr_last_error_message(const vkr_client *c)
{
	return c ? c->errmsg : "";
}

void vkr_set_timeout(vkr_client *c, int timeout_ms)
{
	c->timeout_ms = timeout_ms < 0 ? -1 : timeout_ms;
}

int vkr_get_fd(const vkr_client *c)
{
	return c->fd;
}

int vkr_cork(vkr_client *c, bool corked)
{
	c->corked = corked;
	if (c->error)
		return c->error;
	/* A send that fails here is reported, but its calls fail (callbacks run) in the next
	 * dispatch, flush or blocking call. */
	return corked ? c->send_error : send_some(c);
}

struct arena *rpc_arena(vkr_client *c)
{
	return &c->arena;
}

bool vkr_want_write(const vkr_client *c)
{
	return c->out_off < c->out_len;
}

size_t vkr_pending(const vkr_client *c)
{
	return c->ncalls;
}

bool rpc_send_idle(const vkr_client *c)
{
	return c->out_off == c->out_len && !c->error && !c->send_error;
}

int vkr_dispatch(vkr_client *c, int timeout_ms)
{
	/* A callback may look for replies, but not wait for them: that would block its caller's
	 * loop inside the library, as a blocking call would. */
	if (c->in_callback && timeout_ms != 0)
		return -EBUSY;
	if (!c->in_callback)
		arena_advance(c, &c->arena);
	return io_round(c, timeout_ms < 0 ? -1 : timeout_ms);
}

int vkr_flush(vkr_client *c, int timeout_ms)
{
	if (c->in_callback)
		return -EBUSY;
	arena_advance(c, &c->arena);
	return rpc_drain(c, timeout_ms);
}

const char *vkr_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
#define VKR_X_(code, name, str)                                                                    \
	case VKR_E##name:                                                                          \
		return str;
		VKR_ERROR_MAP(VKR_X_)
#undef VKR_X_
	case -EPROTO:
		return "protocol error: the daemon sent an invalid reply";
	case -ECONNRESET:
		return "connection to the daemon closed";
	case -ECONNREFUSED:
		return "no daemon listening on the socket";
	default:
		break;
	}
	/* Before strerror, which would also take -1011 ("Unknown error 1011"): a code the daemon
	 * added after this library was built. */
	if (err < -VKR_ERROR_BASE)
		return "unknown daemon error";
	if (err < 0)
		return strerror(-err); /* glibc's table is static and thread-safe to read */
	return "unknown error";
}
