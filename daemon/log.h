/*
 * log.h: leveled logging to stderr, plus a rate limiter and a sanitizer for logging samples
 * of bytes that came from untrusted clients. When stderr is connected to the journal
 * ($JOURNAL_STREAM names stderr's device and inode, see systemd.exec(5)), each line starts
 * with the sd-daemon priority prefix "<3>".."<7>" so that the journal records the level;
 * otherwise lines read "vkreduced: LEVEL: message".
 * Loop thread and completion thread may both log: each message is one write(2).
 */
#ifndef VKRD_LOG_H
#define VKRD_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum log_level { LOG_LEVEL_ERROR, LOG_LEVEL_WARN, LOG_LEVEL_INFO, LOG_LEVEL_DEBUG };

void log_set_level(enum log_level level);
enum log_level log_get_level(void);
/* Parses "error", "warn", "info" or "debug": 0 or -EINVAL. */
int log_level_parse(const char *name, enum log_level *out);
/* The name of a level ("info"). */
const char *log_level_name(enum log_level level);
/* Decides from $JOURNAL_STREAM whether stderr is the journal (see above); call once at
 * start, before threads. Returns whether the priority prefixes are on. */
bool log_init(void);
/* Forces the priority prefixes on or off (tests). */
void log_set_journal(bool on);

void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_LEVEL_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LEVEL_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LEVEL_DEBUG, __VA_ARGS__)

/* A per-call-site budget of `burst` messages per second, so that a hostile client cannot
 * flood the log. */
struct log_ratelimit {
	uint64_t second; /* the second the budget belongs to */
	unsigned used;   /* messages logged in that second */
	unsigned burst;  /* messages allowed per second */
	uint64_t missed; /* messages suppressed since the last one logged */
};
#define LOG_RATELIMIT_INIT(burst_) { 0, 0, (burst_), 0 }
/* Whether a message may be logged now. */
bool log_ratelimit_ok(struct log_ratelimit *rl);

/* Writes a printable, bounded rendering of untrusted bytes into out (always terminated):
 * printable ASCII as is, everything else as \xNN, at most out_size-1 characters. */
void log_sanitize(const void *data, size_t len, char *out, size_t out_size);

#endif /* VKRD_LOG_H */
