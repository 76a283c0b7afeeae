/* conn.c: one client connection: recvmsg/sendmsg on a uv_poll_t, framing, replies. */
#include "conn.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "batch.h"
#include "daemon.h"
#include "dispatch.h"
#include "frame.h"
#include "log.h"
#include "proto_names.h"
#include "server.h"

/* The most read from one connection per loop turn, so one fast sender cannot monopolize
 * the loop. */
#define READ_TURN_MAX (4 * 1024 * 1024)
/* Objects and nesting a request can need (scan with dst is 4 deep, ~20 objects). */
#define FRAME_OBJECTS_MAX 1024
#define FRAME_DEPTH_MAX 8
/* Slack beyond max_inline_bytes for the rest of a message. */
#define FRAME_SLACK (64 * 1024)

static struct log_ratelimit bad_input_rl = LOG_RATELIMIT_INIT(10);
static struct log_ratelimit access_rl = LOG_RATELIMIT_INIT(5);
static struct log_ratelimit slow_rl = LOG_RATELIMIT_INIT(5);

static void update_events(struct conn *conn);
static void on_poll(uv_poll_t *handle, int status, int events);
static void on_soft_timer(uv_timer_t *timer);

/* Makes room for len more reply bytes and returns where they go, or NULL when replies are
 * being discarded (closing) or could not be buffered (out_failed is then set). */
static char *out_reserve(struct conn *conn, size_t len)
{
	size_t need;

	if (conn->closing || conn->out_failed)
		return NULL;
	if (conn->out_len == conn->out_off)
		conn->written_ms = uv_now(conn->poll.loop); /* stalled only from here on; no syscall */
	need = conn->out_len + len;
	if (need > conn->out_cap) {
		size_t cap = conn->out_cap ? conn->out_cap : 4096;
		char *grown;
		/* Compact first: sent bytes at the front are dead. */
		if (conn->out_off > 0) {
			memmove(conn->out, conn->out + conn->out_off, conn->out_len - conn->out_off);
			conn->out_len -= conn->out_off;
			conn->out_off = 0;
			need = conn->out_len + len;
		}
		while (cap < need)
			cap *= 2;
		if (cap != conn->out_cap) {
			grown = realloc(conn->out, cap);
			if (!grown) {
				conn->out_failed = true;
				return NULL;
			}
			conn->out = grown;
			conn->out_cap = cap;
		}
	}
	return conn->out + conn->out_len;
}

static int pack_write(void *data, const char *buf, size_t len)
{
	struct conn *conn = data;
	char *p = out_reserve(conn, len);

	if (!p)
		return conn->closing ? 0 : -1;
	memcpy(p, buf, len);
	conn->out_len += len;
	conn->d->stats.memory_bytes += len;
	return 0;
}

char *conn_reply_raw_begin(struct conn *conn, size_t max)
{
	return out_reserve(conn, max);
}

void conn_reply_raw_end(struct conn *conn, size_t used)
{
	if (!conn->closing && !conn->out_failed) {
		conn->out_len += used;
		conn->d->stats.memory_bytes += used;
	}
	conn_reply_end(conn);
}

/* ---- receive buffers ------------------------------------------------------------------- */

/* A connection's buffer: large enough that one recvmsg takes many small requests. */
#define RX_CHUNK ((size_t)64 * 1024 - 64)
/* Least free space worth a recvmsg; with less, a fresh buffer is taken. */
#define RX_MIN_READ ((size_t)16 * 1024)
#define RX_CACHE_MAX 64

static struct rxbuf *rx_cache[RX_CACHE_MAX];
static unsigned rx_cache_count;

static struct rxbuf *rxbuf_get(size_t cap)
{
	struct rxbuf *rx;

	if (cap <= RX_CHUNK && rx_cache_count > 0) {
		rx = rx_cache[--rx_cache_count];
	} else {
		if (cap < RX_CHUNK)
			cap = RX_CHUNK;
		rx = malloc(sizeof(*rx) + cap);
		if (!rx)
			return NULL;
		rx->cap = cap;
	}
	rx->refs = 1;
	return rx;
}

void rxbuf_unref(struct rxbuf *rx)
{
	if (!rx || --rx->refs > 0)
		return;
	if (rx->cap == RX_CHUNK && rx_cache_count < RX_CACHE_MAX)
		rx_cache[rx_cache_count++] = rx;
	else
		free(rx);
}

