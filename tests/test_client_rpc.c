/*
 * test_client_rpc.c: libvkreduce against a scripted fake daemon (a thread on a temporary
 * socket), to pin down the transport: replies matched by msgid in any order, wire errors
 * with their messages, and a daemon that sends garbage, wrong result types or hangs up,
 * which must fail the affected calls and never crash the client.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <msgpack.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "vkreduce.h"

struct fake;
typedef void (*script_fn)(struct fake *f);

struct fake {
	char dir[32], path[64];
	int lfd, cfd;
	pthread_t thread;
	script_fn script;
	msgpack_unpacker unp;
	msgpack_unpacked msg;
	int got_fd; /* an fd received with a request, or -1 */
	int got_fd_seals;
	bool refuse_shm;    /* script_arena: answer register_shm with "shared memory rejected" */
	int shm_seen, inline_seen; /* script_arena: reduce inputs by where they were */
	int hold[2]; /* a pipe: a script waits at fake_wait_for_test until the test writes to it */
	/* script_echo: the last register_shm ended the bytes read with its fd (nothing queued
	 * behind it rode in the same sendmsg, which would give the daemon the fd with that). */
	bool register_ended_fd_chunk;
};

/* Reads one whole request (blocking); returns its msgid and method, or false at EOF. */
static bool fake_read(struct fake *f, uint32_t *msgid, char *method, size_t msize)
{
	for (;;) {
		if (msgpack_unpacker_next(&f->unp, &f->msg) == MSGPACK_UNPACK_SUCCESS) {
			msgpack_object *a = f->msg.data.via.array.ptr;
			*msgid = (uint32_t)a[1].via.u64;
			snprintf(method, msize, "%.*s", (int)a[2].via.str.size, a[2].via.str.ptr);
			return true;
		}
		msgpack_unpacker_reserve_buffer(&f->unp, 65536);
		char ctrl[CMSG_SPACE(sizeof(int))];
		struct iovec iov = { msgpack_unpacker_buffer(&f->unp),
		                     msgpack_unpacker_buffer_capacity(&f->unp) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctrl,
		                     .msg_controllen = sizeof(ctrl) };
		ssize_t r = recvmsg(f->cfd, &mh, 0);
		if (r <= 0)
			return false;
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		if (cm && cm->cmsg_type == SCM_RIGHTS) {
			memcpy(&f->got_fd, CMSG_DATA(cm), sizeof(int));
			f->got_fd_seals = fcntl(f->got_fd, F_GET_SEALS);
		}
		msgpack_unpacker_buffer_consumed(&f->unp, (size_t)r);
	}
}

static void fake_send(struct fake *f, const msgpack_sbuffer *sb)
{
	size_t off = 0;
	while (off < sb->size) {
		ssize_t w = send(f->cfd, sb->data + off, sb->size - off, MSG_NOSIGNAL);
		if (w <= 0)
			return;
		off += (size_t)w;
	}
}

/* A response being built: [1, msgid, then the error and the result packed by the caller. */
struct reply {
	msgpack_sbuffer sb;
	msgpack_packer pk;
};

static void reply_begin(struct reply *r, uint32_t msgid)
{
	msgpack_sbuffer_init(&r->sb);
	msgpack_packer_init(&r->pk, &r->sb, msgpack_sbuffer_write);
	msgpack_pack_array(&r->pk, 4);
	msgpack_pack_int(&r->pk, 1);
	msgpack_pack_uint32(&r->pk, msgid);
}

static void reply_send(struct fake *f, struct reply *r)
{
	fake_send(f, &r->sb);
	msgpack_sbuffer_destroy(&r->sb);
}

/* Sends [1, msgid, nil, {k1: v1, k2: v2}] with unsigned values. */
static void reply_map2(struct fake *f, uint32_t msgid, const char *k1, uint64_t v1, const char *k2,
                       uint64_t v2)
{
	struct reply r;
	reply_begin(&r, msgid);
	msgpack_pack_nil(&r.pk);
	msgpack_pack_map(&r.pk, 2);
	msgpack_pack_str_with_body(&r.pk, k1, strlen(k1));
	msgpack_pack_uint64(&r.pk, v1);
	msgpack_pack_str_with_body(&r.pk, k2, strlen(k2));
	msgpack_pack_uint64(&r.pk, v2);
	reply_send(f, &r);
}

/* Sends [1, msgid, nil, {"value": v, "count": 1}]. */
static void reply_value(struct fake *f, uint32_t msgid, uint64_t v)
{
	reply_map2(f, msgid, "value", v, "count", 1);
}

/* Sends [1, msgid, nil, {"region": region, "size": size}]. */
static void reply_region(struct fake *f, uint32_t msgid, uint64_t region, uint64_t size)
{
	reply_map2(f, msgid, "region", region, "size", size);
}

static void reply_error(struct fake *f, uint32_t msgid, int code, const char *msg)
{
	struct reply r;
	reply_begin(&r, msgid);
	msgpack_pack_array(&r.pk, 2);
	msgpack_pack_int(&r.pk, code);
	msgpack_pack_str_with_body(&r.pk, msg, strlen(msg));
	msgpack_pack_nil(&r.pk);
	reply_send(f, &r);
}

