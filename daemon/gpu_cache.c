/*
 * gpu_cache.c: the Vulkan pipeline cache on disk, so a restarted daemon skips compiling its
 * kernels again. A file that is unreadable, truncated, or made by another device or driver
 * is ignored with a warning: the cache only ever saves time, it never stops a start.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpu_internal.h"

/* Largest cache file read back; a larger one is not ours. */
#define CACHE_MAX_BYTES (64u << 20)

static bool header_matches(const struct gpu *gpu, const unsigned char *data, size_t size)
{
	VkPipelineCacheHeaderVersionOne h;
	if (size < sizeof(h))
		return false;
	memcpy(&h, data, sizeof(h));
	VkPhysicalDeviceProperties p;
	vkGetPhysicalDeviceProperties(gpu->physical, &p);
	return h.headerSize >= sizeof(h) && h.headerSize <= size &&
	       h.headerVersion == VK_PIPELINE_CACHE_HEADER_VERSION_ONE &&
	       h.vendorID == p.vendorID && h.deviceID == p.deviceID &&
	       memcmp(h.pipelineCacheUUID, p.pipelineCacheUUID, VK_UUID_SIZE) == 0;
}

/* Reads the file into a malloc'd buffer; NULL (and *size 0) when absent or unusable. */
static unsigned char *read_cache_file(const struct gpu *gpu, const char *path, size_t *size)
{
	*size = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT)
			gpu_log(gpu, 1, "pipeline cache %s: %s; starting without it",
				path, strerror(errno));
		return NULL;
	}
	struct stat st;
	unsigned char *data = NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uint64_t)st.st_size <= CACHE_MAX_BYTES)
		data = malloc((size_t)st.st_size);
	size_t got = 0;
	while (data && got < (size_t)st.st_size) {
		ssize_t n = read(fd, data + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (!data || got != (size_t)st.st_size) {
		gpu_log(gpu, 1, "pipeline cache %s is unreadable or too large; "
			"ignoring it", path);
		free(data);
		return NULL;
	}
	*size = got;
	return data;
}

int gpu_cache_load(struct gpu *gpu, const char *path)
{
	size_t size = 0;
	unsigned char *data = path ? read_cache_file(gpu, path, &size) : NULL;
	if (data && !header_matches(gpu, data, size)) {
		gpu_log(gpu, 1, "pipeline cache %s was made by another device or "
			"driver, or is corrupt; ignoring it", path);
		free(data);
		data = NULL;
		size = 0;
	}
	const VkPipelineCacheCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
		.initialDataSize = size,
		.pInitialData = data,
	};
	VkResult r = vkCreatePipelineCache(gpu->device, &ci, NULL, &gpu->pipeline_cache);
	if (r != VK_SUCCESS && data) {
		/* The driver refused the contents despite a matching header: start empty. */
		gpu_log(gpu, 1, "pipeline cache %s rejected by the driver; "
			"ignoring it", path);
		const VkPipelineCacheCreateInfo empty = { .sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO };
		r = vkCreatePipelineCache(gpu->device, &empty, NULL, &gpu->pipeline_cache);
	}
	gpu->pipeline_cache_loaded = data != NULL && r == VK_SUCCESS;
	free(data);
	return gpu_errno_from_vk(r);
}

int gpu_save_pipeline_cache(struct gpu *gpu, const char *path)
{
	if (!path || !gpu->pipeline_cache)
		return -EINVAL;
	size_t size = 0;
	VkResult r = vkGetPipelineCacheData(gpu->device, gpu->pipeline_cache, &size, NULL);
	if (r != VK_SUCCESS)
		return gpu_errno_from_vk(r);
	unsigned char *data = malloc(size ? size : 1);
	if (!data)
		return -ENOMEM;
	r = vkGetPipelineCacheData(gpu->device, gpu->pipeline_cache, &size, data);
	if (r != VK_SUCCESS) {
		free(data);
		return gpu_errno_from_vk(r);
	}
	/* Write a temporary file and rename it over the old one, so that a crash mid-write
	 * leaves the previous cache (or none), never half of one. */
	char tmp[4096];
	int len = snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	if (len < 0 || (size_t)len >= sizeof(tmp)) {
		free(data);
		return -ENAMETOOLONG;
	}
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int rc = fd < 0 ? -errno : 0;
	size_t done = 0;
	while (rc == 0 && done < size) {
		ssize_t n = write(fd, data + done, size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			rc = -errno;
		else
			done += (size_t)n;
	}
	if (fd >= 0 && rc == 0 && fsync(fd) < 0)
		rc = -errno;
	if (fd >= 0 && close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -errno;
	if (rc < 0 && fd >= 0)
		unlink(tmp);
	free(data);
	return rc;
}

bool gpu_pipeline_cache_was_loaded(const struct gpu *gpu)
{
	return gpu->pipeline_cache_loaded;
}
