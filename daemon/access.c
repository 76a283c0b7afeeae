/* access.c: peer credentials, allow lists, per-uid accounting; see access.h. */
#include "access.h"

#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#ifndef SO_PEERGROUPS
#define SO_PEERGROUPS 59
#endif

/* Parses a decimal id without sign, spaces or overflow (uid_t and gid_t are 32 bits). */
static bool parse_id(const char *s, uint32_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
		if (v >= UINT32_MAX) /* (uid_t)-1 means "no id" to the kernel */
			return false;
	}
	*out = (uint32_t)v;
	return true;
}

/* Splits text at commas and spaces and resolves each item. groups: group names, else user
 * names. Returns 0 or -errno with err set. */
static int parse_list(const char *text, bool groups, uint32_t *ids, size_t *count, char *err, size_t err_size)
{
	const char *what = groups ? "allow_groups" : "allow_uids";
	const char *p = text ? text : "";
	size_t n = 0;

	while (*p) {
		char item[256];
		size_t len = strcspn(p, ", \t");
		uint32_t id;

		if (len == 0) {
			p++;
			continue;
		}
		if (len >= sizeof(item)) {
			snprintf(err, err_size, "%s: entry of %zu characters is too long", what, len);
			return -EINVAL;
		}
		memcpy(item, p, len);
		item[len] = '\0';
		p += len;
		if (!parse_id(item, &id)) {
			/* Names resolve here, at start or reload, and never per connection. */
			if (groups) {
				struct group *g = getgrnam(item);
				if (!g) {
					snprintf(err, err_size, "%s: no group '%s'", what, item);
					return -EINVAL;
				}
				id = (uint32_t)g->gr_gid;
			} else {
				struct passwd *pw = getpwnam(item);
				if (!pw) {
					snprintf(err, err_size, "%s: no user '%s'", what, item);
					return -EINVAL;
				}
				id = (uint32_t)pw->pw_uid;
			}
		}
		if (n == ACCESS_LIST_MAX) {
			snprintf(err, err_size, "%s: more than %d entries", what, ACCESS_LIST_MAX);
			return -E2BIG;
		}
		ids[n++] = id;
	}
	*count = n;
	return 0;
}

int access_set_allow(struct access *a, const char *uids, const char *groups, char *err, size_t err_size)
{
	uint32_t u[ACCESS_LIST_MAX], g[ACCESS_LIST_MAX];
	size_t nu = 0, ng = 0;
	int r;

	if ((r = parse_list(uids, false, u, &nu, err, err_size)) ||
	    (r = parse_list(groups, true, g, &ng, err, err_size)))
		return r;
	for (size_t i = 0; i < nu; i++)
		a->uids[i] = (uid_t)u[i];
	for (size_t i = 0; i < ng; i++)
		a->gids[i] = (gid_t)g[i];
	a->nuids = nu;
	a->ngids = ng;
	return 0;
}

void access_describe(const struct access *a, char *out, size_t out_size)
{
	size_t off = 0;

	if (out_size == 0)
		return;
	out[0] = '\0';
	if (a->nuids == 0 && a->ngids == 0) {
		snprintf(out, out_size, "everyone who can open the socket");
		return;
	}
#define APPEND_(...)                                                                               \
	do {                                                                                       \
		int n_ = snprintf(out + off, out_size - off, __VA_ARGS__);                         \
		if (n_ < 0 || (size_t)n_ >= out_size - off)                                        \
			return;                                                                    \
		off += (size_t)n_;                                                                 \
	} while (0)
	APPEND_("uids");
	for (size_t i = 0; i < a->nuids; i++)
		APPEND_("%s%u", i ? "," : " ", (unsigned)a->uids[i]);
	if (a->nuids == 0)
		APPEND_(" -");
	APPEND_("; groups");
	for (size_t i = 0; i < a->ngids; i++)
		APPEND_("%s%u", i ? "," : " ", (unsigned)a->gids[i]);
	if (a->ngids == 0)
		APPEND_(" -");
#undef APPEND_
}

