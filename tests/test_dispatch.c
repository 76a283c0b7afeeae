/* test_dispatch.c: validation of reduce/scan/register_shm parameters, without sockets. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <msgpack.h>

#include "dispatch.h"

struct packed {
	msgpack_sbuffer sb;
	msgpack_packer pk;
	msgpack_unpacked un;
};

static msgpack_packer *begin(struct packed *p)
{
	msgpack_sbuffer_init(&p->sb);
	msgpack_packer_init(&p->pk, &p->sb, msgpack_sbuffer_write);
	msgpack_unpacked_init(&p->un);
	return &p->pk;
}

static const msgpack_object *finish(struct packed *p)
{
	assert_int_equal(msgpack_unpack_next(&p->un, p->sb.data, p->sb.size, NULL), MSGPACK_UNPACK_SUCCESS);
	return &p->un.data;
}

static void done(struct packed *p)
{
	msgpack_unpacked_destroy(&p->un);
	msgpack_sbuffer_destroy(&p->sb);
}

static void str(msgpack_packer *pk, const char *s)
{
	msgpack_pack_str_with_body(pk, s, strlen(s));
}

/* Parses [op, dtype, bin of bin_len bytes] (+ opts packed by the callback when not NULL). */
static int parse_inline(enum kern_kind kind, const char *op, const char *dtype, size_t bin_len,
			void (*opts)(msgpack_packer *), struct dispatch_compute *c, char *msg)
{
	static char zeros[256];
	struct limits limits;
	struct packed p;
	msgpack_packer *pk = begin(&p);
	int r;

	limits_init(&limits);
	limits.max_inline_bytes = 128;
	msgpack_pack_array(pk, opts ? 4 : 3);
	str(pk, op);
	str(pk, dtype);
	msgpack_pack_bin_with_body(pk, zeros, bin_len);
	if (opts)
		opts(pk);
	r = dispatch_parse_compute(kind, &finish(&p)->via.array, &limits, c, msg, 256);
	done(&p);
	return r;
}

static void test_dispatch_valid_inline_reduce_parses(void **state)
{
	struct dispatch_compute c;
	char msg[256];

	(void)state;
	assert_int_equal(parse_inline(KERN_REDUCE, "sum", "f64", 64, NULL, &c, msg), 0);
	assert_int_equal(c.op, VKR_OP_SUM);
	assert_int_equal(c.dtype, VKR_DTYPE_F64);
	assert_false(c.src.shm);
	assert_int_equal(c.src.count, 8);
}

static void test_dispatch_bin_length_must_be_a_multiple_of_the_element_size(void **state)
{
	struct dispatch_compute c;
	char msg[256];

	(void)state;
	assert_int_equal(parse_inline(KERN_REDUCE, "sum", "i32", 6, NULL, &c, msg), VKR_WIRE_INVALID_ARGUMENT);
	assert_non_null(strstr(msg, "src"));
	assert_int_equal(parse_inline(KERN_REDUCE, "sum", "u64", 12, NULL, &c, msg), VKR_WIRE_INVALID_ARGUMENT);
}

static void test_dispatch_inline_over_limit_is_too_large(void **state)
{
	struct dispatch_compute c;
	char msg[256];

	(void)state;
	assert_int_equal(parse_inline(KERN_REDUCE, "sum", "f32", 132, NULL, &c, msg), VKR_WIRE_TOO_LARGE);
}

static void test_dispatch_unknown_names_are_named_in_the_error(void **state)
{
	struct dispatch_compute c;
	char msg[256];

	(void)state;
	assert_int_equal(parse_inline(KERN_REDUCE, "mean", "f32", 4, NULL, &c, msg), VKR_WIRE_INVALID_ARGUMENT);
	assert_non_null(strstr(msg, "op"));
	assert_non_null(strstr(msg, "mean"));
	assert_int_equal(parse_inline(KERN_REDUCE, "sum", "bf16", 4, NULL, &c, msg), VKR_WIRE_INVALID_ARGUMENT);
	assert_non_null(strstr(msg, "dtype"));
	assert_int_equal(parse_inline(KERN_SCAN, "count", "f32", 4, NULL, &c, msg), VKR_WIRE_INVALID_ARGUMENT);
	assert_non_null(strstr(msg, "reduce-only"));
}

