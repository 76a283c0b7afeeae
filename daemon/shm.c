/* shm.c: memfd regions: acceptance checks, mapping, host import, refcounting. */
#include "shm.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <unistd.h>

#include "log.h"

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif

int shm_region_create(struct gpu *gpu, int fd, bool writable, uint64_t max_bytes,
		      struct shm_region **out, char *msg, size_t msg_size)
{
	struct shm_region *region;
	struct stat st;
	int seals, flags;
	void *map;

	*out = NULL;
	if (fstat(fd, &st) < 0) {
		snprintf(msg, msg_size, "fd: fstat failed: %s", strerror(errno));
		return -EBADF;
	}
	/* F_GET_SEALS fails with EINVAL on anything but shmem files; only memfds can carry
	 * F_SEAL_SHRINK, and without it a client could truncate the file under the mapping
	 * and kill the daemon with SIGBUS. */
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || !S_ISREG(st.st_mode)) {
		snprintf(msg, msg_size, "fd: not a memfd (F_GET_SEALS: %s)",
			 seals < 0 ? strerror(errno) : "not a regular file");
		return -EINVAL;
	}
	/* A hugetlbfs memfd honours F_SEAL_SHRINK but not against a punched hole: once the
	 * client frees a huge page and the pool runs dry, touching that page raises SIGBUS in
	 * the daemon. Only ordinary shmem memfds are accepted. */
	struct statfs fs;
	if (fstatfs(fd, &fs) < 0 || fs.f_type == HUGETLBFS_MAGIC) {
		snprintf(msg, msg_size, "fd: %s", fs.f_type == HUGETLBFS_MAGIC
			 ? "hugetlbfs memfds are not accepted (a punched hole would fault the daemon)"
			 : "fstatfs failed");
		return -EINVAL;
	}
	if (!(seals & F_SEAL_SHRINK)) {
		snprintf(msg, msg_size, "fd: memfd lacks F_SEAL_SHRINK (seals 0x%x)", seals);
		return -EPERM;
	}
	/* The size that is mapped is read again now that shrinking is known to be sealed: the
	 * client holds the file too, and between the first fstat and F_GET_SEALS it could have
	 * truncated it and then sealed it, leaving a larger size than the file's for the
	 * daemon to map and fault on. From here on the size can only grow. */
	if (fstat(fd, &st) < 0) {
		snprintf(msg, msg_size, "fd: fstat failed: %s", strerror(errno));
		return -EBADF;
	}
	if (st.st_size <= 0) {
		snprintf(msg, msg_size, "fd: memfd is empty (size 0)");
		return -EINVAL;
	}
	if ((uint64_t)st.st_size > max_bytes) {
		snprintf(msg, msg_size, "fd: memfd of %" PRIu64 " bytes exceeds max_shm_bytes_per_conn %" PRIu64,
			 (uint64_t)st.st_size, max_bytes);
		return -E2BIG;
	}
	flags = fcntl(fd, F_GETFL);
	if (flags < 0) {
		snprintf(msg, msg_size, "fd: F_GETFL failed: %s", strerror(errno));
		return -EBADF;
	}
	if ((flags & O_ACCMODE) == O_WRONLY) {
		snprintf(msg, msg_size, "fd: opened write-only, cannot be read");
		return -EACCES;
	}
	if (writable) {
		if ((flags & O_ACCMODE) != O_RDWR) {
			snprintf(msg, msg_size, "writable: fd is not open for writing (O_RDWR needed)");
			return -EACCES;
		}
		if (seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE)) {
			snprintf(msg, msg_size, "writable: memfd is sealed against writes (seals 0x%x)", seals);
			return -EACCES;
		}
	}
	/* A read-only region is still mapped read-write when the fd allows it: the NVIDIA driver
	 * imports (pins) only writable mappings (a read-only memfd mapping failed with ENOMEM on
	 * the H200, so the GPU could not read the client's pages in place). Nothing in the
	 * daemon writes a region that is not `writable`: kernels only read their sources. */
	bool map_rw = writable || ((flags & O_ACCMODE) == O_RDWR && !(seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE)));
	map = mmap(NULL, (size_t)st.st_size, PROT_READ | (map_rw ? PROT_WRITE : 0), MAP_SHARED, fd, 0);
	if (map == MAP_FAILED && map_rw && !writable)
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		int err = errno;
		snprintf(msg, msg_size, "fd: mmap of %" PRIu64 " bytes failed: %s", (uint64_t)st.st_size,
			 strerror(err));
		return err == ENOMEM ? -ENOMEM : -EACCES;
	}
	region = calloc(1, sizeof(*region));
	if (!region) {
		munmap(map, (size_t)st.st_size);
		snprintf(msg, msg_size, "out of memory");
		return -ENOMEM;
	}
	region->refs = 1;
	region->map = map;
	region->size = (uint64_t)st.st_size;
	region->writable = writable;
	if (gpu)
		shm_region_import(region, gpu);
	*out = region;
	return 0;
}

