/* server.c: listen, refuse a live peer, remove a stale socket, accept. */
#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <uv.h>

#include "conn.h"
#include "daemon.h"
#include "log.h"

struct server {
	struct vkrd *d;        /* borrowed */
	uv_poll_t poll;        /* embedded */
	int fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	dev_t dev;             /* identity of the socket file we created, so that shutdown */
	ino_t ino;             /* never removes a successor's socket */
	bool paused;           /* out of fds, no reserve: accepting stops until a connection closes */
	int reserve_fd;        /* /dev/null, given up at EMFILE to refuse waiting peers (or -1) */
	bool activated;        /* inherited from the service manager, which owns the socket file */
};

static struct log_ratelimit accept_rl = LOG_RATELIMIT_INIT(5);

static int make_addr(const char *path, struct sockaddr_un *addr)
{
	memset(addr, 0, sizeof(*addr));
	addr->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(addr->sun_path))
		return -ENAMETOOLONG;
	memcpy(addr->sun_path, path, strlen(path));
	return 0;
}

/* Whether something accepts connections on path right now. */
static bool path_is_live(const struct sockaddr_un *addr)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool live;

	if (fd < 0)
		return false;
	live = connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) == 0 || errno == EAGAIN;
	close(fd);
	return live;
}

static void on_closed_early(uv_handle_t *handle)
{
	free(handle->data);
}

/* Out of file descriptors: gives up the reserve descriptor to accept each waiting peer and
 * close it at once, then takes the reserve again (libuv's "EMFILE trick"). A peer then sees
 * its connection closed and can say so, instead of waiting in the backlog for a descriptor
 * that may never come. Returns false where there is no reserve to give up or it cannot be
 * taken again; accepting then pauses until a connection closes. */
static bool refuse_waiting_peers(struct server *s)
{
	unsigned refused = 0;

	if (s->reserve_fd < 0)
		s->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC); /* lost at the last refusal */
	if (s->reserve_fd < 0)
		return false;
	close(s->reserve_fd);
	/* At most as many as on_accept takes per turn; the poll, level-triggered, brings the
	 * rest on the next turn. */
	while (refused < 64) {
		int fd = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			break;
		}
		close(fd);
		refused++;
	}
	s->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	s->d->stats.connections_refused += refused;
	if (refused && log_ratelimit_ok(&accept_rl))
		log_warn("out of file descriptors: closed %u new connections at once (see LimitNOFILE, "
			 "max_connections)", refused);
	return s->reserve_fd >= 0;
}

static void on_accept(uv_poll_t *handle, int status, int events)
{
	struct server *s = handle->data;
	struct vkrd *d = s->d;

	(void)events;
	if (status < 0) {
		log_error("listen socket: %s", uv_strerror(status));
		return;
	}
	/* Accept a bounded number per turn so that a connection storm cannot starve clients
	 * that are already connected. */
	for (int i = 0; i < 64; i++) {
		int fd = accept4(s->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			if (log_ratelimit_ok(&accept_rl))
				log_error("accept: %s", strerror(errno));
			/* Out of fds: refuse the waiting peers with the reserve; without one,
			 * level-triggered polling would spin, so stop until a connection closes. */
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
				if ((errno == EMFILE || errno == ENFILE) && refuse_waiting_peers(s))
					return;
				uv_poll_stop(&s->poll);
				s->paused = true;
			}
			return;
		}
		if (d->stats.connections >= d->limits.max_connections || d->shutting_down) {
			d->stats.connections_refused++;
			if (log_ratelimit_ok(&accept_rl))
				log_warn("refusing a connection: %s", d->shutting_down ? "shutting down" :
					 "max_connections reached");
			close(fd);
			continue;
		}
		int r = conn_create(d, fd);
		if (r && log_ratelimit_ok(&accept_rl))
			log_error("connection setup failed: %s", strerror(-r));
	}
}