void conn_free_caches(void)
{
	while (rx_cache_count > 0)
		free(rx_cache[--rx_cache_count]);
}

/* Makes room for at least want more bytes after the unparsed ones. Bytes that queued jobs
 * still point to are never moved: if the buffer is shared, the unparsed tail moves to a
 * fresh buffer instead. */
static bool rx_reserve(struct conn *conn, size_t want)
{
	struct rxbuf *rx = conn->rx, *nb;
	size_t unparsed = conn->rx_len - conn->rx_off;

	if (rx->refs == 1) {
		if (conn->rx_off > 0) {
			memmove(rx->data, rx->data + conn->rx_off, unparsed);
			conn->rx_off = 0;
			conn->rx_len = unparsed;
		}
		/* Keep a buffer grown for one large message only while it is needed. */
		if (rx->cap - conn->rx_len >= want && (rx->cap == RX_CHUNK || unparsed + want > RX_CHUNK))
			return true;
	} else if (rx->cap - conn->rx_len >= want) {
		return true;
	}
	nb = rxbuf_get(unparsed + want);
	if (!nb)
		return false;
	memcpy(nb->data, rx->data + conn->rx_off, unparsed);
	rxbuf_unref(rx);
	conn->rx = nb;
	conn->rx_off = 0;
	conn->rx_len = unparsed;
	return true;
}

/* Takes an unfinished message's charge off the memory budget (complete, or discarded). */
static void release_unfinished(struct conn *conn)
{
	if (conn->rx_charged == 0)
		return; /* every small message: no write to the shared stats */
	conn->d->stats.memory_bytes -= conn->rx_charged;
	conn->rx_charged = 0;
}

static void waiting_remove(struct conn *conn)
{
	struct vkrd *d = conn->d;
	struct conn *prev = NULL;

	for (struct conn *c = d->waiting_first; c; prev = c, c = c->waiting_next) {
		if (c != conn)
			continue;
		if (prev)
			prev->waiting_next = c->waiting_next;
		else
			d->waiting_first = c->waiting_next;
		if (d->waiting_last == c)
			d->waiting_last = prev;
		break;
	}
	conn->waiting_next = NULL;
}

/* Checks the peer's credentials before anything is allocated for it. 0 or -errno. */
static int admit(struct vkrd *d, int fd, struct access_peer *peer)
{
	int r = access_read_peer(fd, peer);

	if (r) {
		/* Without credentials neither the allow lists nor per-uid limits can be applied. */
		if (log_ratelimit_ok(&access_rl))
			log_warn("refusing a connection: SO_PEERCRED: %s", strerror(-r));
		return r;
	}
	if (!access_allowed(&d->access, peer)) {
		d->stats.connections_denied++;
		if (log_ratelimit_ok(&access_rl))
			log_warn("refusing a connection from uid %u (pid %d): not in allow_uids/allow_groups",
				 (unsigned)peer->uid, (int)peer->pid);
		return -EACCES;
	}
	r = access_conn_open(&d->access, peer->uid, d->limits.max_connections_per_uid);
	if (r == -EUSERS) {
		d->stats.connections_refused_uid++;
		if (log_ratelimit_ok(&access_rl))
			log_warn("refusing a connection from uid %u (pid %d): max_connections_per_uid %" PRIu64
				 " reached", (unsigned)peer->uid, (int)peer->pid, d->limits.max_connections_per_uid);
	}
	return r;
}

