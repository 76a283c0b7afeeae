#include "proto_path.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/un.h>
#include <unistd.h>

int proto_default_socket_path(char *buf, size_t size)
{
	const char *env = getenv("VKREDUCE_SOCKET");
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	int len;

	if (env && *env)
		len = snprintf(buf, size, "%s", env);
	else if (geteuid() == 0)
		len = snprintf(buf, size, "/run/vkreduce/vkreduce.sock");
	else if (xdg && *xdg)
		len = snprintf(buf, size, "%s/vkreduce.sock", xdg);
	else
		return -ENOENT;
	if (len < 0 || (size_t)len >= size || (size_t)len >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return -ENAMETOOLONG;
	return 0;
}
