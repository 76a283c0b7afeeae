/*
 * test_client_shm.c: the shared-memory helpers of libvkreduce, without a daemon. The daemon
 * relies on what these guarantee (a memfd whose size can no longer change), so check it from
 * the kernel's side, not from the library's bookkeeping.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "vkreduce.h"

static void test_shm_create_gives_zeroed_writable_mapping_of_the_size(void **state)
{
	vkr_shm *shm;
	(void)state;
	assert_int_equal(vkr_shm_create(12345, &shm), 0);
	assert_int_equal(vkr_shm_size(shm), 12345);
	unsigned char *p = vkr_shm_data(shm);
	assert_non_null(p);
	for (size_t i = 0; i < 12345; i++)
		assert_int_equal(p[i], 0);
	memset(p, 0xab, 12345);

	/* The fd sees the same bytes: it is the same memory the daemon will map. */
	unsigned char b[4];
	assert_int_equal(pread(vkr_shm_fd(shm), b, sizeof(b), 12000), 4);
	assert_int_equal(b[0], 0xab);
	struct stat st;
	assert_int_equal(fstat(vkr_shm_fd(shm), &st), 0);
	assert_int_equal(st.st_size, 12345);
	vkr_shm_free(shm);
}

static void test_shm_fd_is_a_cloexec_memfd_that_allows_sealing(void **state)
{
	vkr_shm *shm;
	(void)state;
	assert_int_equal(vkr_shm_create(4096, &shm), 0);
	int fd = vkr_shm_fd(shm);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	int seals = fcntl(fd, F_GET_SEALS);
	assert_true(seals >= 0); /* only memfds (and hugetlbfs/tmpfs files) know seals */
	assert_false(seals & F_SEAL_SEAL);
	vkr_shm_free(shm);
}

static void test_shm_seal_fixes_the_size_but_keeps_contents_writable(void **state)
{
	vkr_shm *shm;
	(void)state;
	assert_int_equal(vkr_shm_create(8192, &shm), 0);
	assert_int_equal(vkr_shm_seal(shm), 0);
	int fd = vkr_shm_fd(shm);
	int seals = fcntl(fd, F_GET_SEALS);
	assert_true(seals & F_SEAL_SHRINK);
	assert_true(seals & F_SEAL_GROW);
	assert_false(seals & F_SEAL_WRITE);
	errno = 0;
	assert_int_equal(ftruncate(fd, 4096), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(ftruncate(fd, 16384), -1);
	assert_int_equal(errno, EPERM);
	((char *)vkr_shm_data(shm))[8191] = 7;
	assert_int_equal(((char *)vkr_shm_data(shm))[8191], 7);
	vkr_shm_free(shm);
}

static void test_shm_seal_is_idempotent(void **state)
{
	vkr_shm *shm;
	(void)state;
	assert_int_equal(vkr_shm_create(100, &shm), 0);
	assert_int_equal(vkr_shm_seal(shm), 0);
	assert_int_equal(vkr_shm_seal(shm), 0);
	vkr_shm_free(shm);
}

static void test_shm_create_rejects_size_zero_and_null_out(void **state)
{
	vkr_shm *shm = (vkr_shm *)&shm;
	(void)state;
	assert_int_equal(vkr_shm_create(0, &shm), -EINVAL);
	assert_null(shm);
	assert_int_equal(vkr_shm_create(10, NULL), -EINVAL);
	assert_int_equal(vkr_shm_create(SIZE_MAX, &shm), -EINVAL);
}

static void test_shm_huge_size_fails_cleanly(void **state)
{
	vkr_shm *shm = NULL;
	(void)state;
	/* Larger than any address space: the error comes back, nothing leaks. */
	int err = vkr_shm_create((size_t)1 << 62, &shm);
	assert_true(err < 0);
	assert_null(shm);
}

static void test_shm_free_and_close_accept_null(void **state)
{
	(void)state;
	vkr_shm_free(NULL);
	vkr_close(NULL);
	vkr_kvlist_free(NULL);
}

static void test_connect_to_missing_socket_reports_enoent(void **state)
{
	vkr_client *c = (vkr_client *)&c;
	(void)state;
	assert_int_equal(vkr_connect("/nonexistent/vkreduce-test.sock", &c), -ENOENT);
	assert_null(c);
	char longpath[200];
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[sizeof(longpath) - 1] = '\0';
	assert_int_equal(vkr_connect(longpath, &c), -ENAMETOOLONG);
}

static void test_strerror_covers_wire_codes_and_errno(void **state)
{
	(void)state;
	assert_string_equal(vkr_strerror(VKR_EINVALID_ARGUMENT), "invalid argument");
	assert_string_equal(vkr_strerror(VKR_ENO_SUCH_REGION), "no such region");
	assert_string_equal(vkr_strerror(VKR_EINTERNAL), "internal error");
	assert_string_equal(vkr_strerror(0), "success");
	assert_non_null(vkr_strerror(-ENOENT));
	assert_non_null(vkr_strerror(-EPROTO));
	assert_non_null(vkr_strerror(-(VKR_ERROR_BASE + 77)));
	assert_non_null(vkr_strerror(12345));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shm_create_gives_zeroed_writable_mapping_of_the_size),
		cmocka_unit_test(test_shm_fd_is_a_cloexec_memfd_that_allows_sealing),
		cmocka_unit_test(test_shm_seal_fixes_the_size_but_keeps_contents_writable),
		cmocka_unit_test(test_shm_seal_is_idempotent),
		cmocka_unit_test(test_shm_create_rejects_size_zero_and_null_out),
		cmocka_unit_test(test_shm_huge_size_fails_cleanly),
		cmocka_unit_test(test_shm_free_and_close_accept_null),
		cmocka_unit_test(test_connect_to_missing_socket_reports_enoent),
		cmocka_unit_test(test_strerror_covers_wire_codes_and_errno),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
