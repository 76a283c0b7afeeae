/*
 * kern_internal.h: what kern.c (planning, recording) and kern_result.c (result areas) share,
 * and nothing outside the engine uses.
 */
#ifndef VKR_KERN_INTERNAL_H
#define VKR_KERN_INTERNAL_H

#include "kern.h"

/* Threads per workgroup of every reduction and scan kernel (the shaders' WG_SIZE). */
#define WG_SIZE 256u

/* Bytes of one element of the dtype. */
static inline uint64_t kern_dtype_size(vkr_dtype dtype)
{
	return dtype == VKR_DTYPE_F64 || dtype == VKR_DTYPE_I64 || dtype == VKR_DTYPE_U64 ? 8 : 4;
}

/* Bytes of a reduction's accumulator (its partials): count-if counts in 32 bits. */
static inline unsigned kern_accumulator_bytes(bool count, vkr_dtype dtype)
{
	return count ? 4 : (unsigned)kern_dtype_size(dtype);
}

/* Bytes of the job's accumulator (its partials, or each entry of a host-folded area). */
static inline uint64_t kern_reduce_acc_bytes(const struct kern_job *job)
{
	return kern_accumulator_bytes(job->op == VKR_OP_COUNT, job->dtype);
}

/* Pass 0's grid of a reduction in one buffer, from its address and size. */
uint32_t kern_reduce_groups(const struct gpu *gpu, const struct kern_job *job);

/* Pass 0's grid where the array starts 16-byte aligned: the most workgroups its size can
 * have (a head of scalars only takes vectors away), known before its address is. */
uint32_t kern_reduce_most_groups(const struct gpu *gpu, const struct kern_job *job);

#endif
