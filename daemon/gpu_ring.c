/*
 * gpu_ring.c: the staging ring. head and tail only grow; offsets are taken modulo the size.
 * An allocation never wraps: when it does not fit before the end, the bytes up to the end
 * are skipped (they are freed with the allocation's fence like any other).
 */
#include "gpu_ring.h"

#include <errno.h>
#include <string.h>

int gpu_ring_init(struct gpu_ring *ring, struct gpu *gpu, uint64_t size, enum gpu_memory_kind kind)
{
	memset(ring, 0, sizeof(*ring));
	/* A whole number of the largest alignment gpu_ring_alloc accepts, which it refuses on
	 * a ring of any other size: a configured 1 MiB + 8 would fail every request. */
	if (size > UINT64_MAX - (GPU_RING_MAX_ALIGN - 1))
		return -EINVAL;
	size = (size + GPU_RING_MAX_ALIGN - 1) & ~(uint64_t)(GPU_RING_MAX_ALIGN - 1);
	return gpu_buffer_create(gpu, size, kind, &ring->buffer);
}

void gpu_ring_finish(struct gpu_ring *ring, struct gpu *gpu)
{
	gpu_buffer_destroy(gpu, &ring->buffer);
	memset(ring, 0, sizeof(*ring));
}

int gpu_ring_alloc(struct gpu_ring *ring, uint64_t bytes, uint64_t align, uint64_t *offset)
{
	uint64_t size = ring->buffer.size;
	if (align == 0 || (align & (align - 1)) || align > GPU_RING_MAX_ALIGN || size % align)
		return -EINVAL;
	if (bytes == 0)
		bytes = 1;
	if (bytes > size)
		return -E2BIG;
	if (ring->fence_count == GPU_RING_MAX_FENCES)
		return -EBUSY;
	uint64_t start = (ring->head + align - 1) & ~(align - 1);
	uint64_t pos = start % size;
	if (pos + bytes > size)
		start += size - pos; /* skip to the start of the buffer */
	if (start + bytes - ring->tail > size)
		return -EAGAIN;
	ring->head = start + bytes;
	*offset = start % size;
	return 0;
}

int gpu_ring_fence(struct gpu_ring *ring, uint64_t value)
{
	if (ring->head == ring->batch_start)
		return 0; /* nothing allocated in this batch */
	if (ring->fence_count == GPU_RING_MAX_FENCES)
		return -EBUSY;
	unsigned slot = (ring->fence_first + ring->fence_count) % GPU_RING_MAX_FENCES;
	ring->fences[slot].value = value;
	ring->fences[slot].end = ring->head;
	ring->fence_count++;
	ring->batch_start = ring->head;
	return 0;
}

void gpu_ring_rollback(struct gpu_ring *ring)
{
	ring->head = ring->batch_start;
}

void gpu_ring_reclaim(struct gpu_ring *ring, uint64_t completed)
{
	while (ring->fence_count > 0 && ring->fences[ring->fence_first].value <= completed) {
		ring->tail = ring->fences[ring->fence_first].end;
		ring->fence_first = (ring->fence_first + 1) % GPU_RING_MAX_FENCES;
		ring->fence_count--;
	}
	/* With nothing in flight and nothing pending, start again at offset 0 so that large
	 * allocations find the whole buffer contiguous. */
	if (ring->fence_count == 0 && ring->head == ring->batch_start) {
		uint64_t size = ring->buffer.size;
		uint64_t next = ring->head + (size - ring->head % size) % size;
		ring->head = ring->tail = ring->batch_start = next;
	}
}

uint64_t gpu_ring_used(const struct gpu_ring *ring)
{
	return ring->head - ring->tail;
}