void shm_region_import(struct shm_region *region, struct gpu *gpu)
{
	const struct gpu_info *info = gpu_get_info(gpu);
	uint64_t align = info->host_import_alignment;

	/* Import where the device can: the GPU then reads (and for scan into the region,
	 * writes) the client's pages without a staging copy. mmap gives page alignment; the
	 * size must also be a multiple of the device's import alignment, else the region is
	 * copied through the staging rings instead. */
	region->gpu = gpu;
	if (region->imported || !info->host_import || align == 0 || region->size % align != 0 ||
	    (uintptr_t)region->map % align != 0)
		return;
	/* Pieces are a power of two of at least 64 KiB, a multiple of any import alignment
	 * Vulkan allows (a power of two no larger than the page where the pages are mapped). */
	uint64_t piece = region->size <= info->array_buffer_limit ? region->size : gpu_array_part_bytes(gpu);
	uint64_t count = (region->size + piece - 1) / piece;
	if (piece % align != 0)
		return;
	region->imports = calloc(count, sizeof(*region->imports));
	if (!region->imports) {
		log_debug("shm: out of memory for %" PRIu64 " import pieces; copying instead", count);
		return;
	}
	for (uint64_t i = 0; i < count; i++) {
		uint64_t at = i * piece, bytes = region->size - at < piece ? region->size - at : piece;
		int r = gpu_buffer_import_host(gpu, (char *)region->map + at, bytes, &region->imports[i]);
		if (r) {
			log_debug("shm: host import of %" PRIu64 " bytes at %" PRIu64 " failed (%d); copying instead",
				  bytes, at, r);
			while (i > 0)
				gpu_buffer_destroy(gpu, &region->imports[--i]);
			free(region->imports);
			region->imports = NULL;
			return;
		}
	}
	region->import_count = (uint32_t)count;
	region->piece_bytes = piece;
	region->imported = true;
}

uint64_t shm_region_address(const struct shm_region *region, uint64_t offset, uint64_t *contiguous)
{
	uint64_t piece = offset / region->piece_bytes, at = offset % region->piece_bytes;
	*contiguous = region->imports[piece].size - at;
	return region->imports[piece].address + at;
}

static void release_imports(struct shm_region *region)
{
	for (uint32_t i = 0; i < region->import_count; i++)
		gpu_buffer_destroy(region->gpu, &region->imports[i]);
	free(region->imports);
	region->imports = NULL;
	region->import_count = 0;
	region->piece_bytes = 0;
	region->imported = false;
}

void shm_region_drop_import(struct shm_region *region)
{
	release_imports(region);
	region->gpu = NULL;
}

struct shm_region *shm_region_ref(struct shm_region *region)
{
	region->refs++;
	return region;
}

void shm_region_unref(struct shm_region *region)
{
	if (!region || --region->refs > 0)
		return;
	release_imports(region);
	munmap(region->map, (size_t)region->size);
	free(region);
}

int shm_range_check(uint64_t region_size, uint64_t offset, uint64_t count, uint64_t elem_size,
		    char *msg, size_t msg_size)
{
	if (elem_size == 0 || offset % elem_size != 0) {
		snprintf(msg, msg_size, "offset %" PRIu64 " is not a multiple of the element size %" PRIu64,
			 offset, elem_size);
		return -EINVAL;
	}
	/* Divide instead of multiplying so that no count can overflow. */
	if (offset > region_size || count > (region_size - offset) / elem_size) {
		snprintf(msg, msg_size,
			 "offset %" PRIu64 " + count %" PRIu64 " elements of %" PRIu64
			 " bytes exceeds the region's %" PRIu64 " bytes",
			 offset, count, elem_size, region_size);
		return -ERANGE;
	}
	return 0;
}

void shm_table_init(struct shm_table *table)
{
	table->regions = NULL;
	table->count = 0;
	table->capacity = 0;
	table->next_id = 1;
	table->bytes = 0;
}

void shm_table_finish(struct shm_table *table)
{
	for (size_t i = 0; i < table->count; i++)
		shm_region_unref(table->regions[i]);
	free(table->regions);
	shm_table_init(table);
}

int shm_table_add(struct shm_table *table, struct shm_region *region)
{
	if (table->next_id == UINT32_MAX)
		return -ENOSPC;
	if (table->count == table->capacity) {
		size_t cap = table->capacity ? table->capacity * 2 : 8;
		struct shm_region **grown = realloc(table->regions, cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		table->regions = grown;
		table->capacity = cap;
	}
	region->id = table->next_id++;
	table->regions[table->count++] = region;
	table->bytes += region->size;
	return 0;
}

struct shm_region *shm_table_find(const struct shm_table *table, uint64_t id)
{
	for (size_t i = 0; i < table->count; i++)
		if (table->regions[i]->id == id)
			return table->regions[i];
	return NULL;
}

int shm_table_remove(struct shm_table *table, uint64_t id)
{
	for (size_t i = 0; i < table->count; i++) {
		struct shm_region *region = table->regions[i];
		if (region->id != id)
			continue;
		table->regions[i] = table->regions[--table->count];
		table->bytes -= region->size;
		shm_region_unref(region);
		return 0;
	}
	return -ENOENT;
}