int conn_create(struct vkrd *d, int fd)
{
	struct access_peer peer;
	struct conn *conn;
	int r;

	if ((r = admit(d, fd, &peer))) {
		close(fd);
		return r;
	}
	d->stats.users = d->access.nusers;
	conn = calloc(1, sizeof(*conn));
	if (!conn) {
		r = -ENOMEM;
		goto fail_uid;
	}
	if (!(conn->rx = rxbuf_get(RX_CHUNK))) {
		r = -ENOMEM;
		goto fail_free;
	}
	if (!msgpack_zone_init(&conn->zone, 2048)) {
		r = -ENOMEM;
		goto fail_rx;
	}
	r = uv_poll_init(d->loop, &conn->poll, fd);
	if (r)
		goto fail_unpacker;
	/* Cannot fail on Linux (no allocation); once both handles exist, conn_close closes them. */
	uv_timer_init(d->loop, &conn->soft_timer);
	conn->poll.data = conn;
	conn->soft_timer.data = conn;
	conn->d = d;
	conn->fd = fd;
	/* The open socket's reference (dropped when poll is closed) and the timer's. */
	conn->refs = 2;
	conn->id = ++d->next_conn_id;
	conn->received_ms = uv_now(d->loop);
	conn->peer_pid = peer.pid;
	conn->peer_uid = peer.uid;
	conn->uid_counted = true;
	msgpack_packer_init(&conn->packer, conn, pack_write);
	shm_table_init(&conn->regions);
	conn->next = d->conns;
	if (d->conns)
		d->conns->prev = conn;
	d->conns = conn;
	d->stats.connections++;
	d->stats.connections_total++;
	log_debug("conn %" PRIu64 ": open (pid %d, uid %u)", conn->id, (int)conn->peer_pid,
		  (unsigned)conn->peer_uid);
	update_events(conn);
	return 0;
fail_unpacker:
	msgpack_zone_destroy(&conn->zone);
fail_rx:
	rxbuf_unref(conn->rx);
fail_free:
	free(conn);
fail_uid:
	access_conn_close(&d->access, peer.uid);
	d->stats.users = d->access.nusers;
	close(fd);
	return r;
}

struct conn *conn_ref(struct conn *conn)
{
	conn->refs++;
	return conn;
}

void conn_unref(struct conn *conn)
{
	if (!conn || --conn->refs > 0)
		return;
	msgpack_zone_destroy(&conn->zone);
	rxbuf_unref(conn->rx);
	free(conn->out);
	free(conn);
}

static void on_poll_closed(uv_handle_t *handle)
{
	struct conn *conn = handle->data;

	close(conn->fd);
	conn_unref(conn);
}

static void on_timer_closed(uv_handle_t *handle)
{
	conn_unref(handle->data);
}

void conn_close(struct conn *conn)
{
	struct vkrd *d = conn->d;

	if (conn->closing)
		return;
	conn->closing = true;
	log_debug("conn %" PRIu64 ": closed", conn->id);
	batch_drop_conn(d->batch, conn);
	d->stats.regions -= conn->regions.count;
	d->stats.region_bytes -= conn->regions.bytes;
	for (size_t i = 0; i < conn->regions.count; i++)
		d->stats.regions_imported -= conn->regions.regions[i]->imported;
	/* The uid's quota is free again at once; the pages stay mapped until work that still
	 * uses them completes (the jobs hold references). */
	access_shm_release(&d->access, conn->peer_uid, conn->regions.bytes);
	shm_table_finish(&conn->regions);
	if (conn->uid_counted) {
		access_conn_close(&d->access, conn->peer_uid);
		conn->uid_counted = false;
	}
	d->stats.users = d->access.nusers;
	/* Unsent replies and an unfinished message are discarded: the memory they held is free. */
	d->stats.memory_bytes -= conn->out_len - conn->out_off;
	release_unfinished(conn);
	if (conn->waiting_memory) {
		waiting_remove(conn);
		conn->waiting_memory = false;
		d->stats.connections_waiting_memory--;
	}
	conn->out_off = conn->out_len = 0;
	for (unsigned i = 0; i < conn->nfds; i++)
		close(conn->fds[i].fd);
	conn->nfds = 0;
	if (conn->prev)
		conn->prev->next = conn->next;
	else
		d->conns = conn->next;
	if (conn->next)
		conn->next->prev = conn->prev;
	conn->prev = conn->next = NULL;
	d->stats.connections--;
	uv_poll_stop(&conn->poll);
	uv_close((uv_handle_t *)&conn->poll, on_poll_closed);
	uv_close((uv_handle_t *)&conn->soft_timer, on_timer_closed);
	/* A slot is free again if running out of fds had paused accepting. */
	server_resume(d->server);
}

void conn_close_all(struct vkrd *d)
{
	while (d->conns)
		conn_close(d->conns);
}

static void update_events(struct conn *conn)
{
	int events = 0;

	if (conn->closing)
		return;
	if (!conn->close_after_flush && !conn->read_eof && !conn->waiting_memory &&
	    conn->out_len - conn->out_off < conn->d->limits.output_pause_bytes)
		events |= UV_READABLE;
	if (conn->out_len > conn->out_off)
		events |= UV_WRITABLE;
	/* Unread while waiting for memory, a peer that goes away would not be noticed. */
	if (conn->waiting_memory && !conn->waiting_rdhup)
		events |= UV_DISCONNECT;
	if (events == conn->events)
		return;
	conn->events = events;
	if (events) {
		int r = uv_poll_start(&conn->poll, events, on_poll);
		if (r)
			log_warn("conn %" PRIu64 ": uv_poll_start: %s", conn->id, uv_strerror(r));
	} else {
		uv_poll_stop(&conn->poll);
	}
}