static void opts_count_ge_3(msgpack_packer *pk)
{
	msgpack_pack_map(pk, 2);
	str(pk, "cmp");
	str(pk, "ge");
	str(pk, "value");
	msgpack_pack_int(pk, 3);
}

static void opts_count_half(msgpack_packer *pk)
{
	msgpack_pack_map(pk, 2);
	str(pk, "cmp");
	str(pk, "lt");
	str(pk, "value");
	msgpack_pack_double(pk, 2.5);
}

static void opts_bogus_key(msgpack_packer *pk)
{
	msgpack_pack_map(pk, 1);
	str(pk, "exclusiv");
	msgpack_pack_true(pk);
}

static void opts_scan_dst(msgpack_packer *pk)
{
	msgpack_pack_map(pk, 2);
	str(pk, "exclusive");
	msgpack_pack_true(pk);
	str(pk, "dst");
	msgpack_pack_map(pk, 2);
	str(pk, "region");
	msgpack_pack_uint32(pk, 3);
	str(pk, "offset");
	msgpack_pack_uint32(pk, 6);
}

static void test_dispatch_count_needs_cmp_and_a_representable_value(void **state)
{
	struct dispatch_compute c;
	char msg[256];

	(void)state;
	assert_int_equal(parse_inline(KERN_REDUCE, "count", "i32", 8, NULL, &c, msg), VKR_WIRE_INVALID_ARGUMENT);
	assert_int_equal(parse_inline(KERN_REDUCE, "count", "i32", 8, opts_count_ge_3, &c, msg), 0);
	assert_int_equal(c.cmp, VKR_CMP_GE);
	assert_int_equal(c.value.i32, 3);
	assert_int_equal(parse_inline(KERN_REDUCE, "count", "i32", 8, opts_count_half, &c, msg),
			 VKR_WIRE_INVALID_ARGUMENT);
	assert_non_null(strstr(msg, "opts.value"));
	assert_int_equal(parse_inline(KERN_REDUCE, "count", "f32", 8, opts_count_half, &c, msg), 0);
	assert_true(c.value.f32 == 2.5f);
	assert_int_equal(parse_inline(KERN_REDUCE, "sum", "i32", 8, opts_count_ge_3, &c, msg),
			 VKR_WIRE_INVALID_ARGUMENT);
}

static void test_dispatch_unknown_option_keys_are_refused(void **state)
{
	struct dispatch_compute c;
	char msg[256];

	(void)state;
	assert_int_equal(parse_inline(KERN_SCAN, "sum", "i32", 8, opts_bogus_key, &c, msg), VKR_WIRE_INVALID_ARGUMENT);
	assert_non_null(strstr(msg, "exclusiv"));
}

static void test_dispatch_scan_dst_offset_must_be_aligned(void **state)
{
	struct dispatch_compute c;
	char msg[256];

	(void)state;
	assert_int_equal(parse_inline(KERN_SCAN, "sum", "i32", 8, opts_scan_dst, &c, msg), VKR_WIRE_INVALID_ARGUMENT);
	assert_non_null(strstr(msg, "opts.dst.offset"));
	assert_int_equal(parse_inline(KERN_SCAN, "sum", "u64", 8, opts_scan_dst, &c, msg), VKR_WIRE_INVALID_ARGUMENT);
}

