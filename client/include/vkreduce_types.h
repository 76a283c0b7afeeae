/*
 * vkreduce_types.h: the vocabulary shared by the client library, the daemon and the wire
 * protocol: operations, element types, comparisons and error codes. Each list is one X-macro
 * so that the enum, the wire name and the description can never drift apart.
 *
 * This header is public (installed beside vkreduce.h) and has no dependencies but <stdint.h>.
 */
#ifndef VKREDUCE_TYPES_H
#define VKREDUCE_TYPES_H

#include <stddef.h>
#include <stdint.h>

/* X(ENUM_SUFFIX, "wire name") */
#define VKR_OP_MAP(X)                                                                              \
	X(SUM, "sum")                                                                                  \
	X(PROD, "prod")                                                                                \
	X(MIN, "min")                                                                                  \
	X(MAX, "max")                                                                                  \
	X(COUNT, "count")

typedef enum vkr_op {
#define VKR_X_(name, str) VKR_OP_##name,
	VKR_OP_MAP(VKR_X_)
#undef VKR_X_
	VKR_OP_COUNT_
} vkr_op;

/* X(ENUM_SUFFIX, "wire name", element size in bytes) */
#define VKR_DTYPE_MAP(X)                                                                           \
	X(F32, "f32", 4)                                                                               \
	X(F64, "f64", 8)                                                                               \
	X(I32, "i32", 4)                                                                               \
	X(U32, "u32", 4)                                                                               \
	X(I64, "i64", 8)                                                                               \
	X(U64, "u64", 8)

typedef enum vkr_dtype {
#define VKR_X_(name, str, size) VKR_DTYPE_##name,
	VKR_DTYPE_MAP(VKR_X_)
#undef VKR_X_
	VKR_DTYPE_COUNT_
} vkr_dtype;

/* Comparisons for count-if: count elements x with (x CMP value). */
#define VKR_CMP_MAP(X)                                                                             \
	X(EQ, "eq")                                                                                    \
	X(NE, "ne")                                                                                    \
	X(LT, "lt")                                                                                    \
	X(LE, "le")                                                                                    \
	X(GT, "gt")                                                                                    \
	X(GE, "ge")

typedef enum vkr_cmp {
#define VKR_X_(name, str) VKR_CMP_##name,
	VKR_CMP_MAP(VKR_X_)
#undef VKR_X_
	VKR_CMP_COUNT_
} vkr_cmp;

/*
 * Errors the daemon sends on the wire: X(wire code, NAME, "description").
 * The wire code is stable forever. The client library returns them as
 * -(VKR_ERROR_BASE + code) so that they never collide with negative errno values,
 * which the library also returns for system failures (-ECONNREFUSED, ...).
 */
#define VKR_ERROR_MAP(X)                                                                           \
	X(1, NO_SUCH_METHOD, "no such method")                                                         \
	X(2, INVALID_ARGUMENT, "invalid argument")                                                     \
	X(3, TOO_LARGE, "too large")                                                                   \
	X(4, BUSY, "busy, retry later")                                                                \
	X(5, NO_SUCH_REGION, "no such region")                                                         \
	X(6, SHM_REJECTED, "shared memory rejected")                                                   \
	X(7, DEVICE_LOST, "device lost, retry later")                                                  \
	X(8, SHUTTING_DOWN, "shutting down, retry later")                                              \
	X(9, PERMISSION_DENIED, "permission denied")                                                   \
	X(10, INTERNAL, "internal error")

#define VKR_ERROR_BASE 1000

typedef enum vkr_error {
#define VKR_X_(code, name, str) VKR_E##name = -(VKR_ERROR_BASE + (code)),
	VKR_ERROR_MAP(VKR_X_)
#undef VKR_X_
	VKR_E_UNUSED_ = 0
} vkr_error;

/* Wire codes, for code that speaks the protocol directly. */
typedef enum vkr_wire_error {
#define VKR_X_(code, name, str) VKR_WIRE_##name = (code),
	VKR_ERROR_MAP(VKR_X_)
#undef VKR_X_
} vkr_wire_error;

/*
 * One scalar of any supported dtype. Which member is valid follows the dtype of the
 * request; the result of "count" is always in u64.
 */
typedef union vkr_value {
	float f32;
	double f64;
	int32_t i32;
	uint32_t u32;
	int64_t i64;
	uint64_t u64;
} vkr_value;

#endif /* VKREDUCE_TYPES_H */