static void close_slow(struct conn *conn, const char *why)
{
	conn->d->stats.slow_reader_closes++;
	if (log_ratelimit_ok(&slow_rl))
		log_warn("conn %" PRIu64 " (pid %d): %zu reply bytes unread (%s); closing", conn->id,
			 (int)conn->peer_pid, conn->out_len - conn->out_off, why);
	conn_close(conn);
}

bool conn_memory_spent(const struct vkrd *d, uint64_t charged, uint64_t already)
{
	uint64_t used = d->stats.memory_bytes, max = d->limits.max_memory_bytes;
	return used > already && (used > max || charged > max - used);
}

bool conn_close_stalled(struct vkrd *d, const struct conn *except)
{
	const struct limits *l = &d->limits;
	uint64_t now_ms = uv_now(d->loop), soft_ms = l->output_soft_seconds * UINT64_C(1000), most = 0;
	struct conn *stalled = NULL;
	bool sender = false;

	/* Without this, connections that stop reading just below output_soft_bytes, where no
	 * timer closes them, could hold the whole budget and leave every other client "busy"
	 * for as long as they stay connected; so could clients that send the start of large
	 * messages and no more. Only a reader the daemon has stopped reading, and that has
	 * taken nothing for the soft time, or a sender that sent nothing for it, is chosen. */
	for (struct conn *c = d->conns; c; c = c->next) {
		uint64_t unsent = c->out_len - c->out_off;
		if (c == except || c->closing)
			continue;
		if (unsent > l->output_pause_bytes && unsent > most && now_ms - c->written_ms >= soft_ms) {
			stalled = c;
			most = unsent;
			sender = false;
		}
		if (c->rx_charged > most && (c->events & UV_READABLE) && now_ms - c->received_ms >= soft_ms) {
			stalled = c;
			most = c->rx_charged;
			sender = true;
		}
	}
	if (!stalled)
		return false;
	if (sender) {
		d->stats.stalled_sender_closes++;
		if (log_ratelimit_ok(&slow_rl))
			log_warn("conn %" PRIu64 " (pid %d): %" PRIu64 " bytes of an unfinished message, nothing "
				 "sent for output_soft_seconds while max_memory_bytes is spent; closing",
				 stalled->id, (int)stalled->peer_pid, stalled->rx_charged);
		conn_close(stalled);
	} else {
		close_slow(stalled, "not reading while the daemon's max_memory_bytes is spent");
	}
	return true;
}

/* Grows the unfinished message's charge to need bytes, where make_room by closing stalled
 * connections if the budget is spent. Returns false, charging nothing, where it still does
 * not fit. */
static bool charge_unfinished(struct conn *conn, uint64_t need, bool make_room)
{
	struct vkrd *d = conn->d;
	uint64_t extra = need - conn->rx_charged;
	bool spent = conn_memory_spent(d, extra, conn->rx_charged);

	while (spent && make_room && conn_close_stalled(d, conn))
		spent = conn_memory_spent(d, extra, conn->rx_charged);
	if (spent)
		return false;
	d->stats.memory_bytes += extra;
	conn->rx_charged = need;
	conn->received_ms = uv_now(d->loop); /* stalled only from here on */
	return true;
}

static void set_waiting_memory(struct conn *conn, bool waiting)
{
	struct vkrd *d = conn->d;

	if (conn->waiting_memory == waiting)
		return;
	conn->waiting_memory = waiting;
	if (waiting) {
		d->stats.memory_waits++;
		d->stats.connections_waiting_memory++;
		conn->waiting_next = NULL;
		if (d->waiting_last)
			d->waiting_last->waiting_next = conn;
		else
			d->waiting_first = conn;
		d->waiting_last = conn;
		d->memory_refused_at = d->stats.memory_bytes;
	} else {
		d->stats.connections_waiting_memory--;
		waiting_remove(conn);
		conn->waiting_rdhup = false;
	}
	update_events(conn);
	/* Retried at every turn of the loop where memory was freed (conn_admit_waiting); the
	 * timer makes sure of a try each second, which closes stalled holders once they have
	 * been stalled for the soft time, even where nothing else happens. The output's soft
	 * timer, when it runs, has the same callback. */
	if (!conn->soft_since_ns) {
		if (waiting)
			uv_timer_start(&conn->soft_timer, on_soft_timer, 1000, 1000);
		else
			uv_timer_stop(&conn->soft_timer);
	}
}