static void reply_str(struct fake *f, uint32_t msgid, const char *s)
{
	struct reply r;
	reply_begin(&r, msgid);
	msgpack_pack_nil(&r.pk);
	msgpack_pack_str_with_body(&r.pk, s, strlen(s));
	reply_send(f, &r);
}

static void *fake_main(void *arg)
{
	struct fake *f = arg;
	f->cfd = accept(f->lfd, NULL, NULL);
	if (f->cfd >= 0) {
		f->script(f);
		close(f->cfd);
	}
	return NULL;
}

static vkr_client *fake_start(struct fake *f, script_fn script)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	vkr_client *c;

	memset(f, 0, sizeof(*f));
	f->got_fd = -1;
	f->script = script;
	strcpy(f->dir, "/tmp/vkr-rpc-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/s", f->dir);
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", f->path);
	f->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(f->lfd >= 0);
	assert_int_equal(bind(f->lfd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	assert_int_equal(listen(f->lfd, 4), 0);
	assert_int_equal(pipe(f->hold), 0);
	assert_true(msgpack_unpacker_init(&f->unp, 65536));
	msgpack_unpacked_init(&f->msg);
	assert_int_equal(pthread_create(&f->thread, NULL, fake_main, f), 0);
	assert_int_equal(vkr_connect(f->path, &c), 0);
	return c;
}

static void fake_stop(struct fake *f, vkr_client *c)
{
	vkr_close(c);
	pthread_join(f->thread, NULL);
	close(f->lfd);
	if (f->got_fd >= 0)
		close(f->got_fd);
	close(f->hold[0]);
	close(f->hold[1]);
	msgpack_unpacked_destroy(&f->msg);
	msgpack_unpacker_destroy(&f->unp);
	unlink(f->path);
	rmdir(f->dir);
}

/* Lets a script go on from fake_wait_for_test: the client is where the test wants it. */
static void fake_release(struct fake *f)
{
	assert_int_equal(write(f->hold[1], "", 1), 1);
}

static void fake_wait_for_test(struct fake *f)
{
	char byte;
	(void)!read(f->hold[0], &byte, 1);
}

/* ---- scripts ------------------------------------------------------------------------------- */

static void script_reverse_order(struct fake *f)
{
	uint32_t ids[3];
	char m[32];
	for (int i = 0; i < 3; i++)
		if (!fake_read(f, &ids[i], m, sizeof(m)))
			return;
	for (int i = 2; i >= 0; i--)
		reply_value(f, ids[i], 1000 + ids[i]);
	while (fake_read(f, &ids[0], m, sizeof(m)))
		; /* stay connected until the client closes */
}

struct seen {
	int calls;
	int status;
	uint64_t value;
};

static void on_reduce(vkr_client *c, int status, const vkr_value *v, void *ud)
{
	struct seen *s = ud;
	(void)c;
	s->calls++;
	s->status = status;
	s->value = v ? v->u64 : 0;
}

static void test_replies_in_any_order_reach_their_own_callbacks(void **state)
{
	struct fake f;
	struct seen s[3] = { 0 };
	uint64_t x = 5;
	(void)state;
	vkr_client *c = fake_start(&f, script_reverse_order);
	for (int i = 0; i < 3; i++)
		assert_int_equal(vkr_reduce_async(c, VKR_OP_SUM, VKR_DTYPE_U64, &x, 1, NULL, on_reduce,
		                                  &s[i]),
		                 0);
	assert_int_equal(vkr_pending(c), 3);
	assert_int_equal(vkr_flush(c, 5000), 0);
	while (vkr_pending(c) > 0)
		assert_true(vkr_dispatch(c, 5000) >= 0);
	/* msgids are handed out from 1 in order of submission. */
	for (int i = 0; i < 3; i++) {
		assert_int_equal(s[i].calls, 1);
		assert_int_equal(s[i].status, 0);
		assert_int_equal(s[i].value, 1000 + (uint64_t)i + 1);
	}
	fake_stop(&f, c);
}

/* Corked requests stay in the send buffer until uncorked, then all go, and are answered. */
static void test_corked_requests_wait_for_uncork(void **state)
{
	struct fake f;
	struct seen s[3] = { 0 };
	uint64_t x = 5;
	(void)state;
	vkr_client *c = fake_start(&f, script_reverse_order);
	assert_int_equal(vkr_cork(c, true), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(vkr_reduce_async(c, VKR_OP_SUM, VKR_DTYPE_U64, &x, 1, NULL, on_reduce,
		                                  &s[i]),
		                 0);
	assert_true(vkr_want_write(c)); /* nothing went out: the socket would have taken it all */
	assert_int_equal(vkr_cork(c, false), 0);
	assert_false(vkr_want_write(c));
	while (vkr_pending(c) > 0)
		assert_true(vkr_dispatch(c, 5000) >= 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(s[i].calls, 1);
		assert_int_equal(s[i].value, 1000 + (uint64_t)i + 1);
	}
	fake_stop(&f, c);
}

static void script_wire_error_then_pong(struct fake *f)
{
	uint32_t id;
	char m[32];
	if (fake_read(f, &id, m, sizeof(m)))
		reply_error(f, id, 2, "params[1]: unknown dtype \"f16\"\x01");
	if (fake_read(f, &id, m, sizeof(m)))
		reply_str(f, id, "pong");
}

static void test_wire_error_gives_code_and_sanitized_message(void **state)
{
	struct fake f;
	vkr_value v;
	float x = 1;
	(void)state;
	vkr_client *c = fake_start(&f, script_wire_error_then_pong);
	assert_int_equal(vkr_reduce(c, VKR_OP_SUM, VKR_DTYPE_F32, &x, 1, NULL, &v),
	                 VKR_EINVALID_ARGUMENT);
	assert_string_equal(vkr_last_error_message(c), "params[1]: unknown dtype \"f16\"?");
	assert_int_equal(vkr_ping(c), 0); /* the connection still serves */
	fake_stop(&f, c);
}

static void script_wrong_types(struct fake *f)
{
	uint32_t id;
	char m[32];
	if (fake_read(f, &id, m, sizeof(m)))
		reply_str(f, id, "not a map"); /* reduce result must be a map */
	if (fake_read(f, &id, m, sizeof(m)))
		reply_value(f, id, (uint64_t)1 << 40); /* does not fit an i32 */
	if (fake_read(f, &id, m, sizeof(m)))
		reply_str(f, id, "pong");
}

static void test_result_of_wrong_shape_fails_only_that_call(void **state)
{
	struct fake f;
	vkr_value v;
	int32_t x = 1;
	(void)state;
	vkr_client *c = fake_start(&f, script_wrong_types);
	assert_int_equal(vkr_reduce(c, VKR_OP_SUM, VKR_DTYPE_I32, &x, 1, NULL, &v), -EPROTO);
	assert_int_equal(vkr_reduce(c, VKR_OP_SUM, VKR_DTYPE_I32, &x, 1, NULL, &v), -EPROTO);
	assert_int_equal(vkr_ping(c), 0);
	fake_stop(&f, c);
}

static void script_garbage(struct fake *f)
{
	uint32_t id;
	char m[32];
	if (fake_read(f, &id, m, sizeof(m))) {
		static const char junk[] = "\xc1\xc1\xc1 this is not msgpack";
		msgpack_sbuffer sb = { .size = sizeof(junk), .data = (char *)junk };
		fake_send(f, &sb);
	}
	while (fake_read(f, &id, m, sizeof(m)))
		;
}

static void test_garbage_from_daemon_fails_calls_with_eproto(void **state)
{
	struct fake f;
	struct seen s = { 0 };
	uint64_t x = 1;
	(void)state;
	vkr_client *c = fake_start(&f, script_garbage);
	assert_int_equal(vkr_reduce_async(c, VKR_OP_SUM, VKR_DTYPE_U64, &x, 1, NULL, on_reduce, &s),
	                 0);
	assert_int_equal(vkr_ping(c), -EPROTO);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.status, -EPROTO);
	/* Once broken, the client says so instead of crashing. */
	assert_int_equal(vkr_ping(c), -EPROTO);
	assert_int_equal(vkr_pending(c), 0);
	fake_stop(&f, c);
}

static void script_unknown_msgid(struct fake *f)
{
	uint32_t id;
	char m[32];
	if (fake_read(f, &id, m, sizeof(m)))
		reply_value(f, id + 100, 1);
	while (fake_read(f, &id, m, sizeof(m)))
		;
}

static void test_reply_to_unknown_msgid_is_a_protocol_error(void **state)
{
	struct fake f;
	(void)state;
	vkr_client *c = fake_start(&f, script_unknown_msgid);
	assert_int_equal(vkr_ping(c), -EPROTO);
	fake_stop(&f, c);
}

static void script_hang_up(struct fake *f)
{
	uint32_t id;
	char m[32];
	fake_read(f, &id, m, sizeof(m));
}

static void test_daemon_hanging_up_fails_calls_with_econnreset(void **state)
{
	struct fake f;
	(void)state;
	vkr_client *c = fake_start(&f, script_hang_up);
	assert_int_equal(vkr_ping(c), -ECONNRESET);
	fake_stop(&f, c);
}

static void script_register(struct fake *f)
{
	uint32_t id;
	char m[32];
	if (!fake_read(f, &id, m, sizeof(m)))
		return;
	reply_region(f, id, strcmp(m, "register_shm") == 0 && f->got_fd >= 0 ? 7 : 0, 4096);
}

/* The sum of a reduce request's u32 input, read from the bin or from the registered memfd,
 * as a daemon would. */
static uint64_t sum_input(struct fake *f, const msgpack_object *src)
{
	uint64_t sum = 0;
	uint32_t x;
	if (src->type == MSGPACK_OBJECT_BIN) {
		f->inline_seen++;
		for (uint32_t i = 0; i + 4 <= src->via.bin.size; i += 4) {
			memcpy(&x, src->via.bin.ptr + i, 4);
			sum += x;
		}
		return sum;
	}
	uint64_t region = 0, offset = 0, count = 0;
	for (uint32_t i = 0; i < src->via.map.size; i++) {
		const msgpack_object_kv *kv = &src->via.map.ptr[i];
		uint64_t v = kv->val.via.u64;
		if (kv->key.via.str.size == 6 && memcmp(kv->key.via.str.ptr, "region", 6) == 0)
			region = v;
		else if (kv->key.via.str.size == 6 && memcmp(kv->key.via.str.ptr, "offset", 6) == 0)
			offset = v;
		else
			count = v;
	}
	if (region != 7 || f->got_fd < 0)
		return 0;
	f->shm_seen++;
	char *map = mmap(NULL, offset + count * 4, PROT_READ, MAP_SHARED, f->got_fd, 0);
	if (map == MAP_FAILED)
		return 0;
	for (uint64_t i = 0; i < count; i++) {
		memcpy(&x, map + offset + i * 4, 4);
		sum += x;
	}
	munmap(map, offset + count * 4);
	return sum;
}

/* Accepts (or refuses) the arena's registration, then answers every reduce with its sum. */
static void script_arena(struct fake *f)
{
	uint32_t id;
	char m[32];
	while (fake_read(f, &id, m, sizeof(m))) {
		if (strcmp(m, "register_shm") == 0) {
			if (f->refuse_shm)
				reply_error(f, id, 6, "shared memory rejected: too large");
			else
				reply_region(f, id, 7, 32768);
		} else {
			reply_value(f, id, sum_input(f, &f->msg.data.via.array.ptr[3].via.array.ptr[2]));
		}
	}
}

/* Pipelines count reduces of n u32 each (input i holds i + 1 everywhere) and checks sums. */
static void reduce_burst(vkr_client *c, int count, size_t n)
{
	static uint32_t in[8][4096];
	struct seen s[8] = { 0 };
	assert_true(count <= 8 && n <= 4096);
	for (int i = 0; i < count; i++) {
		for (size_t k = 0; k < n; k++)
			in[i][k] = (uint32_t)i + 1;
		assert_int_equal(vkr_reduce_async(c, VKR_OP_SUM, VKR_DTYPE_U32, in[i], n, NULL, on_reduce, &s[i]), 0);
	}
	while (vkr_pending(c) > 0)
		assert_true(vkr_dispatch(c, 5000) >= 0);
	for (int i = 0; i < count; i++) {
		assert_int_equal(s[i].calls, 1);
		assert_int_equal(s[i].status, 0);
		assert_int_equal(s[i].value, (uint64_t)(i + 1) * n);
	}
}

/* A 32 KiB arena has two 16 KiB slots. Only inputs sent while other calls are in flight
 * count; once eight have gone inline, a dispatch registers the arena (the reduce calls never
 * block for it); then two of a burst go through it and the rest inline; answered slots are
 * used again; tiny inputs and lone calls stay inline. */
static void test_small_inputs_go_through_the_arena_and_overflow_inline(void **state)
{
	struct fake f;
	(void)state;
	setenv("VKR_CLIENT_ARENA_KIB", "32", 1);
	vkr_client *c = fake_start(&f, script_arena);
	unsetenv("VKR_CLIENT_ARENA_KIB");
	reduce_burst(c, 8, 1000); /* seven eligible (the first had nothing in flight) */
	reduce_burst(c, 3, 1000); /* eligible 8, 9, 10: all inline, registered in the dispatch */
	assert_int_equal(f.shm_seen, 0);
	assert_int_equal(f.inline_seen, 11);
	reduce_burst(c, 5, 1000); /* the first inline (nothing in flight), two slots, two inline */
	assert_int_equal(f.shm_seen, 2);
	assert_int_equal(f.inline_seen, 14);
	reduce_burst(c, 3, 4096); /* the slots were released: used again */
	assert_int_equal(f.shm_seen, 4);
	assert_int_equal(f.inline_seen, 15);
	reduce_burst(c, 3, 100); /* 400 bytes: cheaper inline */
	assert_int_equal(f.inline_seen, 18);
	static uint32_t one[1000];
	vkr_value v;
	for (size_t k = 0; k < 1000; k++)
		one[k] = 3;
	assert_int_equal(vkr_reduce(c, VKR_OP_SUM, VKR_DTYPE_U32, one, 1000, NULL, &v), 0);
	assert_int_equal(v.u64, 3000);
	assert_int_equal(f.inline_seen, 19); /* a lone synchronous call stays inline */
	assert_int_equal(f.shm_seen, 4);
	fake_stop(&f, c);
}

/* An event-driven client whose callbacks send the next requests still gets the arena: its
 * vkr_dispatch registers it. */
struct chain {
	int left, done;
	uint32_t data[1024];
	uint64_t sum;
};

static void on_chained(vkr_client *c, int status, const vkr_value *v, void *ud)
{
	struct chain *ch = ud;
	assert_int_equal(status, 0);
	assert_int_equal(v->u64, ch->sum);
	ch->done++;
	if (ch->left > 0) {
		ch->left--;
		assert_int_equal(vkr_reduce_async(c, VKR_OP_SUM, VKR_DTYPE_U32, ch->data, 1024, NULL, on_chained, ch), 0);
	}
}

static void test_callback_driven_pipeline_gets_the_arena(void **state)
{
	struct fake f;
	static struct chain ch;
	(void)state;
	vkr_client *c = fake_start(&f, script_arena);
	memset(&ch, 0, sizeof(ch));
	for (uint32_t k = 0; k < 1024; k++) {
		ch.data[k] = k;
		ch.sum += k;
	}
	ch.left = 60;
	for (int i = 0; i < 4; i++) /* four in flight; each answer sends the next */
		assert_int_equal(vkr_reduce_async(c, VKR_OP_SUM, VKR_DTYPE_U32, ch.data, 1024, NULL, on_chained, &ch), 0);
	while (vkr_pending(c) > 0)
		assert_true(vkr_dispatch(c, 5000) >= 0);
	assert_int_equal(ch.done, 64);
	assert_true(f.shm_seen > 30);
	assert_int_equal(f.shm_seen + f.inline_seen, 64);
	fake_stop(&f, c);
}

static void script_arena_refused(struct fake *f)
{
	f->refuse_shm = true;
	script_arena(f);
}

/* A daemon that refuses the arena gets every input inline, the answers are the same, and the
 * refusal is not the caller's last error. */
static void test_refused_arena_sends_inline(void **state)
{
	struct fake f;
	(void)state;
	vkr_client *c = fake_start(&f, script_arena_refused);
	reduce_burst(c, 8, 2000);
	reduce_burst(c, 3, 2000);
	reduce_burst(c, 3, 2000);
	reduce_burst(c, 3, 2000);
	assert_int_equal(f.shm_seen, 0);
	assert_int_equal(f.inline_seen, 17);
	assert_string_equal(vkr_last_error_message(c), "");
	fake_stop(&f, c);
}

static void test_register_sends_one_sealed_memfd_with_the_request(void **state)
{
	struct fake f;
	vkr_shm *shm;
	vkr_region r = 0;
	(void)state;
	vkr_client *c = fake_start(&f, script_register);
	assert_int_equal(vkr_shm_create(4096, &shm), 0);
	assert_int_equal(vkr_shm_register(c, shm, true, &r), 0);
	assert_int_equal(r, 7);
	assert_true(f.got_fd_seals >= 0);
	assert_true(f.got_fd_seals & F_SEAL_SHRINK);
	vkr_shm_free(shm);
	fake_stop(&f, c);
}

/* ---- a daemon that answers, then hangs up ------------------------------------------------- */

/* Does what vkreduced does with an inline bin over max_inline_bytes: reads the start of the
 * first request (msgid 1), answers error 3 and closes without reading the rest. */
static void script_too_large_then_hang_up(struct fake *f)
{
	char start[4096];
	if (recv(f->cfd, start, sizeof(start), 0) <= 0)
		return;
	reply_error(f, 1, 3, "params[2]: bin of 8388608 bytes is over max_inline_bytes 65536");
}

/* The same once the test released it: the client's call has returned by then, so the send
 * that fails is a later one. */
static void script_too_large_when_released(struct fake *f)
{
	fake_wait_for_test(f);
	script_too_large_then_hang_up(f);
}

/* Waits (at most 5 s) until the fake daemon has closed its end, reading nothing. */
static void wait_for_hang_up(vkr_client *c)
{
	struct pollfd pfd = { .fd = vkr_get_fd(c), .events = 0 };
	for (int i = 0; i < 500; i++) {
		assert_true(poll(&pfd, 1, 10) >= 0);
		if (pfd.revents & POLLHUP)
			return;
	}
	fail_msg("the fake daemon did not hang up");
}

#define BIG_INPUT_ELEMENTS ((size_t)2 << 20) /* 8 MiB of u32: more than the socket takes */

/* The daemon's answer and its hang-up reach the client together with room to send the rest
 * of the request: the answer must win, not the failed send. */
static void test_answer_before_hang_up_reaches_its_call_not_econnreset(void **state)
{
	struct fake f;
	struct seen s = { 0 };
	uint32_t *big = calloc(BIG_INPUT_ELEMENTS, sizeof(*big));
	(void)state;
	assert_non_null(big);
	vkr_client *c = fake_start(&f, script_too_large_when_released);
	assert_int_equal(vkr_reduce_async(c, VKR_OP_SUM, VKR_DTYPE_U32, big, BIG_INPUT_ELEMENTS, NULL,
	                                  on_reduce, &s),
	                 0);
	assert_true(vkr_want_write(c)); /* the socket took only part of it */
	fake_release(&f);
	wait_for_hang_up(c);
	while (vkr_pending(c) > 0 && vkr_dispatch(c, 5000) >= 0)
		;
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.status, VKR_ETOO_LARGE);
	assert_non_null(strstr(vkr_last_error_message(c), "max_inline_bytes"));
	assert_int_equal(vkr_ping(c), -ECONNRESET);
	free(big);
	fake_stop(&f, c);
}