int server_create(struct vkrd *d, const char *path, mode_t mode, struct server **out, char *err,
		  size_t err_size)
{
	struct sockaddr_un addr;
	struct server *s;
	struct stat st;
	int r;

	*out = NULL;
	if ((r = make_addr(path, &addr))) {
		snprintf(err, err_size, "socket path too long (%zu bytes, at most %zu): %s", strlen(path),
			 sizeof(addr.sun_path) - 1, path);
		return r;
	}
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, err_size, "%s exists and is not a socket; not touching it", path);
			return -EEXIST;
		}
		if (path_is_live(&addr)) {
			snprintf(err, err_size, "another daemon is already listening on %s", path);
			return -EADDRINUSE;
		}
		/* Nobody answers: a daemon died without cleaning up. */
		if (unlink(path) < 0 && errno != ENOENT) {
			r = -errno;
			snprintf(err, err_size, "cannot remove stale socket %s: %s", path, strerror(errno));
			return r;
		}
		log_info("removed stale socket %s", path);
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	s->d = d;
	memcpy(s->path, addr.sun_path, sizeof(s->path));
	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->fd < 0) {
		r = -errno;
		snprintf(err, err_size, "socket: %s", strerror(errno));
		goto fail_free;
	}
	/* Bind under a restrictive umask and chmod afterwards: the socket never exists with a
	 * looser mode than asked for. */
	mode_t old = umask(0177);
	r = bind(s->fd, (struct sockaddr *)&addr, sizeof(addr));
	umask(old);
	if (r < 0) {
		r = -errno;
		snprintf(err, err_size, "bind %s: %s", path, strerror(errno));
		goto fail_close;
	}
	if (chmod(path, mode) < 0 || stat(path, &st) < 0) {
		r = -errno;
		snprintf(err, err_size, "chmod %s: %s", path, strerror(errno));
		goto fail_unlink;
	}
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	if (listen(s->fd, SOMAXCONN) < 0) {
		r = -errno;
		snprintf(err, err_size, "listen %s: %s", path, strerror(errno));
		goto fail_unlink;
	}
	if ((r = uv_poll_init(d->loop, &s->poll, s->fd)) != 0) {
		snprintf(err, err_size, "uv_poll_init: %s", uv_strerror(r));
		goto fail_unlink;
	}
	s->poll.data = s;
	if ((r = uv_poll_start(&s->poll, UV_READABLE, on_accept)) != 0) {
		snprintf(err, err_size, "uv_poll_start: %s", uv_strerror(r));
		uv_close((uv_handle_t *)&s->poll, NULL);
		/* s must outlive the handle's close: leak-free by closing without freeing here
		 * would need the loop; the daemon exits on this error anyway. */
		unlink(path);
		close(s->fd);
		return r;
	}
	s->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	*out = s;
	return 0;
fail_unlink:
	unlink(path);
fail_close:
	close(s->fd);
fail_free:
	free(s);
	return r;
}

int server_adopt(struct vkrd *d, int fd, struct server **out, char *err, size_t err_size)
{
	struct sockaddr_un addr;
	socklen_t len = sizeof(addr);
	struct server *s;
	int type = 0, listening = 0;
	socklen_t optlen = sizeof(int);
	int flags, r;

	*out = NULL;
	/* Check what we were given: a mistaken unit (ListenDatagram=, Accept=yes, a TCP port)
	 * should fail loudly at start, not with odd errors per client. */
	memset(&addr, 0, sizeof(addr));
	if (getsockname(fd, (struct sockaddr *)&addr, &len) < 0 || addr.sun_family != AF_UNIX) {
		snprintf(err, err_size, "socket activation: fd %d is not a Unix socket", fd);
		return -ENOTSOCK;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &optlen) < 0 || type != SOCK_STREAM) {
		snprintf(err, err_size, "socket activation: fd %d is not a stream socket (use ListenStream=)", fd);
		return -EPROTOTYPE;
	}
	optlen = sizeof(int);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &optlen) < 0 || !listening) {
		snprintf(err, err_size, "socket activation: fd %d is not listening (Accept=yes is not supported)", fd);
		return -EINVAL;
	}
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		r = -errno;
		snprintf(err, err_size, "socket activation: fcntl: %s", strerror(errno));
		return r;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	s->d = d;
	s->fd = fd;
	s->activated = true;
	memcpy(s->path, addr.sun_path, sizeof(s->path));
	s->path[sizeof(s->path) - 1] = '\0';
	if ((r = uv_poll_init(d->loop, &s->poll, s->fd)) != 0) {
		snprintf(err, err_size, "uv_poll_init: %s", uv_strerror(r));
		free(s);
		return r;
	}
	s->poll.data = s;
	if ((r = uv_poll_start(&s->poll, UV_READABLE, on_accept)) != 0) {
		snprintf(err, err_size, "uv_poll_start: %s", uv_strerror(r));
		/* The handle is initialized, so only its close callback may free s. */
		s->fd = -1;
		uv_close((uv_handle_t *)&s->poll, on_closed_early);
		return r;
	}
	s->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	*out = s;
	return 0;
}

const char *server_path(const struct server *s)
{
	return s->path[0] ? s->path : "(unnamed socket)";
}

static void on_closed(uv_handle_t *handle)
{
	struct server *s = handle->data;

	close(s->fd);
	if (s->reserve_fd >= 0)
		close(s->reserve_fd);
	free(s);
}

void server_destroy(struct server *s)
{
	struct stat st;

	if (!s)
		return;
	/* A socket-activated listener stays with the service manager, which queues the next
	 * connections for our successor; closing our copy of the fd is all we do. */
	if (!s->activated && stat(s->path, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino)
		unlink(s->path);
	uv_poll_stop(&s->poll);
	uv_close((uv_handle_t *)&s->poll, on_closed);
}

void server_resume(struct server *s)
{
	if (s && s->paused) {
		s->paused = false;
		uv_poll_start(&s->poll, UV_READABLE, on_accept);
	}
}