void conn_admit_waiting(struct vkrd *d, bool make_room)
{
	struct conn *c;

	if (!d->waiting_first || (!make_room && d->stats.memory_bytes >= d->memory_refused_at))
		return;
	/* Oldest first, and none past one that does not fit, so that a large message is not
	 * starved by smaller ones behind it. rx_wanted was known when it stopped: its buffer has
	 * not changed since. */
	while ((c = d->waiting_first)) {
		if (!charge_unfinished(c, c->rx_wanted, make_room)) {
			d->memory_refused_at = d->stats.memory_bytes;
			return;
		}
		set_waiting_memory(c, false); /* the poll, level-triggered, reads what waits */
	}
}

static void on_soft_timer(uv_timer_t *timer)
{
	struct conn *conn = timer->data;

	if (conn->closing)
		return;
	/* flush() stops the timer when the backlog drains, so firing means it did not. */
	if (conn->soft_since_ns != 0)
		close_slow(conn, "above output_soft_bytes for output_soft_seconds");
	else if (conn->waiting_memory)
		conn_admit_waiting(conn->d, true); /* each second: see set_waiting_memory */
}

/* Redis's client output buffer limits: a reader that falls behind by more than the hard
 * limit, or by more than the soft limit for longer than the soft time, is closed, so that
 * the memory held for one client stays bounded and a merely bursty reader is not. */
static void check_output(struct conn *conn)
{
	const struct limits *l = &conn->d->limits;
	uint64_t unsent = conn->out_len - conn->out_off;
	uint64_t now;

	if (unsent > l->max_output_bytes) {
		close_slow(conn, "max_output_bytes");
		return;
	}
	if (unsent <= l->output_soft_bytes) {
		if (conn->soft_since_ns) {
			conn->soft_since_ns = 0;
			if (conn->waiting_memory)
				uv_timer_start(&conn->soft_timer, on_soft_timer, 1000, 1000);
			else
				uv_timer_stop(&conn->soft_timer);
		}
		return;
	}
	now = vkrd_now_ns();
	if (!conn->soft_since_ns) {
		conn->soft_since_ns = now;
		/* A timer as well, for a reader that stalls when no further replies come. */
		uv_timer_start(&conn->soft_timer, on_soft_timer, l->output_soft_seconds * 1000, 0);
	} else if (now - conn->soft_since_ns >= l->output_soft_seconds * UINT64_C(1000000000)) {
		close_slow(conn, "above output_soft_bytes for output_soft_seconds");
	}
}

/* Writes buffered replies until the socket would block. */
static void flush(struct conn *conn)
{
	while (!conn->closing && conn->out_len > conn->out_off) {
		ssize_t n = send(conn->fd, conn->out + conn->out_off, conn->out_len - conn->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			log_debug("conn %" PRIu64 ": send: %s", conn->id, strerror(errno));
			conn_close(conn);
			return;
		}
		conn->out_off += (size_t)n;
		conn->written_ms = uv_now(conn->poll.loop);
		conn->d->stats.bytes_out += (uint64_t)n;
		conn->d->stats.memory_bytes -= (uint64_t)n;
	}
	if (conn->closing)
		return;
	check_output(conn);
	if (conn->closing)
		return;
	if (conn->out_off == conn->out_len) {
		conn->out_off = conn->out_len = 0;
		/* After the peer's EOF the connection lives on until its last request in
		 * flight is answered and written (PROTOCOL.md: one response per request). */
		if (conn->close_after_flush || (conn->read_eof && conn->requests_in_flight == 0)) {
			conn_close(conn);
			return;
		}
	}
	update_events(conn);
}

void conn_flush_dirty(struct vkrd *d)
{
	while (d->dirty) {
		struct conn *conn = d->dirty;
		d->dirty = conn->dirty_next;
		conn->dirty_next = NULL;
		conn->in_dirty_list = false;
		flush(conn);
		conn_unref(conn);
	}
}

