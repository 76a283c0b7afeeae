/* log.c: leveled logging to stderr. */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static enum log_level current_level = LOG_LEVEL_INFO;
/* stderr is the journal: prefix lines with <N> instead of the name and level in words. */
static bool journal;

static const char *const level_names[] = { "error", "warn", "info", "debug" };
/* syslog priorities of the levels: LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG. */
static const int level_priorities[] = { 3, 4, 6, 7 };

void log_set_level(enum log_level level)
{
	current_level = level;
}

enum log_level log_get_level(void)
{
	return current_level;
}

int log_level_parse(const char *name, enum log_level *out)
{
	for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
		if (strcmp(name, level_names[i]) == 0) {
			*out = (enum log_level)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *log_level_name(enum log_level level)
{
	return (unsigned)level < sizeof(level_names) / sizeof(level_names[0]) ? level_names[level] : "?";
}

bool log_init(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	char tail;

	/* systemd sets JOURNAL_STREAM=DEV:INODE for a stdout/stderr connected to the journal;
	 * it is inherited, so it only counts if it describes our own stderr (a daemon started by
	 * hand from a journal-logged shell writes to a terminal, where prefixes are noise). */
	journal = js && sscanf(js, "%llu:%llu%c", &dev, &ino, &tail) == 2 && fstat(STDERR_FILENO, &st) == 0 &&
		  (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
	return journal;
}

void log_set_journal(bool on)
{
	journal = on;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int len;
	int n;

	if (level > current_level)
		return;
	/* The journal turns the <N> prefix into the entry's priority and already records the
	 * program name; elsewhere the name and level in words are what a reader needs. */
	if (journal)
		len = snprintf(line, sizeof(line), "<%d>", level_priorities[level]);
	else
		len = snprintf(line, sizeof(line), "vkreduced: %s: ", level_names[level]);
	if (len < 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line + len, sizeof(line) - (size_t)len - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	len += n;
	if ((size_t)len > sizeof(line) - 2)
		len = (int)sizeof(line) - 2;
	line[len++] = '\n';
	/* One write so that lines of the two threads never interleave; a failed log write has
	 * nowhere to be reported. */
	ssize_t w = write(STDERR_FILENO, line, (size_t)len);
	(void)w;
}

bool log_ratelimit_ok(struct log_ratelimit *rl)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	if ((uint64_t)ts.tv_sec != rl->second) {
		if (rl->missed)
			log_warn("%llu similar messages suppressed", (unsigned long long)rl->missed);
		rl->second = (uint64_t)ts.tv_sec;
		rl->used = 0;
		rl->missed = 0;
	}
	if (rl->used >= rl->burst) {
		rl->missed++;
		return false;
	}
	rl->used++;
	return true;
}

void log_sanitize(const void *data, size_t len, char *out, size_t out_size)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = data;
	size_t o = 0;

	if (out_size == 0)
		return;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = p[i];
		if (c >= 0x20 && c < 0x7f && c != '\\') {
			if (o + 1 >= out_size)
				break;
			out[o++] = (char)c;
		} else {
			if (o + 4 >= out_size)
				break;
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o] = '\0';
}
