/*
 * proto_names.h: wire names <-> enums for ops, dtypes, comparisons and errors, generated
 * from the X-macro tables in vkreduce_types.h. Shared by the daemon and the client library.
 */
#ifndef VKR_PROTO_NAMES_H
#define VKR_PROTO_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#include "vkreduce_types.h"

/* Name of an op/dtype/cmp, or NULL when out of range. */
const char *proto_op_name(vkr_op op);
const char *proto_dtype_name(vkr_dtype dtype);
const char *proto_cmp_name(vkr_cmp cmp);
/* Element size in bytes, 0 when out of range. */
size_t proto_dtype_size(vkr_dtype dtype);
bool proto_dtype_is_float(vkr_dtype dtype);
bool proto_dtype_is_signed(vkr_dtype dtype);

/* Lookup by name of len bytes (not NUL-terminated: msgpack strings are not). Return false
 * when the name is unknown. */
bool proto_op_parse(const char *name, size_t len, vkr_op *out);
bool proto_dtype_parse(const char *name, size_t len, vkr_dtype *out);
bool proto_cmp_parse(const char *name, size_t len, vkr_cmp *out);

/* Wire error code (1..10) -> "NAME" and description; NULL when unknown. */
const char *proto_error_name(int wire_code);
const char *proto_error_description(int wire_code);

#endif /* VKR_PROTO_NAMES_H */