msgpack_packer *conn_reply_begin(struct conn *conn, uint32_t msgid)
{
	msgpack_pack_array(&conn->packer, 4);
	msgpack_pack_uint32(&conn->packer, 1);
	msgpack_pack_uint32(&conn->packer, msgid);
	msgpack_pack_nil(&conn->packer);
	return &conn->packer;
}

void conn_reply_end(struct conn *conn)
{
	struct vkrd *d = conn->d;

	if (conn->closing)
		return;
	if (conn->out_failed) {
		log_warn("conn %" PRIu64 ": out of memory buffering a reply; closing", conn->id);
		conn_close(conn);
		return;
	}
	/* A client that never reads must not make the daemon's memory grow without bound. */
	check_output(conn);
	if (conn->closing)
		return;
	if (!conn->in_dirty_list) {
		conn->in_dirty_list = true;
		conn->dirty_next = d->dirty;
		d->dirty = conn_ref(conn);
	}
}

void conn_reply_error(struct conn *conn, uint32_t msgid, int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int n;

	stats_count_error(&conn->d->stats, code);
	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(msg))
		n = sizeof(msg) - 1;
	log_debug("conn %" PRIu64 ": msgid %u: error %d (%s): %s", conn->id, msgid, code,
		  proto_error_name(code) ? proto_error_name(code) : "?", msg);
	msgpack_pack_array(&conn->packer, 4);
	msgpack_pack_uint32(&conn->packer, 1);
	msgpack_pack_uint32(&conn->packer, msgid);
	msgpack_pack_array(&conn->packer, 2);
	msgpack_pack_int(&conn->packer, code);
	msgpack_pack_str(&conn->packer, (size_t)n);
	msgpack_pack_str_body(&conn->packer, msg, (size_t)n);
	msgpack_pack_nil(&conn->packer);
	conn_reply_end(conn);
}

static void protocol_error(struct conn *conn, const char *what, const void *sample, size_t len)
{
	char text[200];

	conn->d->stats.protocol_errors++;
	if (log_ratelimit_ok(&bad_input_rl)) {
		log_sanitize(sample, len < 48 ? len : 48, text, sizeof(text));
		log_warn("conn %" PRIu64 " (pid %d): %s; closing. First bytes: \"%s\"", conn->id,
			 (int)conn->peer_pid, what, text);
	}
	/* Let an error reply already buffered go out first. */
	conn->close_after_flush = true;
}

