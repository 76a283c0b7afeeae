/*
 * config.h: every setting of vkreduced, from defaults, the configuration file and the
 * command line, in that order of precedence (flags override the file).
 *
 * One table of keys drives both the file and the flags: the settings listed in config.c,
 * then every row of LIMITS_MAP (daemon_limits.h), so a limit added there is at once a flag,
 * a configuration key and a line of --help. A key is spelled as its long flag without the
 * dashes ("max-connections"); the file also accepts underscores ("max_connections").
 *
 * The file format: one "key = value" a line; blank lines and lines whose first non-blank
 * character is '#' are ignored; spaces around key and value are trimmed; a value may be put
 * in double quotes to keep spaces at its ends. A later line overrides an earlier one.
 *
 * Not thread-safe; the daemon uses it on the main thread only.
 */
#ifndef VKRD_CONFIG_H
#define VKRD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "daemon_limits.h"
#include "log.h"

#define CONFIG_DEFAULT_PATH "/etc/vkreduce/vkreduced.conf"
#define CONFIG_MAX_FILE_BYTES (1u << 20)
#define CONFIG_MAX_LINE_BYTES 4096

struct config {
	char *socket;           /* owned, may be NULL: listen path (NULL: the default path) */
	mode_t socket_mode;     /* permissions of a socket the daemon creates */
	char *device;           /* owned, may be NULL: device index or name substring */
	enum log_level log_level;
	uint64_t drain_timeout_ms; /* how long SIGTERM waits for accepted work */
	char *state_dir;        /* owned, may be NULL: pipeline cache directory (NULL: none) */
	char *allow_uids;       /* owned, may be NULL: who may connect (access.c) */
	char *allow_groups;     /* owned, may be NULL */
	bool validation;        /* Khronos validation layer */
	struct limits limits;
};

/* Sets the defaults. state_dir defaults to the first entry of $STATE_DIRECTORY (which
 * systemd sets from StateDirectory=). Returns 0 or -ENOMEM. */
int config_init(struct config *c);
/* Frees the strings. Accepts a zeroed struct. */
void config_finish(struct config *c);

/* The keys, in --help order: index 0 .. config_key_count()-1. */
size_t config_key_count(void);
const char *config_key_name(size_t key);
/* The placeholder of the value in --help ("PATH", "N", ...), NULL for a boolean flag that
 * takes no argument on the command line. */
const char *config_key_arg(size_t key);
/* Finds a key by name ('_' matches '-'); returns its index or -ENOENT. */
int config_key_find(const char *name);
/* Whether a changed value takes effect on SIGHUP (false: only at the next start). */
bool config_key_reloadable(size_t key);

/* Sets key from its text form (as in the file or on the command line). On a bad value
 * writes "KEY: expected ..., got 'VALUE'" into err and returns -EINVAL (or -ENOMEM). */
int config_set(struct config *c, size_t key, const char *value, char *err, size_t err_size);

/* Applies the "key = value" lines of text; name is used in errors, which read
 * "NAME:LINE: ..." (an unknown key, a line without '=', a bad value). Stops at the first
 * error and returns -EINVAL; c may then hold the lines before it. */
int config_parse_text(struct config *c, const char *name, const char *text, size_t len, char *err,
		      size_t err_size);
/* Reads and applies the file at path. A missing file is -ENOENT with a message in err; the
 * caller decides whether that matters (the default path may be absent, an explicit one not). */
int config_parse_file(struct config *c, const char *path, char *err, size_t err_size);

/* Compares next with cur and copies every reloadable value that changed into cur, logging
 * each change; a changed value that needs a restart is logged and left as it is. Returns
 * the number of values applied. */
size_t config_apply_reload(struct config *cur, const struct config *next);

/* Writes one help line per key (used by --help). */
void config_print_help(FILE *f);

#endif /* VKRD_CONFIG_H */