static int parse_shm_src(uint64_t region, int64_t offset, uint64_t count, struct dispatch_compute *c, char *msg)
{
	struct limits limits;
	struct packed p;
	msgpack_packer *pk = begin(&p);
	int r;

	limits_init(&limits);
	msgpack_pack_array(pk, 3);
	str(pk, "max");
	str(pk, "u32");
	msgpack_pack_map(pk, 3);
	str(pk, "region");
	msgpack_pack_uint64(pk, region);
	str(pk, "offset");
	msgpack_pack_int64(pk, offset);
	str(pk, "count");
	msgpack_pack_uint64(pk, count);
	r = dispatch_parse_compute(KERN_REDUCE, &finish(&p)->via.array, &limits, c, msg, 256);
	done(&p);
	return r;
}

static void test_dispatch_shm_src_fields_are_checked(void **state)
{
	struct dispatch_compute c;
	char msg[256];

	(void)state;
	assert_int_equal(parse_shm_src(2, 16, 10, &c, msg), 0);
	assert_true(c.src.shm);
	assert_int_equal(c.src.region, 2);
	assert_int_equal(c.src.offset, 16);
	assert_int_equal(c.src.count, 10);
	assert_int_equal(parse_shm_src(2, -4, 10, &c, msg), VKR_WIRE_INVALID_ARGUMENT);
	assert_non_null(strstr(msg, "src.offset"));
	assert_int_equal(parse_shm_src(2, 6, 10, &c, msg), VKR_WIRE_INVALID_ARGUMENT);
	assert_int_equal(parse_shm_src(2, 0, UINT64_MAX, &c, msg), VKR_WIRE_TOO_LARGE);
	assert_int_equal(parse_shm_src(2, 0, KERN_MAX_ELEMENTS, &c, msg), 0);
}

static void test_dispatch_params_of_wrong_shape_are_refused(void **state)
{
	struct dispatch_compute c;
	struct limits limits;
	struct packed p;
	msgpack_packer *pk = begin(&p);
	char msg[256];

	(void)state;
	limits_init(&limits);
	msgpack_pack_array(pk, 2);
	str(pk, "sum");
	str(pk, "f32");
	assert_int_equal(dispatch_parse_compute(KERN_REDUCE, &finish(&p)->via.array, &limits, &c, msg, sizeof(msg)),
			 VKR_WIRE_INVALID_ARGUMENT);
	done(&p);
	pk = begin(&p);
	msgpack_pack_array(pk, 3);
	msgpack_pack_int(pk, 1);
	str(pk, "f32");
	msgpack_pack_nil(pk);
	assert_int_equal(dispatch_parse_compute(KERN_REDUCE, &finish(&p)->via.array, &limits, &c, msg, sizeof(msg)),
			 VKR_WIRE_INVALID_ARGUMENT);
	assert_non_null(strstr(msg, "op"));
	done(&p);
}

