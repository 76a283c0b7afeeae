/*
 * server.h: the listening Unix stream socket. Refuses to start when a live daemon answers
 * on the path, removes a stale socket file, accepts connections into conn objects.
 * Loop thread only.
 */
#ifndef VKRD_SERVER_H
#define VKRD_SERVER_H

#include <stddef.h>
#include <sys/types.h>

struct vkrd;
struct server;

/* Binds and listens on path with the given mode (e.g. 0660). On failure writes a one-line
 * reason into err and returns -EADDRINUSE (a live daemon), -EEXIST (not a socket),
 * -ENAMETOOLONG or another -errno. */
int server_create(struct vkrd *d, const char *path, mode_t mode, struct server **out, char *err,
		  size_t err_size);
/* Serves on fd, a listening Unix stream socket handed over by socket activation (checked:
 * anything else is refused with a reason in err). The socket file belongs to the service
 * manager and is never removed. Takes fd over on success only. */
int server_adopt(struct vkrd *d, int fd, struct server **out, char *err, size_t err_size);
/* The path the server listens on, for logs. */
const char *server_path(const struct server *server);
/* Stops accepting, closes the socket and removes the socket file if it is still ours.
 * The memory is freed once the loop has closed the handle. Accepts NULL. */
void server_destroy(struct server *server);
/* Starts accepting again after running out of fds paused it. Accepts NULL. */
void server_resume(struct server *server);

#endif /* VKRD_SERVER_H */