/* The same through a blocking call, as a caller of vkr_reduce sees it. */
static void test_blocking_call_over_inline_limit_gets_the_daemons_too_large(void **state)
{
	struct fake f;
	vkr_value v;
	uint32_t *big = calloc(BIG_INPUT_ELEMENTS, sizeof(*big));
	(void)state;
	assert_non_null(big);
	vkr_client *c = fake_start(&f, script_too_large_then_hang_up);
	vkr_set_timeout(c, 5000);
	assert_int_equal(vkr_reduce(c, VKR_OP_SUM, VKR_DTYPE_U32, big, BIG_INPUT_ELEMENTS, NULL, &v),
	                 VKR_ETOO_LARGE);
	assert_non_null(strstr(vkr_last_error_message(c), "max_inline_bytes"));
	free(big);
	fake_stop(&f, c);
}

/* Queues a reduce of big (BIG_INPUT_ELEMENTS) whose reply lands in first, and returns once the
 * fake daemon has answered it "too large" and hung up, with the request's tail still unsent. */
static vkr_client *start_too_large_and_hung_up(struct fake *f, uint32_t **big, struct seen *first)
{
	*big = calloc(BIG_INPUT_ELEMENTS, sizeof(**big));
	assert_non_null(*big);
	vkr_client *c = fake_start(f, script_too_large_when_released);
	assert_int_equal(vkr_reduce_async(c, VKR_OP_SUM, VKR_DTYPE_U32, *big, BIG_INPUT_ELEMENTS, NULL,
	                                  on_reduce, first),
	                 0);
	fake_release(f);
	wait_for_hang_up(c);
	return c;
}

