/*
 * test_shm_seal_race.c: the truncate-then-seal race in shm_region_create() (daemon/shm.c).
 *
 * The daemon fstat()s the client's memfd, then asks F_GET_SEALS for F_SEAL_SHRINK. The client
 * holds the file too: between those two calls it can shrink the file and only then seal it,
 * so the seal check passes while the size from the first fstat is stale and larger than the
 * file. Mapping and touching that size raises SIGBUS in the daemon. The fix reads the size
 * again once the seals are known; these tests fail (wrong size, or SIGBUS) without it.
 *
 * The client's move has to land exactly between the daemon's two system calls, which a
 * second thread or process could only hit by luck. This executable is linked with
 * -Wl,--wrap=fcntl64 (tests/meson.build): every reference to fcntl64 in the daemon's static
 * library (and in this file) goes to __wrap_fcntl64 below, which, when armed, plays the
 * client at the daemon's first F_GET_SEALS: it truncates the fd and adds F_SEAL_SHRINK, then
 * answers truthfully. fcntl64, not fcntl: with _FILE_OFFSET_BITS=64 (meson's default) glibc
 * redirects fcntl() to fcntl64 (`nm libvkr_daemon.a | grep ' U fcntl'`). --wrap rewrites
 * links, not the process, so it also works under ASan, whose interceptors (if any for fcntl)
 * __real_fcntl64 then reaches as any other caller would. Each test checks the wrapper fired,
 * so a build where the daemon calls another symbol fails instead of passing vacuously.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "shm.h"

#define ORIGINAL_SIZE (1u << 20)

int __real_fcntl64(int fd, int cmd, ...);
int __wrap_fcntl64(int fd, int cmd, ...);

/* The client's move at the daemon's first F_GET_SEALS on race_fd (-1: disarmed). */
static int race_fd = -1;
static off_t race_truncate_to;
static unsigned race_fired;

int __wrap_fcntl64(int fd, int cmd, ...)
{
	va_list ap;

	switch (cmd) {
	/* No argument. */
	case F_GETFD:
	case F_GETFL:
	case F_GETOWN:
	case F_GETSIG:
	case F_GETLEASE:
	case F_GETPIPE_SZ:
	case F_GET_SEALS:
		if (cmd == F_GET_SEALS && fd == race_fd) {
			race_fd = -1;
			race_fired++;
			if (ftruncate(fd, race_truncate_to) < 0 ||
			    __real_fcntl64(fd, F_ADD_SEALS, F_SEAL_SHRINK) < 0)
				return -1; /* the test then sees the daemon's refusal */
		}
		return __real_fcntl64(fd, cmd);
	/* An int argument. */
	case F_DUPFD:
	case F_DUPFD_CLOEXEC:
	case F_SETFD:
	case F_SETFL:
	case F_SETOWN:
	case F_SETSIG:
	case F_SETLEASE:
	case F_NOTIFY:
	case F_SETPIPE_SZ:
	case F_ADD_SEALS: {
		int arg;

		va_start(ap, cmd);
		arg = va_arg(ap, int);
		va_end(ap);
		return __real_fcntl64(fd, cmd, arg);
	}
	/* A pointer (locks, F_GETOWN_EX/F_SETOWN_EX, hints), and whatever else: as glibc's own
	 * fcntl64 reads its third argument. */
	default: {
		void *arg;

		va_start(ap, cmd);
		arg = va_arg(ap, void *);
		va_end(ap);
		return __real_fcntl64(fd, cmd, arg);
	}
	}
}

static int make_unsealed_memfd(size_t size)
{
	int fd = memfd_create("test_shm_seal_race", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	return fd;
}

static void arm(int fd, off_t truncate_to)
{
	race_fd = fd;
	race_truncate_to = truncate_to;
	race_fired = 0;
}

static int teardown(void **state)
{
	(void)state;
	race_fd = -1;
	return 0;
}

static void test_shm_truncate_then_seal_maps_the_new_size(void **state)
{
	struct shm_region *region = NULL;
	struct stat st;
	char msg[256] = "";
	int fd = make_unsealed_memfd(ORIGINAL_SIZE);

	(void)state;
	assert_int_equal(pwrite(fd, "z", 1, 4095), 1);
	arm(fd, 4096);
	assert_int_equal(shm_region_create(NULL, fd, false, ORIGINAL_SIZE, &region, msg, sizeof(msg)), 0);
	assert_int_equal(race_fired, 1);
	/* The client really did shrink and seal the file under the daemon. */
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, 4096);
	assert_true(__real_fcntl64(fd, F_GET_SEALS) & F_SEAL_SHRINK);
	assert_non_null(region);
	/* The mapped size is the file's, not the one read before the seal was confirmed. */
	assert_int_equal(region->size, 4096);
	/* Its last byte is backed by the file: without the fix, touching the stale end would
	 * SIGBUS (a crash fails the test). */
	assert_int_equal(((volatile const char *)region->map)[region->size - 1], 'z');
	close(fd);
	shm_region_unref(region);
}

static void test_shm_truncate_to_empty_then_seal_is_rejected(void **state)
{
	struct shm_region *region = (struct shm_region *)&region;
	char msg[256] = "";
	int fd = make_unsealed_memfd(ORIGINAL_SIZE);

	(void)state;
	arm(fd, 0);
	/* Truncated to nothing and sealed: nothing may be mapped, as for a memfd registered
	 * empty. Without the fix the daemon would map 1 MiB of a 0-byte file. */
	assert_int_equal(shm_region_create(NULL, fd, false, ORIGINAL_SIZE, &region, msg, sizeof(msg)), -EINVAL);
	assert_int_equal(race_fired, 1);
	assert_null(region);
	assert_non_null(strstr(msg, "empty"));
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_shm_truncate_then_seal_maps_the_new_size, teardown),
		cmocka_unit_test_teardown(test_shm_truncate_to_empty_then_seal_is_rejected, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
