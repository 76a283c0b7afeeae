/*
 * fuzz_dispatch.c: libFuzzer harness over the daemon's whole input path: recvmsg, framing
 * (frame.c), the msgpack-c unpacker, the envelope and method table (dispatch.c), parameter
 * validation (dispatch_params.c), shared-memory checks (shm.c), batching and completion
 * (batch.c) on a real device (lavapipe), and the replies (conn.c).
 *
 * Each input is one client's byte stream, sent over a socketpair to a connection made with
 * conn_create(), exactly as an accepted client's. The first byte chooses whether a memfd
 * travels with the stream (SCM_RIGHTS on the first sendmsg), so that register_shm and the
 * region paths are reached: 0 none, 1 a sealed 64 KiB memfd, 2 an unsealed one, 3 a pipe.
 * The daemon state (device, loop, batch) lives across inputs, as in the real daemon; every
 * connection must be gone and every byte of memory accounted for after each input.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include "batch.h"
#include "conn.h"
#include "daemon.h"
#include "gpu.h"
#include "log.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct vkrd d;
static uv_loop_t loop;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[256];

	(void)argc;
	(void)argv;
	log_set_level(LOG_LEVEL_ERROR);
	limits_init(&d.limits);
	/* Small rings and messages: the fuzzer explores shapes, not sizes, and stays fast. */
	d.limits.max_inline_bytes = 1 << 20;
	d.limits.upload_ring_bytes = 1 << 20;
	d.limits.readback_ring_bytes = 1 << 20;
	d.limits.scratch_ring_bytes = 1 << 20;
	d.limits.max_shm_bytes_per_conn = 1 << 20;
	setenv("VKR_PIN_DRIVER", "1", 0);
	if (gpu_create(NULL, &d.gpu, err, sizeof(err))) {
		fprintf(stderr, "fuzz_dispatch: no device: %s\n", err);
		abort();
	}
	if (uv_loop_init(&loop))
		abort();
	d.loop = &loop;
	if (batch_create(&d, &d.batch, err, sizeof(err))) {
		fprintf(stderr, "fuzz_dispatch: batch: %s\n", err);
		abort();
	}
	return 0;
}

static int make_fd(uint8_t kind)
{
	int fd, p[2];

	if (kind == 3) {
		if (pipe2(p, O_CLOEXEC))
			abort();
		close(p[1]);
		return p[0];
	}
	fd = memfd_create("fuzz", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0 || ftruncate(fd, 65536))
		abort();
	for (int i = 0; i < 65536; i += 4096) {
		uint32_t v = (uint32_t)i;
		if (pwrite(fd, &v, sizeof(v), i) != (ssize_t)sizeof(v))
			abort();
	}
	if (kind == 1 && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW))
		abort();
	return fd;
}

/* Reads and discards what the daemon replied, so that it never stops on a full socket. */
static void drain(int fd)
{
	char buf[65536];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

/* Sends the stream (with an fd on the first chunk) while running the loop, so that a
 * stream larger than the socket buffer still gets through. */
static void feed(int peer, const uint8_t *data, size_t size, int fd)
{
	size_t off = 0;
	int spins = 0;

	while (off < size && spins < 100000) {
		union {
			char buf[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} control;
		struct iovec iov = { (void *)(data + off), size - off };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t n;

		if (fd >= 0) {
			memset(&control, 0, sizeof(control));
			mh.msg_control = control.buf;
			mh.msg_controllen = sizeof(control.buf);
			struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
			c->cmsg_level = SOL_SOCKET;
			c->cmsg_type = SCM_RIGHTS;
			c->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(c), &fd, sizeof(int));
		}
		n = sendmsg(peer, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			off += (size_t)n;
			fd = -1;
		} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
			return; /* the daemon closed the connection */
		}
		uv_run(&loop, UV_RUN_NOWAIT);
		drain(peer);
		spins++;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int sv[2], fd = -1;
	uint8_t kind;

	if (size < 1)
		return 0;
	kind = data[0] & 3;
	data++;
	size--;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv))
		abort();
	if (conn_create(&d, sv[0]))
		abort();
	if (kind)
		fd = make_fd(kind);
	if (size > 0 || fd >= 0)
		feed(sv[1], data, size, fd);
	if (fd >= 0)
		close(fd);
	/* Let every accepted request complete and be answered. */
	for (int i = 0; i < 100000 && (!batch_idle(d.batch) || i < 3); i++) {
		uv_run(&loop, batch_idle(d.batch) ? UV_RUN_NOWAIT : UV_RUN_ONCE);
		drain(sv[1]);
	}
	if (!batch_idle(d.batch))
		abort(); /* a request that never completes */
	/* The client goes away; the daemon must notice and free everything. */
	close(sv[1]);
	for (int i = 0; i < 1000 && d.conns; i++)
		uv_run(&loop, UV_RUN_NOWAIT);
	uv_run(&loop, UV_RUN_NOWAIT); /* close callbacks */
	if (d.conns || d.stats.connections != 0 || d.stats.regions != 0 || d.stats.memory_bytes != 0 ||
	    d.access.nusers != 0) {
		fprintf(stderr, "fuzz_dispatch: state left after the client went away\n");
		abort();
	}
	return 0;
}
