/* proto_path.h: where the daemon listens when no path is given. */
#ifndef VKR_PROTO_PATH_H
#define VKR_PROTO_PATH_H

#include <stddef.h>

/* Writes the default socket path into buf: $VKREDUCE_SOCKET if set and non-empty, else
 * /run/vkreduce/vkreduce.sock for root, else $XDG_RUNTIME_DIR/vkreduce.sock. Returns 0,
 * -ENAMETOOLONG if it does not fit (or exceeds sun_path), or -ENOENT when none applies
 * (not root and no XDG_RUNTIME_DIR). */
int proto_default_socket_path(char *buf, size_t size);

#endif
