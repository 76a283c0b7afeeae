/* test_config.c: the settings table, the "key = value" parser and reloads (no daemon). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"

static int parse(struct config *c, const char *text, char *err, size_t err_size)
{
	return config_parse_text(c, "test.conf", text, strlen(text), err, err_size);
}

static void setup_config(struct config *c)
{
	/* The defaults must not depend on the environment the test runs in. */
	unsetenv("STATE_DIRECTORY");
	assert_int_equal(config_init(c), 0);
}

static void test_config_every_limit_is_a_key_with_its_default(void **state)
{
	struct config c;
	struct limits defaults;

	(void)state;
	setup_config(&c);
	limits_init(&defaults);
	assert_memory_equal(&c.limits, &defaults, sizeof(defaults));
#define LIMITS_X_(field, flag, def, lo, hi, help) assert_true(config_key_find(flag) >= 0);
	LIMITS_MAP(LIMITS_X_)
#undef LIMITS_X_
	assert_int_equal(c.socket_mode, 0660);
	assert_int_equal(c.drain_timeout_ms, 10000);
	assert_int_equal(c.log_level, LOG_LEVEL_INFO);
	assert_null(c.state_dir);
	config_finish(&c);
}

static void test_config_parses_comments_blanks_quotes_and_suffixes(void **state)
{
	struct config c;
	char err[512] = "";

	(void)state;
	setup_config(&c);
	assert_int_equal(parse(&c,
			       "# comment\n"
			       "\n"
			       "   \t\n"
			       "  max-connections = 7  \n"
			       "max_requests_per_conn=3\r\n"
			       "max-inline-bytes = 2M\n"
			       "upload-ring-bytes = 0x100000\n"
			       "socket = \" /tmp/with space \"\n"
			       "socket-mode = 0600\n"
			       "log-level = debug\n"
			       "drain-timeout = 2.5s\n"
			       "validation = yes\n"
			       "device = llvmpipe\n"
			       "max-connections = 8", /* a later line wins; no final newline */
			       err, sizeof(err)),
			 0);
	assert_int_equal(c.limits.max_connections, 8);
	assert_int_equal(c.limits.max_requests_per_conn, 3);
	assert_int_equal(c.limits.max_inline_bytes, 2u << 20);
	assert_int_equal(c.limits.upload_ring_bytes, 1u << 20);
	assert_string_equal(c.socket, " /tmp/with space ");
	assert_int_equal(c.socket_mode, 0600);
	assert_int_equal(c.log_level, LOG_LEVEL_DEBUG);
	assert_int_equal(c.drain_timeout_ms, 2500);
	assert_true(c.validation);
	assert_string_equal(c.device, "llvmpipe");
	/* An empty value unsets a string setting. */
	assert_int_equal(parse(&c, "device =\n", err, sizeof(err)), 0);
	assert_null(c.device);
	config_finish(&c);
}

static void test_config_durations(void **state)
{
	static const struct { const char *text; uint64_t ms; } good[] = {
		{ "0", 0 }, { "10", 10000 }, { "10s", 10000 }, { "500ms", 500 }, { "0.25", 250 },
	};
	static const char *const bad[] = { "", "-1", "ten", "5m", "1e9", "10 s" };
	struct config c;
	char err[512];

	(void)state;
	setup_config(&c);
	size_t key = (size_t)config_key_find("drain-timeout");
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(config_set(&c, key, good[i].text, err, sizeof(err)), 0);
		assert_int_equal(c.drain_timeout_ms, good[i].ms);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(config_set(&c, key, bad[i], err, sizeof(err)), -EINVAL);
	config_finish(&c);
}

static void test_config_unknown_key_names_file_line_and_key(void **state)
{
	struct config c;
	char err[512] = "";

	(void)state;
	setup_config(&c);
	assert_int_equal(parse(&c, "max-connections = 4\n\nmax-conections = 5\n", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "test.conf:3: unknown key 'max-conections'"));
	config_finish(&c);
}

static void test_config_bad_value_names_line_key_range_and_value(void **state)
{
	struct config c;
	char err[512] = "";

	(void)state;
	setup_config(&c);
	assert_int_equal(parse(&c, "# x\nmax-batches-in-flight = 33\n", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "test.conf:2: max-batches-in-flight: expected a number from 1 to 32"));
	assert_non_null(strstr(err, "got '33'"));
	assert_int_equal(parse(&c, "socket-mode = 0999\n", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "test.conf:1: socket-mode: expected an octal mode"));
	assert_int_equal(parse(&c, "validation = maybe\n", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "validation: expected true or false"));
	assert_int_equal(parse(&c, "max-inline-bytes = 99999999999999999999\n", err, sizeof(err)), -EINVAL);
	assert_int_equal(parse(&c, "max-inline-bytes = 16E\n", err, sizeof(err)), -EINVAL);
	/* A control character in the value is shown escaped, not written to the terminal. */
	assert_int_equal(parse(&c, "log-level = \x1b[31m\n", err, sizeof(err)), -EINVAL);
	assert_null(strchr(err, '\x1b'));
	config_finish(&c);
}