static void test_dispatch_convert_value_rules(void **state)
{
	struct packed p;
	vkr_value v;
	char msg[256];

	(void)state;
	msgpack_pack_int64(begin(&p), -5);
	assert_int_equal(dispatch_convert_value(VKR_DTYPE_U32, finish(&p), &v, msg, sizeof(msg)), VKR_WIRE_INVALID_ARGUMENT);
	assert_int_equal(dispatch_convert_value(VKR_DTYPE_I64, finish(&p), &v, msg, sizeof(msg)), 0);
	assert_int_equal(v.i64, -5);
	assert_int_equal(dispatch_convert_value(VKR_DTYPE_F32, finish(&p), &v, msg, sizeof(msg)), 0);
	assert_true(v.f32 == -5.0f);
	done(&p);
	msgpack_pack_double(begin(&p), 1e300);
	assert_int_equal(dispatch_convert_value(VKR_DTYPE_F32, finish(&p), &v, msg, sizeof(msg)), VKR_WIRE_INVALID_ARGUMENT);
	assert_int_equal(dispatch_convert_value(VKR_DTYPE_F64, finish(&p), &v, msg, sizeof(msg)), 0);
	assert_int_equal(dispatch_convert_value(VKR_DTYPE_U64, finish(&p), &v, msg, sizeof(msg)), VKR_WIRE_INVALID_ARGUMENT);
	done(&p);
	msgpack_pack_double(begin(&p), 4294967295.0);
	assert_int_equal(dispatch_convert_value(VKR_DTYPE_U32, finish(&p), &v, msg, sizeof(msg)), 0);
	assert_int_equal(v.u32, UINT32_MAX);
	assert_int_equal(dispatch_convert_value(VKR_DTYPE_I32, finish(&p), &v, msg, sizeof(msg)), VKR_WIRE_INVALID_ARGUMENT);
	done(&p);
	msgpack_pack_double(begin(&p), 18446744073709551616.0);
	assert_int_equal(dispatch_convert_value(VKR_DTYPE_U64, finish(&p), &v, msg, sizeof(msg)), VKR_WIRE_INVALID_ARGUMENT);
	done(&p);
	msgpack_pack_uint64(begin(&p), UINT64_MAX);
	assert_int_equal(dispatch_convert_value(VKR_DTYPE_U64, finish(&p), &v, msg, sizeof(msg)), 0);
	assert_true(v.u64 == UINT64_MAX);
	assert_int_equal(dispatch_convert_value(VKR_DTYPE_I64, finish(&p), &v, msg, sizeof(msg)), VKR_WIRE_INVALID_ARGUMENT);
	done(&p);
	msgpack_pack_double(begin(&p), NAN);
	assert_int_equal(dispatch_convert_value(VKR_DTYPE_F32, finish(&p), &v, msg, sizeof(msg)), 0);
	assert_true(isnan(v.f32));
	assert_int_equal(dispatch_convert_value(VKR_DTYPE_I32, finish(&p), &v, msg, sizeof(msg)), VKR_WIRE_INVALID_ARGUMENT);
	done(&p);
	str(begin(&p), "3");
	assert_int_equal(dispatch_convert_value(VKR_DTYPE_I32, finish(&p), &v, msg, sizeof(msg)), VKR_WIRE_INVALID_ARGUMENT);
	done(&p);
}

static void test_dispatch_register_opts(void **state)
{
	struct packed p;
	msgpack_packer *pk;
	bool writable;
	char msg[256];

	(void)state;
	pk = begin(&p);
	msgpack_pack_array(pk, 1);
	msgpack_pack_map(pk, 1);
	str(pk, "writable");
	msgpack_pack_true(pk);
	assert_int_equal(dispatch_parse_register(&finish(&p)->via.array, &writable, msg, sizeof(msg)), 0);
	assert_true(writable);
	done(&p);
	pk = begin(&p);
	msgpack_pack_array(pk, 1);
	msgpack_pack_map(pk, 1);
	str(pk, "writable");
	msgpack_pack_int(pk, 1);
	assert_int_equal(dispatch_parse_register(&finish(&p)->via.array, &writable, msg, sizeof(msg)),
			 VKR_WIRE_INVALID_ARGUMENT);
	assert_non_null(strstr(msg, "opts.writable"));
	done(&p);
	pk = begin(&p);
	msgpack_pack_array(pk, 0);
	assert_int_equal(dispatch_parse_register(&finish(&p)->via.array, &writable, msg, sizeof(msg)), 0);
	assert_false(writable);
	done(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dispatch_valid_inline_reduce_parses),
		cmocka_unit_test(test_dispatch_bin_length_must_be_a_multiple_of_the_element_size),
		cmocka_unit_test(test_dispatch_inline_over_limit_is_too_large),
		cmocka_unit_test(test_dispatch_unknown_names_are_named_in_the_error),
		cmocka_unit_test(test_dispatch_count_needs_cmp_and_a_representable_value),
		cmocka_unit_test(test_dispatch_unknown_option_keys_are_refused),
		cmocka_unit_test(test_dispatch_scan_dst_offset_must_be_aligned),
		cmocka_unit_test(test_dispatch_shm_src_fields_are_checked),
		cmocka_unit_test(test_dispatch_params_of_wrong_shape_are_refused),
		cmocka_unit_test(test_dispatch_convert_value_rules),
		cmocka_unit_test(test_dispatch_register_opts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
