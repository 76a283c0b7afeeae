/* test_frame.c: bounded msgpack framing over hostile and partial input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <msgpack.h>

#include "frame.h"

static const struct frame_limits limits = {
	.max_str_bin = 1024, .max_message = 2048, .max_objects = 64, .max_depth = 8,
};

static void pack_request(msgpack_sbuffer *sb, uint32_t msgid, size_t bin_len)
{
	msgpack_packer pk;
	static char zeros[4096];

	msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
	msgpack_pack_array(&pk, 4);
	msgpack_pack_uint32(&pk, 0);
	msgpack_pack_uint32(&pk, msgid);
	msgpack_pack_str_with_body(&pk, "reduce", 6);
	msgpack_pack_array(&pk, 3);
	msgpack_pack_str_with_body(&pk, "sum", 3);
	msgpack_pack_str_with_body(&pk, "f32", 3);
	msgpack_pack_bin_with_body(&pk, zeros, bin_len);
}

static void test_frame_complete_message_has_exact_size_and_msgid(void **state)
{
	msgpack_sbuffer sb;
	struct frame_info info;

	(void)state;
	msgpack_sbuffer_init(&sb);
	pack_request(&sb, 4242, 100);
	/* Two messages back to back: the scan stops at the first one's end. */
	pack_request(&sb, 7, 8);
	assert_int_equal(frame_scan(sb.data, sb.size, &limits, &info), FRAME_COMPLETE);
	assert_true(info.has_msgid);
	assert_int_equal(info.msgid, 4242);
	assert_true(info.size < sb.size);
	assert_int_equal(frame_scan(sb.data + info.size, sb.size - info.size, &limits, &info), FRAME_COMPLETE);
	assert_int_equal(info.msgid, 7);
	msgpack_sbuffer_destroy(&sb);
}

static void test_frame_every_prefix_needs_more(void **state)
{
	msgpack_sbuffer sb;
	struct frame_info info;

	(void)state;
	msgpack_sbuffer_init(&sb);
	pack_request(&sb, 1, 300);
	for (size_t len = 0; len < sb.size; len++) {
		assert_int_equal(frame_scan(sb.data, len, &limits, &info), FRAME_NEED_MORE);
		assert_true(info.need > len && info.need <= sb.size);
	}
	msgpack_sbuffer_destroy(&sb);
}

static void test_frame_declared_bin_over_limit_is_refused_from_its_header(void **state)
{
	/* [0, 9, "reduce", ["sum", "f32", bin32 of 1 GiB]] with only the header present. */
	const uint8_t msg[] = { 0x94, 0x00, 0x09, 0xa6, 'r', 'e', 'd', 'u', 'c', 'e', 0x93, 0xa3, 's', 'u', 'm',
				0xa3, 'f', '3', '2', 0xc6, 0x40, 0x00, 0x00, 0x00 };
	struct frame_info info;

	(void)state;
	assert_int_equal(frame_scan(msg, sizeof(msg), &limits, &info), FRAME_TOO_LARGE);
	assert_true(info.has_msgid);
	assert_int_equal(info.msgid, 9);
	assert_int_equal(info.declared, 1u << 30);
}

static void test_frame_deep_nesting_and_many_objects_are_refused(void **state)
{
	uint8_t deep[64];
	uint8_t wide[] = { 0xdc, 0xff, 0xff }; /* array16 of 65535 items */
	struct frame_info info;

	(void)state;
	memset(deep, 0x91, sizeof(deep));
	assert_int_equal(frame_scan(deep, sizeof(deep), &limits, &info), FRAME_TOO_DEEP);
	assert_int_equal(frame_scan(wide, sizeof(wide), &limits, &info), FRAME_TOO_MANY);
}

static void test_frame_never_used_byte_is_refused(void **state)
{
	const uint8_t msg[] = { 0x92, 0x01, 0xc1 };
	struct frame_info info;

	(void)state;
	assert_int_equal(frame_scan(msg, sizeof(msg), &limits, &info), FRAME_BAD_BYTE);
}

static void test_frame_scalars_of_every_width_are_sized_right(void **state)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;
	struct frame_info info;

	(void)state;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_array(&pk, 12);
	msgpack_pack_int8(&pk, -100);
	msgpack_pack_int16(&pk, -30000);
	msgpack_pack_int32(&pk, -2000000000);
	msgpack_pack_int64(&pk, INT64_MIN);
	msgpack_pack_uint64(&pk, UINT64_MAX);
	msgpack_pack_float(&pk, 1.5f);
	msgpack_pack_double(&pk, 2.5);
	msgpack_pack_nil(&pk);
	msgpack_pack_true(&pk);
	msgpack_pack_ext_with_body(&pk, "abcd", 4, 5);
	msgpack_pack_ext_with_body(&pk, "abcdefghijk", 11, 6);
	msgpack_pack_map(&pk, 1);
	msgpack_pack_str_with_body(&pk, "k", 1);
	msgpack_pack_str_with_body(&pk, "v", 1);
	assert_int_equal(frame_scan(sb.data, sb.size, &limits, &info), FRAME_COMPLETE);
	assert_int_equal(info.size, sb.size);
	assert_false(info.has_msgid);
	msgpack_sbuffer_destroy(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frame_complete_message_has_exact_size_and_msgid),
		cmocka_unit_test(test_frame_every_prefix_needs_more),
		cmocka_unit_test(test_frame_declared_bin_over_limit_is_refused_from_its_header),
		cmocka_unit_test(test_frame_deep_nesting_and_many_objects_are_refused),
		cmocka_unit_test(test_frame_never_used_byte_is_refused),
		cmocka_unit_test(test_frame_scalars_of_every_width_are_sized_right),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