static void test_config_rejects_lines_without_key_or_equals(void **state)
{
	struct config c;
	char err[512] = "";
	char long_line[CONFIG_MAX_LINE_BYTES + 16];

	(void)state;
	setup_config(&c);
	assert_int_equal(parse(&c, "max-connections 4\n", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "test.conf:1: expected 'key = value'"));
	assert_int_equal(parse(&c, " = 4\n", err, sizeof(err)), -EINVAL);
	assert_int_equal(config_parse_text(&c, "test.conf", "a\0= 1\n", 6, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "NUL"));
	memset(long_line, 'x', sizeof(long_line) - 1);
	long_line[sizeof(long_line) - 1] = '\0';
	assert_int_equal(parse(&c, long_line, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "longer than"));
	config_finish(&c);
}

static void test_config_missing_file_is_enoent_and_dev_null_is_empty(void **state)
{
	struct config c;
	char err[512] = "";

	(void)state;
	setup_config(&c);
	assert_int_equal(config_parse_file(&c, "/nonexistent/vkreduced.conf", err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/vkreduced.conf"));
	assert_int_equal(config_parse_file(&c, "/dev/null", err, sizeof(err)), 0);
	assert_int_equal(config_parse_file(&c, "/", err, sizeof(err)), -EISDIR);
	config_finish(&c);
}

static void test_config_file_round_trip(void **state)
{
	char path[] = "/tmp/vkr-test-config-XXXXXX";
	const char text[] = "max-regions-per-conn = 12\nlog-level = warn\n";
	struct config c;
	char err[512] = "";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)(sizeof(text) - 1));
	close(fd);
	setup_config(&c);
	assert_int_equal(config_parse_file(&c, path, err, sizeof(err)), 0);
	assert_int_equal(c.limits.max_regions_per_conn, 12);
	assert_int_equal(c.log_level, LOG_LEVEL_WARN);
	unlink(path);
	config_finish(&c);
}

static void test_config_state_dir_defaults_to_first_state_directory(void **state)
{
	struct config c;

	(void)state;
	setenv("STATE_DIRECTORY", "/var/lib/vkreduce:/var/lib/other", 1);
	assert_int_equal(config_init(&c), 0);
	assert_string_equal(c.state_dir, "/var/lib/vkreduce");
	config_finish(&c);
	unsetenv("STATE_DIRECTORY");
}

static void test_config_reload_applies_reloadable_keeps_restart_only(void **state)
{
	static const char *const restart_only[] = { "max-batch-jobs", "upload-ring-bytes", "readback-ring-bytes",
						    "scratch-ring-bytes", "socket", "device", "state-dir" };
	struct config cur, next;
	char err[512] = "";

	(void)state;
	/* The restart-only names must stay keys of the table (a renamed limit would otherwise
	 * silently become reloadable). */
	for (size_t i = 0; i < sizeof(restart_only) / sizeof(restart_only[0]); i++) {
		int k = config_key_find(restart_only[i]);
		assert_true(k >= 0);
		assert_false(config_key_reloadable((size_t)k));
	}
	assert_true(config_key_reloadable((size_t)config_key_find("max-connections")));
	assert_true(config_key_reloadable((size_t)config_key_find("allow-uids")));

	setup_config(&cur);
	setup_config(&next);
	assert_int_equal(parse(&next,
			       "max-connections = 5\nmax-batch-jobs = 16\nlog-level = error\n"
			       "allow-uids = 0,1\nsocket = /tmp/elsewhere.sock\n",
			       err, sizeof(err)),
			 0);
	assert_int_equal(config_apply_reload(&cur, &next), 3);
	assert_int_equal(cur.limits.max_connections, 5);
	assert_int_equal(cur.log_level, LOG_LEVEL_ERROR);
	assert_string_equal(cur.allow_uids, "0,1");
	assert_int_equal(cur.limits.max_batch_jobs, 4096);
	assert_null(cur.socket);
	/* Nothing changed the second time. */
	assert_int_equal(config_apply_reload(&cur, &next), 0);
	config_finish(&next);
	config_finish(&cur);
}

static void test_config_help_lists_every_key(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	config_print_help(f);
	fclose(f);
	for (size_t k = 0; k < config_key_count(); k++) {
		char flag[96];
		snprintf(flag, sizeof(flag), "--%s", config_key_name(k));
		assert_non_null(strstr(buf, flag));
	}
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_every_limit_is_a_key_with_its_default),
		cmocka_unit_test(test_config_parses_comments_blanks_quotes_and_suffixes),
		cmocka_unit_test(test_config_durations),
		cmocka_unit_test(test_config_unknown_key_names_file_line_and_key),
		cmocka_unit_test(test_config_bad_value_names_line_key_range_and_value),
		cmocka_unit_test(test_config_rejects_lines_without_key_or_equals),
		cmocka_unit_test(test_config_missing_file_is_enoent_and_dev_null_is_empty),
		cmocka_unit_test(test_config_file_round_trip),
		cmocka_unit_test(test_config_state_dir_defaults_to_first_state_directory),
		cmocka_unit_test(test_config_reload_applies_reloadable_keeps_restart_only),
		cmocka_unit_test(test_config_help_lists_every_key),
	};
	/* Reload logging goes to stderr; keep the test output to cmocka's. */
	log_set_level(LOG_LEVEL_ERROR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
