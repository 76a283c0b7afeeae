/* test_access.c: allow lists and per-uid accounting of daemon/access.c. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "access.h"

static void test_access_empty_lists_allow_everyone(void **state)
{
	struct access a = { 0 };
	struct access_peer p = { .uid = 1234, .gid = 1234 };

	(void)state;
	assert_true(access_allowed(&a, &p));
	assert_int_equal(access_set_allow(&a, "", NULL, NULL, 0), 0);
	assert_true(access_allowed(&a, &p));
}

static void test_access_uid_and_group_lists(void **state)
{
	struct access a = { 0 };
	struct access_peer p = { .uid = 1001, .gid = 100 };
	char err[128];

	(void)state;
	assert_int_equal(access_set_allow(&a, "1000, 1002", "27", err, sizeof(err)), 0);
	assert_int_equal(a.nuids, 2);
	assert_false(access_allowed(&a, &p));
	p.uid = 1002;
	assert_true(access_allowed(&a, &p));
	p.uid = 1001;
	p.gid = 27; /* primary group */
	assert_true(access_allowed(&a, &p));
	p.gid = 100;
	p.groups[0] = 5;
	p.groups[1] = 27; /* supplementary group */
	p.ngroups = 2;
	assert_true(access_allowed(&a, &p));
	p.ngroups = 1;
	assert_false(access_allowed(&a, &p));
	/* Root is always let in. */
	p.uid = 0;
	assert_true(access_allowed(&a, &p));
	access_describe(&a, err, sizeof(err));
	assert_string_equal(err, "uids 1000,1002; groups 27");
}

static void test_access_bad_lists_change_nothing(void **state)
{
	struct access a = { 0 };
	char err[128], many[4096];
	size_t off = 0;

	(void)state;
	assert_int_equal(access_set_allow(&a, "7", NULL, err, sizeof(err)), 0);
	assert_int_equal(access_set_allow(&a, "no-such-user-xyz", NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no-such-user-xyz"));
	assert_int_equal(access_set_allow(&a, "1", "no-such-group-xyz", err, sizeof(err)), -EINVAL);
	/* Ids that wrap or mean "no id" are names, and no user has them. */
	assert_int_equal(access_set_allow(&a, "4294967295", NULL, err, sizeof(err)), -EINVAL);
	assert_int_equal(access_set_allow(&a, "99999999999999999999", NULL, err, sizeof(err)), -EINVAL);
	for (int i = 0; i <= ACCESS_LIST_MAX; i++)
		off += (size_t)snprintf(many + off, sizeof(many) - off, "%d,", i + 1);
	assert_int_equal(access_set_allow(&a, many, NULL, err, sizeof(err)), -E2BIG);
	assert_int_equal(a.nuids, 1);
	assert_int_equal(a.uids[0], 7);
	/* Names resolve. */
	assert_int_equal(access_set_allow(&a, "root", "root", err, sizeof(err)), 0);
	assert_int_equal(a.uids[0], 0);
	assert_int_equal(a.gids[0], 0);
}

static void test_access_per_uid_connections_are_capped_and_freed(void **state)
{
	struct access a = { 0 };

	(void)state;
	assert_int_equal(access_conn_open(&a, 5, 2), 0);
	assert_int_equal(access_conn_open(&a, 5, 2), 0);
	assert_int_equal(access_conn_open(&a, 5, 2), -EUSERS);
	assert_int_equal(access_conn_open(&a, 6, 2), 0);
	assert_int_equal(a.nusers, 2);
	access_conn_close(&a, 5);
	assert_int_equal(access_conn_open(&a, 5, 2), 0);
	access_conn_close(&a, 5);
	access_conn_close(&a, 5);
	access_conn_close(&a, 6);
	access_conn_close(&a, 6); /* one too many: ignored */
	assert_int_equal(a.nusers, 0);
	assert_null(a.users); /* freed when empty */
}

static void test_access_per_uid_shm_quota_without_overflow(void **state)
{
	struct access a = { 0 };

	(void)state;
	assert_int_equal(access_shm_charge(&a, 5, 1, 100), -EDQUOT); /* no connection */
	assert_int_equal(access_conn_open(&a, 5, 10), 0);
	assert_int_equal(access_shm_charge(&a, 5, 60, 100), 0);
	assert_int_equal(access_shm_charge(&a, 5, 41, 100), -EDQUOT);
	assert_int_equal(access_shm_charge(&a, 5, UINT64_MAX, 100), -EDQUOT);
	assert_int_equal(access_shm_charge(&a, 5, 40, 100), 0);
	assert_int_equal(access_shm_bytes(&a, 5), 100);
	/* The entry outlives the connection while it still holds bytes. */
	access_conn_close(&a, 5);
	assert_int_equal(a.nusers, 1);
	access_shm_release(&a, 5, 1000); /* more than held: clamps */
	assert_int_equal(a.nusers, 0);
}

static void test_access_reads_peer_credentials(void **state)
{
	struct access_peer p;
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(access_read_peer(sv[0], &p), 0);
	assert_int_equal(p.uid, getuid());
	assert_int_equal(p.gid, getgid());
	assert_int_equal(p.pid, getpid());
	close(sv[0]);
	close(sv[1]);
	assert_int_equal(access_read_peer(sv[0], &p), -EBADF);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_access_empty_lists_allow_everyone),
		cmocka_unit_test(test_access_uid_and_group_lists),
		cmocka_unit_test(test_access_bad_lists_change_nothing),
		cmocka_unit_test(test_access_per_uid_connections_are_capped_and_freed),
		cmocka_unit_test(test_access_per_uid_shm_quota_without_overflow),
		cmocka_unit_test(test_access_reads_peer_credentials),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
