/* test_notify.c: sd_notify and sd_listen_fds by hand, and the watchdog rule (no daemon). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "notify.h"

#define SEC 1000000000ull

/* Binds a datagram socket at path (or, if path starts with '@', in the abstract namespace). */
static int bind_dgram(const char *path)
{
	struct sockaddr_un addr;
	socklen_t len;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	memcpy(addr.sun_path, path, strlen(path));
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path));
	if (path[0] == '@')
		addr.sun_path[0] = '\0';
	else
		len++;
	assert_int_equal(bind(fd, (struct sockaddr *)&addr, len), 0);
	return fd;
}

static void expect_datagram(int fd, const char *want)
{
	char buf[512];
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);

	assert_true(n >= 0);
	buf[n] = '\0';
	assert_string_equal(buf, want);
}

static void test_notify_send_reaches_path_and_abstract_sockets(void **state)
{
	char path[] = "/tmp/vkr-test-notify-XXXXXX";
	char abstract[64];
	int fd;

	(void)state;
	unsetenv("NOTIFY_SOCKET");
	assert_int_equal(notify_send("READY=1"), 0); /* no manager: nothing to do */

	assert_non_null(mkdtemp(path));
	char sock[128];
	snprintf(sock, sizeof(sock), "%s/notify", path);
	fd = bind_dgram(sock);
	setenv("NOTIFY_SOCKET", sock, 1);
	assert_int_equal(notify_send("READY=1\nSTATUS=serving"), 1);
	expect_datagram(fd, "READY=1\nSTATUS=serving");
	assert_int_equal(notify_sendf("STATUS=%d clients", 3), 1);
	expect_datagram(fd, "STATUS=3 clients");
	close(fd);
	unlink(sock);
	rmdir(path);

	snprintf(abstract, sizeof(abstract), "@vkr-test-notify-%d", (int)getpid());
	fd = bind_dgram(abstract);
	setenv("NOTIFY_SOCKET", abstract, 1);
	assert_int_equal(notify_send("WATCHDOG=1"), 1);
	expect_datagram(fd, "WATCHDOG=1");
	close(fd);

	setenv("NOTIFY_SOCKET", "relative/path", 1);
	assert_int_equal(notify_send("READY=1"), -EINVAL);
	unsetenv("NOTIFY_SOCKET");
}

static void test_notify_listen_fds_only_for_this_pid(void **state)
{
	char pid[32];
	int pair[2], saved;

	(void)state;
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	assert_int_equal(notify_listen_fds(), 0);

	/* Meant for another process: ignored (and left alone). */
	setenv("LISTEN_PID", "1", 1);
	setenv("LISTEN_FDS", "1", 1);
	assert_int_equal(notify_listen_fds(), 0);

	/* Ours, with fd 3 open: counted, made close-on-exec, and the variables removed. Whatever
	 * the process had at fd 3 is kept aside and put back afterwards. */
	saved = fcntl(NOTIFY_LISTEN_FDS_START, F_DUPFD_CLOEXEC, 64);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
	assert_int_equal(dup2(pair[0], NOTIFY_LISTEN_FDS_START), NOTIFY_LISTEN_FDS_START);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	setenv("LISTEN_PID", pid, 1);
	setenv("LISTEN_FDS", "1", 1);
	setenv("LISTEN_FDNAMES", "vkreduced.socket", 1);
	assert_int_equal(notify_listen_fds(), 1);
	assert_true(fcntl(NOTIFY_LISTEN_FDS_START, F_GETFD) & FD_CLOEXEC);
	assert_null(getenv("LISTEN_PID"));
	assert_null(getenv("LISTEN_FDS"));
	assert_null(getenv("LISTEN_FDNAMES"));
	if (pair[0] != NOTIFY_LISTEN_FDS_START)
		close(pair[0]);
	if (pair[1] != NOTIFY_LISTEN_FDS_START)
		close(pair[1]);
	close(NOTIFY_LISTEN_FDS_START);

	/* Malformed values are an error, not a guess. */
	setenv("LISTEN_PID", pid, 1);
	setenv("LISTEN_FDS", "one", 1);
	assert_int_equal(notify_listen_fds(), -EINVAL);
	setenv("LISTEN_PID", "12x", 1);
	assert_int_equal(notify_listen_fds(), -EINVAL);
	/* A listed descriptor that is not open. */
	setenv("LISTEN_PID", pid, 1);
	setenv("LISTEN_FDS", "1", 1);
	assert_int_equal(notify_listen_fds(), -EBADF);
	if (saved >= 0) {
		assert_int_equal(dup2(saved, NOTIFY_LISTEN_FDS_START), NOTIFY_LISTEN_FDS_START);
		close(saved);
	}
}

static void test_notify_watchdog_usec_respects_watchdog_pid(void **state)
{
	char pid[32];

	(void)state;
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
	assert_int_equal(notify_watchdog_usec(), 0);
	setenv("WATCHDOG_USEC", "30000000", 1);
	assert_int_equal(notify_watchdog_usec(), 30000000);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	setenv("WATCHDOG_PID", pid, 1);
	assert_int_equal(notify_watchdog_usec(), 30000000);
	setenv("WATCHDOG_PID", "1", 1);
	assert_int_equal(notify_watchdog_usec(), 0);
	setenv("WATCHDOG_USEC", "soon", 1);
	unsetenv("WATCHDOG_PID");
	assert_int_equal(notify_watchdog_usec(), 0);
	unsetenv("WATCHDOG_USEC");
}

/* The rule that decides whether a GPU that stopped completing work gets the service
 * restarted: the daemon feeds the watchdog when idle or when a batch completed within the
 * interval, and starves it when work is queued or running without completions. */
static void test_notify_watchdog_fed_when_idle_or_progressing_starved_when_stuck(void **state)
{
	const uint64_t interval = 30 * SEC, now = 1000 * SEC;

	(void)state;
	/* Idle: nothing owed to the GPU; fed even if nothing ever completed. */
	assert_true(notify_watchdog_should_feed(true, 0, now, interval));
	/* Busy and completing. */
	assert_true(notify_watchdog_should_feed(false, now - SEC, now, interval));
	/* Busy, the last completion a whole interval ago: stuck. */
	assert_false(notify_watchdog_should_feed(false, now - interval, now, interval));
	assert_false(notify_watchdog_should_feed(false, now - 2 * interval, now, interval));
	/* Busy and never completed anything (the first batch hangs). */
	assert_false(notify_watchdog_should_feed(false, 0, now, interval));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_notify_send_reaches_path_and_abstract_sockets),
		cmocka_unit_test(test_notify_listen_fds_only_for_this_pid),
		cmocka_unit_test(test_notify_watchdog_usec_respects_watchdog_pid),
		cmocka_unit_test(test_notify_watchdog_fed_when_idle_or_progressing_starved_when_stuck),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
