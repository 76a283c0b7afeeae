/*
 * access.h: who may connect, and what each user holds. The socket's mode and group are the
 * first gate (the kernel checks them at connect); this is the second: the daemon reads the
 * peer's credentials (SO_PEERCRED, SO_PEERGROUPS) when it accepts and applies `allow_uids`
 * and `allow_groups`. It also keeps per-uid totals (connections, registered shared memory)
 * so that one user with many connections cannot take what the per-connection limits were
 * meant to share out.
 *
 * struct access is embedded in struct vkrd and needs no init: all zero means "everyone who
 * can open the socket" and an empty uid table. The uid table holds an entry only while the
 * uid has a connection open, so it is empty (and freed) once every connection closed.
 * Loop thread only.
 */
#ifndef VKRD_ACCESS_H
#define VKRD_ACCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Entries of each allow list; a list is a small, hand-written config value. */
#define ACCESS_LIST_MAX 64

/* What one user holds across all its connections. */
struct access_uid {
	uid_t uid;
	uint64_t connections;  /* open now */
	uint64_t shm_bytes;    /* registered now */
};

struct access {
	/* Allow lists. Both empty: everyone. Otherwise a peer is let in when its uid is in
	 * uids, or its primary or any supplementary group is in gids. Root is always let in
	 * (administration, `vkreduce stats`). */
	uid_t uids[ACCESS_LIST_MAX];
	size_t nuids;
	gid_t gids[ACCESS_LIST_MAX];
	size_t ngids;

	struct access_uid *users;  /* owned, may be NULL: one entry per uid with a connection */
	size_t nusers, users_cap;
};

/* A peer's credentials as read from its socket. */
struct access_peer {
	pid_t pid;
	uid_t uid;
	gid_t gid;
	gid_t groups[ACCESS_LIST_MAX]; /* supplementary groups, may be truncated */
	size_t ngroups;
};

/*
 * Replaces the allow lists from their text form: comma- or space-separated user (group)
 * names or numbers; NULL or "" leaves that list empty. Names are resolved now (at start or
 * reload), never per connection, so an NSS lookup cannot block the loop. On error (unknown
 * name, too many entries) nothing changes and err says what; returns -EINVAL or -E2BIG.
 */
int access_set_allow(struct access *a, const char *uids, const char *groups, char *err, size_t err_size);
/* Renders the allow lists (for logs and `stats`): "uids 1000,1001; groups 27" or "everyone". */
void access_describe(const struct access *a, char *out, size_t out_size);

/* Reads SO_PEERCRED (and SO_PEERGROUPS where the kernel has it) of a connected socket.
 * 0 or -errno. */
int access_read_peer(int fd, struct access_peer *peer);
/* Whether the allow lists let this peer in. */
bool access_allowed(const struct access *a, const struct access_peer *peer);

/* Counts a connection of uid, unless the uid already has max_per_uid: 0, -EUSERS (over
 * the limit) or -ENOMEM. */
int access_conn_open(struct access *a, uid_t uid, uint64_t max_per_uid);
/* Uncounts it; the uid's entry goes when it holds nothing. */
void access_conn_close(struct access *a, uid_t uid);
/* Registered shared-memory bytes of the uid (0 for a uid without an open connection). */
uint64_t access_shm_bytes(const struct access *a, uid_t uid);
/* Charges bytes to uid unless that would pass max_bytes: 0 or -EDQUOT. The uid must have an
 * open connection. */
int access_shm_charge(struct access *a, uid_t uid, uint64_t bytes, uint64_t max_bytes);
void access_shm_release(struct access *a, uid_t uid, uint64_t bytes);
/* Frees the uid table (every connection is closed). */
void access_finish(struct access *a);

#endif /* VKRD_ACCESS_H */
