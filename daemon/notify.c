/* notify.c: sd_notify and sd_listen_fds by hand, and the status/watchdog timer. */
#include "notify.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <uv.h>

#include "batch.h"
#include "conn.h"
#include "daemon.h"
#include "log.h"

/* ---- sd_notify ------------------------------------------------------------------------- */

/* The datagram socket, opened on first use and kept: the daemon notifies for as long as it
 * runs, and reopening per message would cost a syscall pair per watchdog ping. */
static int notify_fd = -1;

int notify_send(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un addr;
	size_t len;
	socklen_t addr_len;

	if (!path || !*path)
		return 0;
	len = strlen(path);
	/* Absolute paths and abstract names ("@name") only, as sd_notify accepts. */
	if ((path[0] != '/' && path[0] != '@') || len >= sizeof(addr.sun_path))
		return -EINVAL;
	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	memcpy(addr.sun_path, path, len);
	if (path[0] == '@')
		addr.sun_path[0] = '\0';
	/* An abstract address is exactly as long as its name; a path one includes its NUL. */
	addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (path[0] == '/'));
	if (notify_fd < 0) {
		notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (notify_fd < 0)
			return -errno;
	}
	for (;;) {
		ssize_t n = sendto(notify_fd, state, strlen(state), MSG_NOSIGNAL | MSG_DONTWAIT,
				   (const struct sockaddr *)&addr, addr_len);
		if (n >= 0)
			return 1;
		if (errno != EINTR)
			return -errno;
	}
}

int notify_sendf(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	return notify_send(buf);
}

/* ---- sd_listen_fds --------------------------------------------------------------------- */