int access_read_peer(int fd, struct access_peer *peer)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	gid_t groups[ACCESS_LIST_MAX];
	socklen_t glen = sizeof(groups);

	memset(peer, 0, sizeof(*peer));
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return -errno;
	if (len != sizeof(cred))
		return -EPROTO;
	peer->pid = cred.pid;
	peer->uid = cred.uid;
	peer->gid = cred.gid;
	/* Supplementary groups as the peer had them at connect (Linux 4.13+). ERANGE means it
	 * has more than fit: the first ACCESS_LIST_MAX are checked, which can only refuse, never
	 * admit, someone wrongly. Without SO_PEERGROUPS only the primary group counts. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &glen) == 0) {
		peer->ngroups = glen / sizeof(gid_t);
		if (peer->ngroups > ACCESS_LIST_MAX)
			peer->ngroups = ACCESS_LIST_MAX;
		memcpy(peer->groups, groups, peer->ngroups * sizeof(gid_t));
	}
	return 0;
}

bool access_allowed(const struct access *a, const struct access_peer *peer)
{
	if (a->nuids == 0 && a->ngids == 0)
		return true;
	/* Root can read the daemon's memory anyway; refusing it would only hamper operators. */
	if (peer->uid == 0)
		return true;
	for (size_t i = 0; i < a->nuids; i++)
		if (a->uids[i] == peer->uid)
			return true;
	for (size_t i = 0; i < a->ngids; i++) {
		if (a->gids[i] == peer->gid)
			return true;
		for (size_t j = 0; j < peer->ngroups; j++)
			if (a->gids[i] == peer->groups[j])
				return true;
	}
	return false;
}

/* The entry of uid, or NULL. The table is short: one entry per user with a connection. */
static struct access_uid *find_user(const struct access *a, uid_t uid)
{
	for (size_t i = 0; i < a->nusers; i++)
		if (a->users[i].uid == uid)
			return &a->users[i];
	return NULL;
}

static void drop_if_empty(struct access *a, struct access_uid *u)
{
	if (u->connections > 0 || u->shm_bytes > 0)
		return;
	*u = a->users[--a->nusers];
	if (a->nusers == 0)
		access_finish(a);
}

int access_conn_open(struct access *a, uid_t uid, uint64_t max_per_uid)
{
	struct access_uid *u = find_user(a, uid);

	if (u) {
		if (u->connections >= max_per_uid)
			return -EUSERS;
		u->connections++;
		return 0;
	}
	if (max_per_uid == 0)
		return -EUSERS;
	if (a->nusers == a->users_cap) {
		size_t cap = a->users_cap ? a->users_cap * 2 : 8;
		struct access_uid *grown = realloc(a->users, cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		a->users = grown;
		a->users_cap = cap;
	}
	a->users[a->nusers++] = (struct access_uid){ .uid = uid, .connections = 1 };
	return 0;
}

void access_conn_close(struct access *a, uid_t uid)
{
	struct access_uid *u = find_user(a, uid);

	if (!u || u->connections == 0)
		return;
	u->connections--;
	drop_if_empty(a, u);
}

uint64_t access_shm_bytes(const struct access *a, uid_t uid)
{
	const struct access_uid *u = find_user(a, uid);

	return u ? u->shm_bytes : 0;
}

int access_shm_charge(struct access *a, uid_t uid, uint64_t bytes, uint64_t max_bytes)
{
	struct access_uid *u = find_user(a, uid);

	/* Compare by subtraction so that no size can overflow the sum. */
	if (!u || u->shm_bytes > max_bytes || bytes > max_bytes - u->shm_bytes)
		return -EDQUOT;
	u->shm_bytes += bytes;
	return 0;
}

void access_shm_release(struct access *a, uid_t uid, uint64_t bytes)
{
	struct access_uid *u = find_user(a, uid);

	if (!u)
		return;
	u->shm_bytes -= bytes < u->shm_bytes ? bytes : u->shm_bytes;
	drop_if_empty(a, u);
}

void access_finish(struct access *a)
{
	free(a->users);
	a->users = NULL;
	a->nusers = a->users_cap = 0;
}
