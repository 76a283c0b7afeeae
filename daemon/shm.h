/*
 * shm.h: client shared memory. A client hands over a sealed memfd; the daemon maps it and,
 * where the device can import host memory, lets the GPU read and write the client's pages in
 * place. A region is reference-counted: the connection's table holds one reference and every
 * queued or running job that reads or writes it holds one, so unregistering (or
 * disconnecting) while work is in flight unmaps only after that work completes.
 * Loop thread only.
 */
#ifndef VKRD_SHM_H
#define VKRD_SHM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu.h"

struct shm_region {
	unsigned refs;
	uint32_t id;            /* connection-scoped id, 0 until added to a table */
	void *map;              /* owned: mmap of the whole memfd */
	uint64_t size;          /* bytes mapped (the memfd's size at registration) */
	bool writable;          /* mapped PROT_WRITE; scan may write into it */
	bool imported;          /* `imports` are valid: the GPU addresses the pages directly */
	/* Owned when imported: the region in pieces of piece_bytes (the last may be shorter), one
	 * buffer each, as no buffer may be larger than the device's array buffer limit; a region
	 * within the limit is one piece. */
	struct gpu_buffer *imports;
	uint32_t import_count;
	uint64_t piece_bytes;
	struct gpu *gpu;        /* borrowed, may be NULL: the device of `imports` */
};

/*
 * Checks fd and maps it. Accepted: a memfd (F_GET_SEALS succeeds) with F_SEAL_SHRINK, of
 * size 1..max_bytes; writable additionally needs an O_RDWR fd without F_SEAL_WRITE or
 * F_SEAL_FUTURE_WRITE. The fd is not closed (the caller owns it). gpu may be NULL (no
 * import, as in unit tests). Returns 0, -EBADF/-EINVAL/-EPERM/-EACCES (rejected; msg says
 * why), -E2BIG (larger than max_bytes) or -ENOMEM.
 */
int shm_region_create(struct gpu *gpu, int fd, bool writable, uint64_t max_bytes,
		      struct shm_region **out, char *msg, size_t msg_size);
struct shm_region *shm_region_ref(struct shm_region *region);
/* Imports the region's pages into gpu where the device allows it (else the region is copied
 * through the staging rings; not an error). Used at registration and after a device was
 * created again. */
void shm_region_import(struct shm_region *region, struct gpu *gpu);
/* Releases the import (before its device is destroyed); the mapping stays. The caller
 * guarantees that no pending GPU work uses it. */
void shm_region_drop_import(struct shm_region *region);
/* Where byte offset of an imported region is on the device, and how many bytes from there
 * lie in the same piece (one buffer). */
uint64_t shm_region_address(const struct shm_region *region, uint64_t offset, uint64_t *contiguous);
/* Drops a reference; the last one unmaps. The caller guarantees that no pending GPU work
 * uses the region once its own reference is gone. Accepts NULL. */
void shm_region_unref(struct shm_region *region);

/*
 * Checks that count elements of elem_size bytes at byte offset lie inside a region of
 * region_size bytes, with offset aligned to elem_size, without overflow for any input.
 * Returns 0 or -EINVAL (misaligned) or -ERANGE (outside), with msg naming the problem.
 */
int shm_range_check(uint64_t region_size, uint64_t offset, uint64_t count, uint64_t elem_size,
		    char *msg, size_t msg_size);

/* A connection's regions, by id. Ids start at 1 and are never reused within a table. */
struct shm_table {
	struct shm_region **regions; /* owned array of owned references */
	size_t count, capacity;
	uint32_t next_id;
	uint64_t bytes;              /* sum of the sizes of the regions */
};

void shm_table_init(struct shm_table *table);
/* Drops every region (their references). */
void shm_table_finish(struct shm_table *table);
/* Takes over the caller's reference and assigns region->id: 0 or -ENOMEM/-ENOSPC. */
int shm_table_add(struct shm_table *table, struct shm_region *region);
/* Borrowed pointer, or NULL. */
struct shm_region *shm_table_find(const struct shm_table *table, uint64_t id);
/* Removes the region and drops the table's reference: 0 or -ENOENT. */
int shm_table_remove(struct shm_table *table, uint64_t id);

#endif /* VKRD_SHM_H */