/* Parses a decimal without sign or trailing bytes. */
static int parse_dec(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

static void unset_listen_env(void)
{
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
}

int notify_listen_fds(void)
{
	uint64_t pid, n;

	if (!getenv("LISTEN_PID"))
		return 0;
	if (parse_dec(getenv("LISTEN_PID"), &pid)) {
		unset_listen_env();
		return -EINVAL;
	}
	/* Meant for someone else (inherited through a fork/exec we did not expect). */
	if (pid != (uint64_t)getpid())
		return 0;
	if (parse_dec(getenv("LISTEN_FDS"), &n) || n > 1024) {
		unset_listen_env();
		return -EINVAL;
	}
	for (int fd = NOTIFY_LISTEN_FDS_START; fd < NOTIFY_LISTEN_FDS_START + (int)n; fd++) {
		int flags = fcntl(fd, F_GETFD);
		/* A listed descriptor that is not open is a broken handover, not a socket. */
		if (flags < 0 || fcntl(fd, F_SETFD, flags | FD_CLOEXEC) < 0) {
			unset_listen_env();
			return -EBADF;
		}
	}
	unset_listen_env();
	return (int)n;
}

uint64_t notify_watchdog_usec(void)
{
	const char *pid_s = getenv("WATCHDOG_PID");
	uint64_t usec, pid;

	if (parse_dec(getenv("WATCHDOG_USEC"), &usec) || usec == 0)
		return 0;
	if (pid_s && (parse_dec(pid_s, &pid) || pid != (uint64_t)getpid()))
		return 0;
	return usec;
}

bool notify_watchdog_should_feed(bool idle, uint64_t last_progress_ns, uint64_t now_ns,
				 uint64_t interval_ns)
{
	if (idle)
		return true;
	return last_progress_ns != 0 && now_ns - last_progress_ns < interval_ns;
}

/* ---- the service timer ----------------------------------------------------------------- */

#define STATUS_PERIOD_NS (1000ull * 1000 * 1000)

struct notify_service {
	struct vkrd *d;             /* borrowed */
	uv_timer_t timer;           /* embedded */
	bool enabled;               /* $NOTIFY_SOCKET is set */
	uint64_t watchdog_ns;       /* WatchdogSec, 0: none */
	uint64_t feed_every_ns;     /* how often to send WATCHDOG=1 while healthy */
	uint64_t last_feed_ns;
	uint64_t last_progress_ns;  /* last batch completion */
	uint64_t last_status_ns;
	uint64_t last_batches;      /* d->stats.batches at last_status_ns */
	char status[256];           /* last STATUS= sent */
};

static void feed(struct notify_service *s, uint64_t now)
{
	int r = notify_send("WATCHDOG=1");

	if (r < 0)
		log_warn("watchdog notification: %s", strerror(-r));
	s->last_feed_ns = now;
}

void notify_status_now(struct notify_service *s, const char *status)
{
	int r;

	if (!s || !s->enabled || strcmp(status, s->status) == 0)
		return;
	snprintf(s->status, sizeof(s->status), "%s", status);
	s->last_status_ns = vkrd_now_ns();
	if ((r = notify_sendf("STATUS=%s", status)) < 0)
		log_warn("status notification: %s", strerror(-r));
}

static void refresh_status(struct notify_service *s, uint64_t now)
{
	struct vkrd *d = s->d;
	uint64_t queued = 0;
	double elapsed = (double)(now - s->last_status_ns) / 1e9;
	double rate = elapsed > 0 ? (double)(d->stats.batches - s->last_batches) / elapsed : 0;
	char text[256];

	/* Requests accepted and not yet answered, over the connections still open. */
	for (const struct conn *c = d->conns; c; c = c->next)
		queued += c->requests_in_flight;
	snprintf(text, sizeof(text), "%s%" PRIu64 " clients, %" PRIu64 " requests queued or running, %.1f batches/s",
		 d->shutting_down ? "draining: " : "", d->stats.connections, queued, rate);
	s->last_batches = d->stats.batches;
	notify_status_now(s, text);
	/* An unchanged text is not resent, but the rate's window still restarts. */
	s->last_status_ns = now;
}

static void on_tick(uv_timer_t *timer)
{
	struct notify_service *s = timer->data;
	uint64_t now = vkrd_now_ns();

	if (s->watchdog_ns && now - s->last_feed_ns >= s->feed_every_ns &&
	    notify_watchdog_should_feed(s->d->batch && batch_idle(s->d->batch), s->last_progress_ns, now,
					s->watchdog_ns))
		feed(s, now);
	if (now - s->last_status_ns >= STATUS_PERIOD_NS)
		refresh_status(s, now);
}

void notify_progress(struct notify_service *s)
{
	uint64_t now;

	if (!s || !s->enabled)
		return;
	now = vkrd_now_ns();
	s->last_progress_ns = now;
	/* Fed here, on the completion path, so that a busy daemon proves the GPU completes work;
	 * rate-limited because completions can come thousands of times a second. */
	if (s->watchdog_ns && now - s->last_feed_ns >= s->feed_every_ns)
		feed(s, now);
}

static void on_timer_closed(uv_handle_t *handle)
{
	free(handle->data);
}

int notify_service_start(struct vkrd *d, struct notify_service **out)
{
	struct notify_service *s = calloc(1, sizeof(*s));
	uint64_t period_ns = STATUS_PERIOD_NS;
	int r;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->d = d;
	s->enabled = getenv("NOTIFY_SOCKET") && *getenv("NOTIFY_SOCKET");
	s->watchdog_ns = s->enabled ? notify_watchdog_usec() * 1000 : 0;
	/* Four pings per interval leave room for a late loop turn, as sd_watchdog_enabled(3)
	 * advises at least two. */
	s->feed_every_ns = s->watchdog_ns / 4;
	if (s->watchdog_ns && s->feed_every_ns < period_ns)
		period_ns = s->feed_every_ns;
	if (period_ns < 1000 * 1000)
		period_ns = 1000 * 1000;
	s->last_status_ns = vkrd_now_ns();
	s->last_batches = d->stats.batches;
	if ((r = uv_timer_init(d->loop, &s->timer))) {
		free(s);
		return r;
	}
	s->timer.data = s;
	if (s->enabled) {
		if ((r = uv_timer_start(&s->timer, on_tick, period_ns / 1000000, period_ns / 1000000))) {
			uv_close((uv_handle_t *)&s->timer, on_timer_closed);
			return r;
		}
		/* The timer must not keep the loop alive during shutdown. */
		uv_unref((uv_handle_t *)&s->timer);
		if (s->watchdog_ns)
			feed(s, vkrd_now_ns());
	}
	*out = s;
	return 0;
}

void notify_service_stop(struct notify_service *s)
{
	if (!s)
		return;
	uv_timer_stop(&s->timer);
	uv_close((uv_handle_t *)&s->timer, on_timer_closed);
}