/* A send that fails inside vkr_reduce_async runs no callback there: the callbacks run in the
 * next vkr_dispatch, each once, the answered call with its answer. */
static void test_failed_send_in_async_call_leaves_callbacks_to_dispatch(void **state)
{
	struct fake f;
	struct seen s[2] = { 0 };
	uint64_t x = 1;
	uint32_t *big;
	(void)state;
	vkr_client *c = start_too_large_and_hung_up(&f, &big, &s[0]);
	/* Sends the rest of the first request, which fails: the daemon is gone. */
	assert_int_equal(vkr_reduce_async(c, VKR_OP_SUM, VKR_DTYPE_U64, &x, 1, NULL, on_reduce, &s[1]),
	                 0);
	assert_int_equal(s[0].calls + s[1].calls, 0);
	assert_int_equal(vkr_pending(c), 2);
	assert_int_equal(vkr_dispatch(c, 5000), -ECONNRESET);
	assert_int_equal(s[0].calls, 1);
	assert_int_equal(s[0].status, VKR_ETOO_LARGE);
	assert_int_equal(s[1].calls, 1);
	assert_int_equal(s[1].status, -ECONNRESET);
	assert_int_equal(vkr_pending(c), 0);
	assert_int_equal(vkr_dispatch(c, 0), -ECONNRESET);
	assert_int_equal(s[0].calls + s[1].calls, 2);
	free(big);
	fake_stop(&f, c);
}