/* Decodes and dispatches every complete message buffered. */
static void process(struct conn *conn)
{
	struct vkrd *d = conn->d;
	struct frame_limits fl = {
		.max_str_bin = d->limits.max_inline_bytes,
		.max_message = d->limits.max_inline_bytes + FRAME_SLACK,
		.max_objects = FRAME_OBJECTS_MAX,
		.max_depth = FRAME_DEPTH_MAX,
	};

	while (!conn->closing && !conn->close_after_flush) {
		const char *data = conn->rx->data + conn->rx_off;
		size_t len = conn->rx_len - conn->rx_off;
		struct frame_info info;
		enum frame_status st;
		msgpack_object obj;
		int fds[CONN_MAX_PENDING_FDS];
		unsigned nfds = 0;
		size_t off = 0;
		uint64_t end;
		int r;

		if (len == 0)
			return;
		/* A charged (large) message goes the framed way, where its charge is released
		 * once it is complete, just before dispatch charges its request. */
		if (conn->nfds == 0 && conn->rx_charged == 0 &&
		    (off = dispatch_fast_reduce(conn, data, len, conn->rx)) > 0) {
			conn->rx_off += off;
			conn->msg_start += off;
			continue;
		}
		st = frame_scan(data, len, &fl, &info);
		if (st == FRAME_NEED_MORE)
			return;
		if (st != FRAME_COMPLETE) {
			/* Only a size refusal has a declared size to name; the others name their limit. */
			if (info.has_msgid) {
				if (st == FRAME_TOO_LARGE)
					conn_reply_error(conn, info.msgid, VKR_WIRE_TOO_LARGE,
							 "message: %s (declared %" PRIu64 " bytes, max_inline_bytes %" PRIu64
							 "); closing the connection", frame_status_str(st), info.declared,
							 d->limits.max_inline_bytes);
				else if (st == FRAME_TOO_DEEP || st == FRAME_TOO_MANY)
					conn_reply_error(conn, info.msgid, VKR_WIRE_INVALID_ARGUMENT,
							 "message: %s (at most %u objects, nested %u deep); closing the connection",
							 frame_status_str(st), fl.max_objects, fl.max_depth);
				else
					conn_reply_error(conn, info.msgid, VKR_WIRE_INVALID_ARGUMENT,
							 "message: %s; closing the connection", frame_status_str(st));
			}
			protocol_error(conn, frame_status_str(st), data, len);
			return;
		}
		/* The objects of the previous message are dead: reuse the zone's memory. Strings
		 * and bins point into the receive buffer. */
		msgpack_zone_clear(&conn->zone);
		r = msgpack_unpack(data, (size_t)info.size, &off, &conn->zone, &obj);
		if (r != MSGPACK_UNPACK_SUCCESS || off != info.size) {
			/* The framer and msgpack-c disagree: treat as malformed. */
			protocol_error(conn, "malformed msgpack", data, len);
			return;
		}
		conn->rx_off += (size_t)info.size;
		release_unfinished(conn); /* its request is charged by dispatch, if at all */
		/* Every fd that came with bytes of this message belongs to it (see PROTOCOL.md:
		 * the fd travels in the same sendmsg as the request). */
		end = conn->msg_start + info.size;
		while (conn->nfds > 0 && conn->fds[0].end <= end) {
			fds[nfds++] = conn->fds[0].fd;
			memmove(conn->fds, conn->fds + 1, --conn->nfds * sizeof(conn->fds[0]));
		}
		conn->msg_start = end;
		if (nfds > 1) {
			for (unsigned i = 0; i < nfds; i++)
				close(fds[i]);
			protocol_error(conn, "more than one fd on one message", NULL, 0);
			return;
		}
		r = dispatch_message(conn, &obj, conn->rx, fds, nfds);
		if (r) {
			protocol_error(conn, "not a msgpack-RPC request", data, len < info.size ? len : info.size);
			return;
		}
	}
}

/* Takes the fds out of a received message. Returns false when the connection must close
 * (truncated control data, more fds than one message may carry). */
static bool take_fds(struct conn *conn, struct msghdr *mh, uint64_t end)
{
	bool ok = !(mh->msg_flags & MSG_CTRUNC);

	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		size_t n;
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (ok && n == 1 && conn->nfds < CONN_MAX_PENDING_FDS) {
				conn->fds[conn->nfds].fd = fd;
				conn->fds[conn->nfds].end = end;
				conn->nfds++;
			} else {
				ok = false;
				close(fd);
			}
		}
	}
	return ok;
}

/* Bytes the first unparsed message is known to need (frame_scan), or 0 where none is
 * unfinished. */
static uint64_t unfinished_need(const struct conn *conn)
{
	const struct limits *l = &conn->d->limits;
	struct frame_limits fl = { l->max_inline_bytes, l->max_inline_bytes + FRAME_SLACK, FRAME_OBJECTS_MAX,
				   FRAME_DEPTH_MAX };
	struct frame_info info;
	size_t unparsed = conn->rx_len - conn->rx_off;

	if (unparsed == 0 || frame_scan(conn->rx->data + conn->rx_off, unparsed, &fl, &info) != FRAME_NEED_MORE)
		return 0;
	return info.need;
}

