#include "proto_names.h"

#include <string.h>

static const char *const op_names[] = {
#define X(name, str) str,
	VKR_OP_MAP(X)
#undef X
};

static const char *const dtype_names[] = {
#define X(name, str, size) str,
	VKR_DTYPE_MAP(X)
#undef X
};

static const size_t dtype_sizes[] = {
#define X(name, str, size) size,
	VKR_DTYPE_MAP(X)
#undef X
};

static const char *const cmp_names[] = {
#define X(name, str) str,
	VKR_CMP_MAP(X)
#undef X
};

const char *proto_op_name(vkr_op op)
{
	return (unsigned)op < VKR_OP_COUNT_ ? op_names[op] : NULL;
}

const char *proto_dtype_name(vkr_dtype dtype)
{
	return (unsigned)dtype < VKR_DTYPE_COUNT_ ? dtype_names[dtype] : NULL;
}

const char *proto_cmp_name(vkr_cmp cmp)
{
	return (unsigned)cmp < VKR_CMP_COUNT_ ? cmp_names[cmp] : NULL;
}

size_t proto_dtype_size(vkr_dtype dtype)
{
	return (unsigned)dtype < VKR_DTYPE_COUNT_ ? dtype_sizes[dtype] : 0;
}

bool proto_dtype_is_float(vkr_dtype dtype)
{
	return dtype == VKR_DTYPE_F32 || dtype == VKR_DTYPE_F64;
}

bool proto_dtype_is_signed(vkr_dtype dtype)
{
	return dtype == VKR_DTYPE_I32 || dtype == VKR_DTYPE_I64;
}

static bool lookup(const char *const *names, size_t count, const char *name, size_t len,
		   unsigned *out)
{
	for (size_t i = 0; i < count; i++) {
		if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0) {
			*out = (unsigned)i;
			return true;
		}
	}
	return false;
}

bool proto_op_parse(const char *name, size_t len, vkr_op *out)
{
	unsigned i;
	if (!lookup(op_names, VKR_OP_COUNT_, name, len, &i))
		return false;
	*out = (vkr_op)i;
	return true;
}

bool proto_dtype_parse(const char *name, size_t len, vkr_dtype *out)
{
	unsigned i;
	if (!lookup(dtype_names, VKR_DTYPE_COUNT_, name, len, &i))
		return false;
	*out = (vkr_dtype)i;
	return true;
}

bool proto_cmp_parse(const char *name, size_t len, vkr_cmp *out)
{
	unsigned i;
	if (!lookup(cmp_names, VKR_CMP_COUNT_, name, len, &i))
		return false;
	*out = (vkr_cmp)i;
	return true;
}

const char *proto_error_name(int wire_code)
{
	switch (wire_code) {
#define X(code, name, str)                                                                         \
	case code:                                                                                 \
		return #name;
		VKR_ERROR_MAP(X)
#undef X
	default:
		return NULL;
	}
}

const char *proto_error_description(int wire_code)
{
	switch (wire_code) {
#define X(code, name, str)                                                                         \
	case code:                                                                                 \
		return str;
		VKR_ERROR_MAP(X)
#undef X
	default:
		return NULL;
	}
}