/* The same for the send of vkr_cork(false), which reports the error. */
static void test_failed_send_in_uncork_leaves_callbacks_to_dispatch(void **state)
{
	struct fake f;
	struct seen s[2] = { 0 };
	uint64_t x = 1;
	uint32_t *big;
	(void)state;
	vkr_client *c = start_too_large_and_hung_up(&f, &big, &s[0]);
	assert_int_equal(vkr_cork(c, true), 0);
	assert_int_equal(vkr_reduce_async(c, VKR_OP_SUM, VKR_DTYPE_U64, &x, 1, NULL, on_reduce, &s[1]),
	                 0);
	assert_int_equal(vkr_cork(c, false), -ECONNRESET);
	assert_int_equal(s[0].calls + s[1].calls, 0);
	assert_int_equal(vkr_pending(c), 2);
	assert_int_equal(vkr_flush(c, 5000), -ECONNRESET);
	assert_int_equal(s[0].calls, 1);
	assert_int_equal(s[0].status, VKR_ETOO_LARGE);
	assert_int_equal(s[1].calls, 1);
	assert_int_equal(s[1].status, -ECONNRESET);
	free(big);
	fake_stop(&f, c);
}

/* ---- callbacks that dispatch -------------------------------------------------------------- */

/* Answers ping with pong, register_shm with region 7 (when an fd came), reduce with 1. */
static void script_echo(struct fake *f)
{
	uint32_t id;
	char m[32];
	while (fake_read(f, &id, m, sizeof(m))) {
		if (strcmp(m, "ping") == 0)
			reply_str(f, id, "pong");
		else if (strcmp(m, "register_shm") == 0) {
			f->register_ended_fd_chunk = f->unp.used == f->unp.off; /* no bytes unparsed */
			reply_region(f, id, f->got_fd >= 0 ? 7 : 0, 4096);
		}
		else
			reply_value(f, id, 1);
	}
}

