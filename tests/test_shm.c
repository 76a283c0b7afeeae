/* test_shm.c: which fds register_shm accepts, and overflow-safe range checks. */
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
#include <unistd.h>

#include <cmocka.h>

#include "shm.h"

static int make_memfd(size_t size, unsigned seals)
{
	int fd = memfd_create("test_shm", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	if (seals)
		assert_int_equal(fcntl(fd, F_ADD_SEALS, seals), 0);
	return fd;
}

static int create(int fd, bool writable, uint64_t max, struct shm_region **out)
{
	char msg[256];
	int r = shm_region_create(NULL, fd, writable, max, out, msg, sizeof(msg));

	if (r)
		assert_true(strlen(msg) > 0); /* every refusal says why */
	return r;
}

static void test_shm_sealed_memfd_is_accepted_and_mapped(void **state)
{
	struct shm_region *region;
	int fd = make_memfd(8192, F_SEAL_SHRINK);

	(void)state;
	assert_int_equal(pwrite(fd, "hello", 5, 4096), 5);
	assert_int_equal(create(fd, false, 1 << 20, &region), 0);
	close(fd); /* the mapping outlives the fd */
	assert_int_equal(region->size, 8192);
	assert_memory_equal((char *)region->map + 4096, "hello", 5);
	assert_false(region->imported);
	shm_region_ref(region);
	shm_region_unref(region);
	shm_region_unref(region);
}

static void test_shm_writable_region_writes_reach_the_client(void **state)
{
	struct shm_region *region;
	char buf[4];
	int fd = make_memfd(4096, F_SEAL_SHRINK | F_SEAL_GROW);

	(void)state;
	assert_int_equal(create(fd, true, 1 << 20, &region), 0);
	memcpy(region->map, "abcd", 4);
	assert_int_equal(pread(fd, buf, 4, 0), 4);
	assert_memory_equal(buf, "abcd", 4);
	shm_region_unref(region);
	close(fd);
}

static void test_shm_unsealed_memfd_is_rejected(void **state)
{
	struct shm_region *region;
	int fd = make_memfd(4096, 0);

	(void)state;
	assert_int_equal(create(fd, false, 1 << 20, &region), -EPERM);
	assert_null(region);
	close(fd);
}

/* Huge-page memfds are refused (a punched hole could fault the daemon). Where the kernel
 * has no huge pages to back one, the memfd cannot even be sized, and that is said. */
static void test_shm_hugetlb_memfd_is_rejected(void **state)
{
	struct shm_region *region;
	(void)state;
	int fd = memfd_create("vkr-huge", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_HUGETLB);
	if (fd < 0 || ftruncate(fd, 2 << 20) < 0 || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) < 0) {
		print_message("no huge pages here (%s): the hugetlbfs case cannot be built\n",
			      strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	assert_int_equal(create(fd, false, 1 << 30, &region), -EINVAL);
	assert_null(region);
	close(fd);
}

static void test_shm_pipe_and_regular_file_are_rejected(void **state)
{
	struct shm_region *region;
	int p[2];
	char path[] = "/tmp/test_shm_XXXXXX";
	int fd;

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(create(p[0], false, 1 << 20, &region), -EINVAL);
	close(p[0]);
	close(p[1]);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(ftruncate(fd, 4096), 0);
	assert_int_equal(create(fd, false, 1 << 20, &region), -EINVAL);
	close(fd);
}

static void test_shm_empty_and_oversized_memfds_are_rejected(void **state)
{
	struct shm_region *region;
	int fd = make_memfd(0, F_SEAL_SHRINK);

	(void)state;
	assert_int_equal(create(fd, false, 1 << 20, &region), -EINVAL);
	close(fd);
	fd = make_memfd(1 << 21, F_SEAL_SHRINK);
	assert_int_equal(create(fd, false, 1 << 20, &region), -E2BIG);
	close(fd);
}

static void test_shm_writable_needs_a_writable_unsealed_fd(void **state)
{
	struct shm_region *region;
	char path[64];
	int fd = make_memfd(4096, F_SEAL_SHRINK | F_SEAL_WRITE);
	int ro;

	(void)state;
	assert_int_equal(create(fd, true, 1 << 20, &region), -EACCES);
	close(fd);
	/* A read-only reopening of a sealed memfd: readable, not writable. */
	fd = make_memfd(4096, F_SEAL_SHRINK);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ro = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(ro >= 0);
	assert_int_equal(create(ro, true, 1 << 20, &region), -EACCES);
	assert_int_equal(create(ro, false, 1 << 20, &region), 0);
	shm_region_unref(region);
	close(ro);
	close(fd);
}

static void test_shm_range_check_is_overflow_safe(void **state)
{
	char msg[256];

	(void)state;
	assert_int_equal(shm_range_check(4096, 0, 1024, 4, msg, sizeof(msg)), 0);
	assert_int_equal(shm_range_check(4096, 4092, 1, 4, msg, sizeof(msg)), 0);
	assert_int_equal(shm_range_check(4096, 4096, 0, 4, msg, sizeof(msg)), 0);
	assert_int_equal(shm_range_check(4096, 0, 1025, 4, msg, sizeof(msg)), -ERANGE);
	assert_int_equal(shm_range_check(4096, 4096, 1, 4, msg, sizeof(msg)), -ERANGE);
	assert_int_equal(shm_range_check(4096, UINT64_MAX - 3, 2, 4, msg, sizeof(msg)), -ERANGE);
	assert_int_equal(shm_range_check(4096, 4, UINT64_MAX, 4, msg, sizeof(msg)), -ERANGE);
	assert_int_equal(shm_range_check(4096, 8, UINT64_MAX / 4 + 1, 4, msg, sizeof(msg)), -ERANGE);
	assert_int_equal(shm_range_check(4096, 2, 1, 4, msg, sizeof(msg)), -EINVAL);
	assert_int_equal(shm_range_check(4096, 4, 1, 8, msg, sizeof(msg)), -EINVAL);
}

static void test_shm_table_ids_are_unique_and_removal_drops_bytes(void **state)
{
	struct shm_table table;
	struct shm_region *a, *b;
	int fd = make_memfd(4096, F_SEAL_SHRINK);

	(void)state;
	shm_table_init(&table);
	assert_int_equal(create(fd, false, 1 << 20, &a), 0);
	assert_int_equal(create(fd, false, 1 << 20, &b), 0);
	close(fd);
	assert_int_equal(shm_table_add(&table, a), 0);
	assert_int_equal(shm_table_add(&table, b), 0);
	assert_int_not_equal(a->id, b->id);
	assert_int_equal(table.bytes, 8192);
	assert_ptr_equal(shm_table_find(&table, b->id), b);
	assert_int_equal(shm_table_remove(&table, a->id), 0);
	assert_int_equal(shm_table_remove(&table, 999), -ENOENT);
	assert_int_equal(table.bytes, 4096);
	shm_table_finish(&table);
	assert_int_equal(table.count, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shm_sealed_memfd_is_accepted_and_mapped),
		cmocka_unit_test(test_shm_writable_region_writes_reach_the_client),
		cmocka_unit_test(test_shm_unsealed_memfd_is_rejected),
		cmocka_unit_test(test_shm_hugetlb_memfd_is_rejected),
		cmocka_unit_test(test_shm_pipe_and_regular_file_are_rejected),
		cmocka_unit_test(test_shm_empty_and_oversized_memfds_are_rejected),
		cmocka_unit_test(test_shm_writable_needs_a_writable_unsealed_fd),
		cmocka_unit_test(test_shm_range_check_is_overflow_safe),
		cmocka_unit_test(test_shm_table_ids_are_unique_and_removal_drops_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