static void on_readable(struct conn *conn)
{
	struct vkrd *d = conn->d;
	size_t turn = 0;

	while (!conn->closing && !conn->close_after_flush && !conn->read_eof && turn < READ_TURN_MAX) {
		union {
			char buf[CMSG_SPACE(sizeof(int) * CONN_MAX_PENDING_FDS)];
			struct cmsghdr align;
		} control;
		struct iovec iov;
		struct msghdr mh;
		size_t want = RX_MIN_READ;
		ssize_t n;

		/* Read a large message's remaining bytes in few calls: frame_scan has bounded
		 * the message, so this never reserves more than the limit allows, and the
		 * memory budget has admitted it (or the connection waits, unread). */
		uint64_t need = unfinished_need(conn);
		size_t unparsed = conn->rx_len - conn->rx_off;
		if (need > RX_CHUNK && need > conn->rx_charged && !charge_unfinished(conn, need, true)) {
			conn->rx_wanted = need;
			set_waiting_memory(conn, true);
			break;
		}
		if (need > unparsed + want)
			want = (size_t)(need - unparsed);
		if (!rx_reserve(conn, want)) {
			log_warn("conn %" PRIu64 ": out of memory for %zu bytes; closing", conn->id, want);
			conn_close(conn);
			return;
		}
		iov.iov_base = conn->rx->data + conn->rx_len;
		iov.iov_len = conn->rx->cap - conn->rx_len;
		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = control.buf;
		mh.msg_controllen = sizeof(control.buf);
		n = recvmsg(conn->fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			log_debug("conn %" PRIu64 ": recvmsg: %s", conn->id, strerror(errno));
			conn_close(conn);
			return;
		}
		if (!take_fds(conn, &mh, conn->rx_bytes + (uint64_t)n)) {
			/* Closed by flush below, after any error reply already buffered. */
			protocol_error(conn, "truncated or surplus file descriptors", NULL, 0);
			break;
		}
		if (n == 0) {
			/* A peer that closed its socket (POLLHUP: both directions shut) can take no
			 * reply: its queued jobs are dropped before they reach the GPU. One that only
			 * shut its sending side (shutdown(SHUT_WR)) still gets every reply owed, and
			 * flush closes once none is. An unfinished message and its fd go with the
			 * connection either way. */
			struct pollfd hup = { .fd = conn->fd, .events = 0 };
			if (poll(&hup, 1, 0) == 1 && (hup.revents & POLLHUP)) {
				conn_close(conn);
				return;
			}
			log_debug("conn %" PRIu64 ": end of input, %" PRIu64 " requests in flight", conn->id,
				  conn->requests_in_flight);
			conn->read_eof = true;
			release_unfinished(conn); /* an unfinished message can no longer complete */
			break;
		}
		conn->rx_len += (size_t)n;
		conn->rx_bytes += (uint64_t)n;
		conn->received_ms = uv_now(d->loop);
		d->stats.bytes_in += (uint64_t)n;
		turn += (size_t)n;
		process(conn);
		/* Every complete message has taken its fd; the fds left belong to the one
		 * unfinished message, which may carry only one (the whole request comes in one
		 * sendmsg). More would let a client park fds in the daemon and exhaust its
		 * descriptors. */
		if (conn->nfds > 1 && !conn->closing && !conn->close_after_flush) {
			protocol_error(conn, "more than one fd pending on an unfinished message", NULL, 0);
			break;
		}
		/* A short read emptied the socket (the poll is level-triggered): skip the
		 * recvmsg that would only say EAGAIN. */
		if ((size_t)n < iov.iov_len)
			break;
	}
	/* Replies produced by this read go out now rather than a loop turn later. */
	if (!conn->closing) {
		conn_ref(conn);
		flush(conn);
		conn_unref(conn);
	}
}

static void on_poll(uv_poll_t *handle, int status, int events)
{
	struct conn *conn = handle->data;

	if (conn->closing)
		return;
	if (status < 0) {
		log_debug("conn %" PRIu64 ": poll: %s", conn->id, uv_strerror(status));
		conn_close(conn);
		return;
	}
	if ((events & UV_DISCONNECT) && conn->waiting_memory) {
		/* Closed for good (POLLHUP): nothing it sent can be answered. Only its sending side
		 * shut: what it sent is still to be read once it fits; stop watching for this. */
		struct pollfd hup = { .fd = conn->fd, .events = 0 };
		if (poll(&hup, 1, 0) == 1 && (hup.revents & POLLHUP)) {
			conn_close(conn);
			return;
		}
		conn->waiting_rdhup = true;
		update_events(conn);
	}
	uint64_t t0 = vkrd_now_ns();
	struct vkrd *d = conn->d;
	conn_ref(conn);
	if (events & UV_WRITABLE)
		flush(conn);
	if ((events & UV_READABLE) && !conn->closing)
		on_readable(conn);
	conn_unref(conn);
	d->stats.loop_read_ns += vkrd_now_ns() - t0;
}

void conn_finish(struct conn *conn)
{
	if (conn->closing)
		return;
	conn_ref(conn);
	/* Requests the client sent before this point are read and answered (during shutdown,
	 * "shutting down"), so none that reached the socket is dropped unanswered. */
	if (!conn->close_after_flush)
		on_readable(conn);
	if (!conn->closing) {
		conn->close_after_flush = true;
		flush(conn);
	}
	conn_unref(conn);
}
