/*
 * shm.c: shared buffers for zero-copy requests. A buffer is a memfd (the daemon accepts
 * nothing else: only a memfd can be sealed, and only a sealed size guarantees the daemon's
 * mapping never runs past the end of the file and takes SIGBUS).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vkreduce.h"

/* The seals the daemon needs: the size can change neither way. The contents stay writable so
 * that the same buffer can be refilled for the next request. */
#define SHM_SEALS (F_SEAL_SHRINK | F_SEAL_GROW)

struct vkr_shm {
	int fd; /* owned memfd */
	void *data; /* owned mapping of size bytes */
	size_t size;
};

int vkr_shm_create(size_t size, vkr_shm **out)
{
	vkr_shm *shm;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (size == 0 || size > (size_t)INT64_MAX)
		return -EINVAL;
	shm = calloc(1, sizeof(*shm));
	if (!shm)
		return -ENOMEM;
	shm->size = size;
	shm->fd = memfd_create("vkreduce", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (shm->fd < 0) {
		err = -errno;
		goto err_free;
	}
	while (ftruncate(shm->fd, (off_t)size) < 0) {
		if (errno != EINTR) {
			err = -errno;
			goto err_close;
		}
	}
	shm->data = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, shm->fd, 0);
	if (shm->data == MAP_FAILED) {
		err = -errno;
		goto err_close;
	}
	*out = shm;
	return 0;

err_close:
	close(shm->fd);
err_free:
	free(shm);
	return err;
}

void *vkr_shm_data(const vkr_shm *shm)
{
	return shm->data;
}

size_t vkr_shm_size(const vkr_shm *shm)
{
	return shm->size;
}

int vkr_shm_fd(const vkr_shm *shm)
{
	return shm->fd;
}

int vkr_shm_seal(vkr_shm *shm)
{
	int seals;

	if (!shm)
		return -EINVAL;
	seals = fcntl(shm->fd, F_GET_SEALS);
	if (seals < 0)
		return -errno;
	if ((seals & SHM_SEALS) == SHM_SEALS)
		return 0;
	if (fcntl(shm->fd, F_ADD_SEALS, SHM_SEALS) < 0)
		return -errno;
	return 0;
}

void vkr_shm_free(vkr_shm *shm)
{
	if (!shm)
		return;
	munmap(shm->data, shm->size);
	close(shm->fd);
	free(shm);
}