struct nested {
	int outer_calls, inner_calls;
};

static void on_inner(vkr_client *c, int status, const vkr_value *v, void *ud)
{
	struct nested *n = ud;
	(void)status;
	(void)v;
	n->inner_calls++;
	vkr_close(c); /* refused inside a callback: does nothing */
}

static void on_outer(vkr_client *c, int status, const vkr_value *v, void *ud)
{
	struct nested *n = ud;
	uint64_t x = 1;
	(void)status;
	(void)v;
	n->outer_calls++;
	assert_int_equal(vkr_reduce_async(c, VKR_OP_SUM, VKR_DTYPE_U64, &x, 1, NULL, on_inner, n), 0);
	/* A callback may look for replies without waiting: on_inner runs in here. */
	for (int i = 0; i < 5000 && n->inner_calls == 0; i++) {
		assert_true(vkr_dispatch(c, 0) >= 0);
		usleep(1000);
	}
	assert_int_equal(n->inner_calls, 1);
	/* Still inside this callback once on_inner has returned. */
	assert_int_equal(vkr_ping(c), -EBUSY);
	assert_int_equal(vkr_dispatch(c, 100), -EBUSY);
	assert_int_equal(vkr_dispatch(c, -1), -EBUSY);
	assert_int_equal(vkr_flush(c, 100), -EBUSY);
	vkr_close(c); /* must not free the client that runs this callback */
}

static void test_callback_stays_guarded_after_a_nested_dispatch(void **state)
{
	struct fake f;
	struct nested n = { 0 };
	uint64_t x = 1;
	(void)state;
	vkr_client *c = fake_start(&f, script_echo);
	assert_int_equal(vkr_reduce_async(c, VKR_OP_SUM, VKR_DTYPE_U64, &x, 1, NULL, on_outer, &n), 0);
	while (vkr_pending(c) > 0)
		assert_true(vkr_dispatch(c, 5000) >= 0);
	assert_int_equal(n.outer_calls, 1);
	assert_int_equal(n.inner_calls, 1);
	assert_int_equal(vkr_ping(c), 0); /* the client lives on */
	fake_stop(&f, c);
}

/* ---- error codes -------------------------------------------------------------------------- */

static void script_future_error_code(struct fake *f)
{
	uint32_t id;
	char m[32];
	if (fake_read(f, &id, m, sizeof(m)))
		reply_error(f, id, 11, "a code from a newer daemon");
	while (fake_read(f, &id, m, sizeof(m)))
		;
}

/* Wire codes this library does not know yet are named as the daemon's, not as errno's. */
static void test_unknown_wire_code_is_an_unknown_daemon_error(void **state)
{
	struct fake f;
	(void)state;
	vkr_client *c = fake_start(&f, script_future_error_code);
	int err = vkr_ping(c);
	assert_int_equal(err, -(VKR_ERROR_BASE + 11));
	assert_string_equal(vkr_strerror(err), "unknown daemon error");
	assert_string_equal(vkr_last_error_message(c), "a code from a newer daemon");
	assert_string_equal(vkr_strerror(-(VKR_ERROR_BASE + 3095)), "unknown daemon error");
	assert_string_equal(vkr_strerror(-(VKR_ERROR_BASE + 999999)), "unknown daemon error");
	assert_string_equal(vkr_strerror(VKR_ETOO_LARGE), "too large");
	assert_string_equal(vkr_strerror(-ENOENT), strerror(ENOENT));
	fake_stop(&f, c);
}

/* An inline array that no msgpack bin can carry is too large, as the daemon says of smaller
 * ones, with a message that says what to do; nothing is sent. */
static void test_inline_array_of_4_gib_is_too_large_with_a_message(void **state)
{
	struct fake f;
	struct seen s = { 0 };
	vkr_value v;
	static float four_bytes_read_of_none[1];
	size_t n = (size_t)1 << 30; /* f32: exactly 4 GiB */
	(void)state;
	vkr_client *c = fake_start(&f, script_echo);
	assert_int_equal(vkr_reduce(c, VKR_OP_SUM, VKR_DTYPE_F32, four_bytes_read_of_none, n, NULL,
	                            &v),
	                 VKR_ETOO_LARGE);
	assert_non_null(strstr(vkr_last_error_message(c), "shared memory"));
	assert_int_equal(vkr_reduce_async(c, VKR_OP_SUM, VKR_DTYPE_F32, four_bytes_read_of_none, n,
	                                  NULL, on_reduce, &s),
	                 VKR_ETOO_LARGE);
	assert_int_equal(vkr_scan(c, VKR_OP_SUM, VKR_DTYPE_F64, four_bytes_read_of_none, n / 2, false,
	                          four_bytes_read_of_none),
	                 VKR_ETOO_LARGE);
	assert_int_equal(vkr_pending(c), 0);
	assert_int_equal(s.calls, 0);
	assert_int_equal(vkr_ping(c), 0);
	fake_stop(&f, c);
}

/* ---- a daemon that waits for the client to read ------------------------------------------- */

/* Sends [1, msgid, nil, {"value": 1, "count": 1, "pad": pad_bytes zero bytes}]. */
static void reply_padded(struct fake *f, uint32_t msgid, size_t pad_bytes)
{
	struct reply r;
	char *pad = calloc(1, pad_bytes);
	assert_non_null(pad);
	reply_begin(&r, msgid);
	msgpack_pack_nil(&r.pk);
	msgpack_pack_map(&r.pk, 3);
	msgpack_pack_str_with_body(&r.pk, "value", 5);
	msgpack_pack_uint64(&r.pk, 1);
	msgpack_pack_str_with_body(&r.pk, "count", 5);
	msgpack_pack_uint64(&r.pk, 1);
	msgpack_pack_str_with_body(&r.pk, "pad", 3);
	msgpack_pack_bin_with_body(&r.pk, pad, pad_bytes);
	reply_send(f, &r);
	free(pad);
}

/* Answers the first request with more than the socket holds and reads nothing until the
 * client has read it all, as vkreduced stops reading a connection whose unread replies passed
 * output_pause_bytes; then answers everything. */
static void script_wait_for_the_client_to_read(struct fake *f)
{
	uint32_t id;
	char m[32];
	if (!fake_read(f, &id, m, sizeof(m)))
		return;
	reply_padded(f, id, (size_t)8 << 20);
	script_echo(f);
}

/* Bytes the client sent that the fake daemon has not read yet. */
static int unread_by_daemon(vkr_client *c)
{
	int n = 0;
	assert_int_equal(ioctl(vkr_get_fd(c), SIOCOUTQ, &n), 0);
	return n;
}

static void on_count(vkr_client *c, int status, const vkr_value *v, void *ud)
{
	(void)c;
	(void)v;
	assert_int_equal(status, 0);
	(*(int *)ud)++;
}

/* The first request's callback, run while vkr_shm_register waits for room: queues one more
 * request, which must go out behind the register but not in its sendmsg. */
struct first_then_one {
	struct seen first;
	int *answered;
};

static void on_first_queue_one(vkr_client *c, int status, const vkr_value *v, void *ud)
{
	struct first_then_one *t = ud;
	uint64_t x = 1;
	on_reduce(c, status, v, &t->first);
	assert_int_equal(vkr_reduce_async(c, VKR_OP_SUM, VKR_DTYPE_U64, &x, 1, NULL, on_count, t->answered), 0);
}

/* vkr_shm_register, finding the socket full while the daemon waits for the client to read,
 * reads (and handles replies) while it waits for room; a request a callback queues meanwhile
 * goes out after it, and not with its fd. */
static void test_register_reads_replies_while_it_waits_for_room(void **state)
{
	struct fake f;
	int queued = 0, answered = 0, sndbuf = 0;
	struct first_then_one first = { .answered = &answered };
	socklen_t len = sizeof(sndbuf);
	uint64_t x = 1;
	vkr_shm *shm;
	vkr_region region = 0;
	(void)state;
	vkr_client *c = fake_start(&f, script_wait_for_the_client_to_read);
	vkr_set_timeout(c, 5000);
	assert_int_equal(vkr_reduce_async(c, VKR_OP_SUM, VKR_DTYPE_U64, &x, 1, NULL, on_first_queue_one,
	                                  &first),
	                 0);
	for (int i = 0; i < 5000 && unread_by_daemon(c) > 0; i++)
		usleep(1000);
	assert_int_equal(unread_by_daemon(c), 0); /* it read the request and now sends, not reads */
	/* Fill the socket: each small request goes out whole while there is room at all. */
	assert_int_equal(getsockopt(vkr_get_fd(c), SOL_SOCKET, SO_SNDBUF, &sndbuf, &len), 0);
	while (unread_by_daemon(c) < sndbuf) {
		assert_int_equal(vkr_reduce_async(c, VKR_OP_SUM, VKR_DTYPE_U64, &x, 1, NULL, on_count,
		                                  &answered),
		                 0);
		assert_false(vkr_want_write(c));
		assert_true(++queued < 1000000);
	}
	assert_int_equal(vkr_shm_create(4096, &shm), 0);
	assert_int_equal(vkr_shm_register(c, shm, false, &region), 0);
	assert_int_equal(region, 7);
	while (vkr_pending(c) > 0)
		assert_true(vkr_dispatch(c, 5000) >= 0);
	assert_int_equal(first.first.calls, 1);
	assert_int_equal(first.first.status, 0);
	assert_int_equal(answered, queued + 1);
	assert_true(f.register_ended_fd_chunk);
	vkr_shm_free(shm);
	fake_stop(&f, c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replies_in_any_order_reach_their_own_callbacks),
		cmocka_unit_test(test_corked_requests_wait_for_uncork),
		cmocka_unit_test(test_small_inputs_go_through_the_arena_and_overflow_inline),
		cmocka_unit_test(test_callback_driven_pipeline_gets_the_arena),
		cmocka_unit_test(test_refused_arena_sends_inline),
		cmocka_unit_test(test_wire_error_gives_code_and_sanitized_message),
		cmocka_unit_test(test_result_of_wrong_shape_fails_only_that_call),
		cmocka_unit_test(test_garbage_from_daemon_fails_calls_with_eproto),
		cmocka_unit_test(test_reply_to_unknown_msgid_is_a_protocol_error),
		cmocka_unit_test(test_daemon_hanging_up_fails_calls_with_econnreset),
		cmocka_unit_test(test_register_sends_one_sealed_memfd_with_the_request),
		cmocka_unit_test(test_answer_before_hang_up_reaches_its_call_not_econnreset),
		cmocka_unit_test(test_blocking_call_over_inline_limit_gets_the_daemons_too_large),
		cmocka_unit_test(test_failed_send_in_async_call_leaves_callbacks_to_dispatch),
		cmocka_unit_test(test_failed_send_in_uncork_leaves_callbacks_to_dispatch),
		cmocka_unit_test(test_callback_stays_guarded_after_a_nested_dispatch),
		cmocka_unit_test(test_unknown_wire_code_is_an_unknown_daemon_error),
		cmocka_unit_test(test_inline_array_of_4_gib_is_too_large_with_a_message),
		cmocka_unit_test(test_register_reads_replies_while_it_waits_for_room),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
