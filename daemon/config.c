/* config.c: the settings table, the "key = value" file parser and reloads. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum kind {
	KIND_PATH,      /* char *, "" means unset */
	KIND_STRING,    /* char *, "" means unset */
	KIND_MODE,      /* mode_t, octal */
	KIND_LOG_LEVEL, /* enum log_level */
	KIND_DURATION,  /* uint64_t milliseconds: "10", "10s", "2.5s", "500ms" */
	KIND_BOOL,      /* bool */
	KIND_LIMIT,     /* uint64_t in struct limits, with k/M/G suffixes and a range */
};

struct key {
	const char *name;
	enum kind kind;
	size_t offset;       /* of the value in struct config */
	const char *arg;     /* placeholder in --help; NULL: a flag without argument */
	const char *help;
	bool reloadable;
	uint64_t def, lo, hi; /* KIND_LIMIT only */
};

#define MAX_DRAIN_MS (24ull * 3600 * 1000)

static const struct key keys[] = {
	{ "socket", KIND_PATH, offsetof(struct config, socket), "PATH",
	  "listen here unless socket-activated (default: $VKREDUCE_SOCKET, else /run/vkreduce/vkreduce.sock "
	  "as root, else $XDG_RUNTIME_DIR/vkreduce.sock)", false, 0, 0, 0 },
	{ "socket-mode", KIND_MODE, offsetof(struct config, socket_mode), "MODE",
	  "octal permissions of a socket the daemon creates itself (default 0660)", false, 0, 0, 0 },
	{ "device", KIND_STRING, offsetof(struct config, device), "NAME|INDEX",
	  "Vulkan device by index or name substring (default: $VKR_DEVICE, else the best: "
	  "discrete > integrated > virtual > cpu)", false, 0, 0, 0 },
	{ "log-level", KIND_LOG_LEVEL, offsetof(struct config, log_level), "LEVEL",
	  "error, warn, info (default) or debug", true, 0, 0, 0 },
	{ "drain-timeout", KIND_DURATION, offsetof(struct config, drain_timeout_ms), "SECONDS",
	  "on SIGTERM, how long to finish accepted work before answering the rest 'shutting down' "
	  "(default 10; also 500ms, 2.5s)", true, 0, 0, 0 },
	{ "state-dir", KIND_PATH, offsetof(struct config, state_dir), "DIR",
	  "keep the Vulkan pipeline cache here (default: $STATE_DIRECTORY; empty: no cache)", false, 0, 0, 0 },
	{ "allow-uids", KIND_STRING, offsetof(struct config, allow_uids), "LIST",
	  "users (names or uids, comma-separated) who may connect", true, 0, 0, 0 },
	{ "allow-groups", KIND_STRING, offsetof(struct config, allow_groups), "LIST",
	  "groups whose members may connect (default for both: everyone who can open the socket; "
	  "see docs/SECURITY.md)", true, 0, 0, 0 },
	{ "validation", KIND_BOOL, offsetof(struct config, validation), NULL,
	  "enable the Khronos validation layer (also VKR_VALIDATION=1); the exit status is 3 if it "
	  "reported anything", false, 0, 0, 0 },
#define LIMITS_X_(field, flag, def_, lo_, hi_, help_)                                               \
	{ flag, KIND_LIMIT, offsetof(struct config, limits.field), "N", help_, true, def_, lo_, hi_ },
	LIMITS_MAP(LIMITS_X_)
#undef LIMITS_X_
};
#define KEY_COUNT (sizeof(keys) / sizeof(keys[0]))

/* Limits sized into allocations when the daemon starts (the batch's job arrays and the
 * rings): changing them in a running daemon would need those rebuilt, so a reload leaves
 * them and says so. Every other limit is read where it is enforced and may change at once.
 * test_config checks that each name here is a key of the table. */
static const char *const restart_only_limits[] = {
	"max-batch-jobs",
	"upload-ring-bytes",
	"readback-ring-bytes",
	"scratch-ring-bytes",
};

size_t config_key_count(void)
{
	return KEY_COUNT;
}

const char *config_key_name(size_t key)
{
	return key < KEY_COUNT ? keys[key].name : NULL;
}

const char *config_key_arg(size_t key)
{
	return key < KEY_COUNT ? keys[key].arg : NULL;
}

bool config_key_reloadable(size_t key)
{
	if (key >= KEY_COUNT || !keys[key].reloadable)
		return false;
	for (size_t i = 0; i < sizeof(restart_only_limits) / sizeof(restart_only_limits[0]); i++)
		if (strcmp(keys[key].name, restart_only_limits[i]) == 0)
			return false;
	return true;
}

int config_key_find(const char *name)
{
	for (size_t k = 0; k < KEY_COUNT; k++) {
		const char *a = keys[k].name, *b = name;
		while (*a && (*a == *b || (*a == '-' && *b == '_'))) {
			a++;
			b++;
		}
		if (*a == '\0' && *b == '\0')
			return (int)k;
	}
	return -ENOENT;
}

static void *field(struct config *c, size_t key)
{
	return (char *)c + keys[key].offset;
}

static const void *cfield(const struct config *c, size_t key)
{
	return (const char *)c + keys[key].offset;
}

int config_init(struct config *c)
{
	const char *state = getenv("STATE_DIRECTORY");

	memset(c, 0, sizeof(*c));
	c->socket_mode = 0660;
	c->log_level = LOG_LEVEL_INFO;
	c->drain_timeout_ms = 10 * 1000;
	limits_init(&c->limits);
	/* systemd passes a colon-separated list when StateDirectory= names several; ours is the
	 * first. */
	if (state && *state) {
		size_t len = strcspn(state, ":");
		if (!(c->state_dir = strndup(state, len)))
			return -ENOMEM;
	}
	return 0;
}

void config_finish(struct config *c)
{
	free(c->socket);
	free(c->device);
	free(c->state_dir);
	free(c->allow_uids);
	free(c->allow_groups);
	c->socket = c->device = c->state_dir = c->allow_uids = c->allow_groups = NULL;
}

/* ---- values ------------------------------------------------------------------------------ */

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno)
		return -errno;
	if (*end == 'k' || *end == 'K')
		shift = 10;
	else if (*end == 'M')
		shift = 20;
	else if (*end == 'G')
		shift = 30;
	if (shift)
		end++;
	if (*end != '\0')
		return -EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*out = (uint64_t)v << shift;
	return 0;
}

/* "10", "10s", "2.5s", "500ms" -> milliseconds. */
static int parse_duration_ms(const char *s, uint64_t *out)
{
	char *end;
	double v;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || v < 0)
		return -EINVAL;
	if (strcmp(end, "ms") == 0)
		v /= 1000;
	else if (*end != '\0' && strcmp(end, "s") != 0)
		return -EINVAL;
	if (v * 1000 > (double)MAX_DRAIN_MS)
		return -ERANGE;
	*out = (uint64_t)(v * 1000 + 0.5);
	return 0;
}

static int parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "1", "yes", "true", "on" }, *const no[] = { "0", "no", "false", "off" };

	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

int config_set(struct config *c, size_t key, const char *value, char *err, size_t err_size)
{
	const struct key *k = &keys[key];
	char shown[96];
	void *p = field(c, key);

	/* The value came from a file or a command line: show it printable and bounded. */
	log_sanitize(value, strlen(value), shown, sizeof(shown));
	switch (k->kind) {
	case KIND_PATH:
	case KIND_STRING: {
		char *copy = NULL;
		if (*value && !(copy = strdup(value))) {
			snprintf(err, err_size, "%s: out of memory", k->name);
			return -ENOMEM;
		}
		free(*(char **)p);
		*(char **)p = copy;
		return 0;
	}
	case KIND_MODE: {
		char *end;
		unsigned long mode;
		errno = 0;
		mode = strtoul(value, &end, 8);
		if (*value < '0' || *value > '7' || *end != '\0' || errno || mode > 07777) {
			snprintf(err, err_size, "%s: expected an octal mode like 0660, got '%s'", k->name, shown);
			return -EINVAL;
		}
		*(mode_t *)p = (mode_t)mode;
		return 0;
	}
	case KIND_LOG_LEVEL:
		if (log_level_parse(value, (enum log_level *)p)) {
			snprintf(err, err_size, "%s: expected error, warn, info or debug, got '%s'", k->name, shown);
			return -EINVAL;
		}
		return 0;
	case KIND_DURATION:
		if (parse_duration_ms(value, (uint64_t *)p)) {
			snprintf(err, err_size, "%s: expected seconds from 0 to 86400 (like 10, 2.5s or 500ms), got '%s'",
				 k->name, shown);
			return -EINVAL;
		}
		return 0;
	case KIND_BOOL:
		if (parse_bool(value, (bool *)p)) {
			snprintf(err, err_size, "%s: expected true or false (yes/no, on/off, 1/0), got '%s'", k->name,
				 shown);
			return -EINVAL;
		}
		return 0;
	case KIND_LIMIT: {
		uint64_t v;
		if (parse_u64(value, &v) || v < k->lo || v > k->hi) {
			snprintf(err, err_size, "%s: expected a number from %" PRIu64 " to %" PRIu64
				 " (k, M, G suffixes allowed), got '%s'", k->name, k->lo, k->hi, shown);
			return -EINVAL;
		}
		*(uint64_t *)p = v;
		return 0;
	}
	}
	snprintf(err, err_size, "%s: unknown kind of setting", k->name);
	return -EINVAL;
}

/* The value of key in c as text, for logs. */
static void format_value(const struct config *c, size_t key, char *buf, size_t size)
{
	const void *p = cfield(c, key);

	switch (keys[key].kind) {
	case KIND_PATH:
	case KIND_STRING: snprintf(buf, size, "'%s'", *(char *const *)p ? *(char *const *)p : ""); break;
	case KIND_MODE: snprintf(buf, size, "%04o", (unsigned)*(const mode_t *)p); break;
	case KIND_LOG_LEVEL: snprintf(buf, size, "%s", log_level_name(*(const enum log_level *)p)); break;
	case KIND_DURATION: snprintf(buf, size, "%" PRIu64 "ms", *(const uint64_t *)p); break;
	case KIND_BOOL: snprintf(buf, size, "%s", *(const bool *)p ? "true" : "false"); break;
	case KIND_LIMIT: snprintf(buf, size, "%" PRIu64, *(const uint64_t *)p); break;
	}
}

static bool same_value(const struct config *a, const struct config *b, size_t key)
{
	const void *pa = cfield(a, key), *pb = cfield(b, key);

	switch (keys[key].kind) {
	case KIND_PATH:
	case KIND_STRING: {
		const char *sa = *(char *const *)pa, *sb = *(char *const *)pb;
		return (!sa && !sb) || (sa && sb && strcmp(sa, sb) == 0);
	}
	case KIND_MODE: return *(const mode_t *)pa == *(const mode_t *)pb;
	case KIND_LOG_LEVEL: return *(const enum log_level *)pa == *(const enum log_level *)pb;
	case KIND_BOOL: return *(const bool *)pa == *(const bool *)pb;
	case KIND_DURATION:
	case KIND_LIMIT: return *(const uint64_t *)pa == *(const uint64_t *)pb;
	}
	return true;
}

/* ---- the file ---------------------------------------------------------------------------- */

static bool is_blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r';
}

/* Trims [*b, *e) of blanks. */
static void trim(const char **b, const char **e)
{
	while (*b < *e && is_blank(**b))
		(*b)++;
	while (*e > *b && is_blank((*e)[-1]))
		(*e)--;
}

int config_parse_text(struct config *c, const char *name, const char *text, size_t len, char *err,
		      size_t err_size)
{
	const char *p = text, *end = text + len;
	unsigned line = 0;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *b = p, *e = eol ? eol : end, *eq;
		char key[128], value[CONFIG_MAX_LINE_BYTES], why[512];
		int k, r;

		line++;
		p = eol ? eol + 1 : end;
		if ((size_t)(e - b) >= CONFIG_MAX_LINE_BYTES) {
			snprintf(err, err_size, "%s:%u: line longer than %u bytes", name, line, CONFIG_MAX_LINE_BYTES - 1);
			return -EINVAL;
		}
		if (memchr(b, '\0', (size_t)(e - b))) {
			snprintf(err, err_size, "%s:%u: NUL byte in the line", name, line);
			return -EINVAL;
		}
		trim(&b, &e);
		if (b == e || *b == '#')
			continue;
		eq = memchr(b, '=', (size_t)(e - b));
		if (!eq) {
			snprintf(err, err_size, "%s:%u: expected 'key = value'", name, line);
			return -EINVAL;
		}
		{
			const char *kb = b, *ke = eq, *vb = eq + 1, *ve = e;
			trim(&kb, &ke);
			trim(&vb, &ve);
			if (ke == kb || (size_t)(ke - kb) >= sizeof(key)) {
				snprintf(err, err_size, "%s:%u: expected 'key = value'", name, line);
				return -EINVAL;
			}
			memcpy(key, kb, (size_t)(ke - kb));
			key[ke - kb] = '\0';
			/* Quotes keep blanks at the ends of a value. */
			if (ve - vb >= 2 && *vb == '"' && ve[-1] == '"') {
				vb++;
				ve--;
			}
			memcpy(value, vb, (size_t)(ve - vb));
			value[ve - vb] = '\0';
		}
		if ((k = config_key_find(key)) < 0) {
			char shown[200];
			log_sanitize(key, strlen(key), shown, sizeof(shown));
			snprintf(err, err_size, "%s:%u: unknown key '%s' (see vkreduced --help)", name, line, shown);
			return -EINVAL;
		}
		if ((r = config_set(c, (size_t)k, value, why, sizeof(why)))) {
			snprintf(err, err_size, "%s:%u: %s", name, line, why);
			return r;
		}
	}
	return 0;
}

int config_parse_file(struct config *c, const char *path, char *err, size_t err_size)
{
	struct stat st;
	char *text;
	size_t len = 0;
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		r = -errno;
		snprintf(err, err_size, "%s: %s", path, strerror(errno));
		return r;
	}
	if (fstat(fd, &st) < 0 || S_ISDIR(st.st_mode)) {
		r = S_ISDIR(st.st_mode) ? -EISDIR : -errno;
		snprintf(err, err_size, "%s: %s", path, strerror(-r));
		close(fd);
		return r;
	}
	/* Read to the end rather than trusting st_size, so that /dev/null (no settings) and
	 * pipes work too; one byte more than the cap tells an oversized file. */
	if (!(text = malloc(CONFIG_MAX_FILE_BYTES + 1))) {
		snprintf(err, err_size, "%s: out of memory", path);
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t n = read(fd, text + len, CONFIG_MAX_FILE_BYTES + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			snprintf(err, err_size, "%s: %s", path, strerror(errno));
			free(text);
			close(fd);
			return r;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > CONFIG_MAX_FILE_BYTES) {
			snprintf(err, err_size, "%s: larger than %u bytes", path, CONFIG_MAX_FILE_BYTES);
			free(text);
			close(fd);
			return -EFBIG;
		}
	}
	close(fd);
	r = config_parse_text(c, path, text, len, err, err_size);
	free(text);
	return r;
}

size_t config_apply_reload(struct config *cur, const struct config *next)
{
	size_t applied = 0;

	for (size_t k = 0; k < KEY_COUNT; k++) {
		char was[160], now[160];
		if (same_value(cur, next, k))
			continue;
		format_value(cur, k, was, sizeof(was));
		format_value(next, k, now, sizeof(now));
		if (!config_key_reloadable(k)) {
			log_warn("reload: %s changed from %s to %s; that takes effect at the next start", keys[k].name,
				 was, now);
			continue;
		}
		switch (keys[k].kind) {
		case KIND_LOG_LEVEL: *(enum log_level *)field(cur, k) = *(const enum log_level *)cfield(next, k); break;
		case KIND_DURATION:
		case KIND_LIMIT: *(uint64_t *)field(cur, k) = *(const uint64_t *)cfield(next, k); break;
		case KIND_MODE: *(mode_t *)field(cur, k) = *(const mode_t *)cfield(next, k); break;
		case KIND_BOOL: *(bool *)field(cur, k) = *(const bool *)cfield(next, k); break;
		case KIND_PATH:
		case KIND_STRING: {
			const char *v = *(char *const *)cfield(next, k);
			char *copy = NULL;
			if (v && !(copy = strdup(v))) {
				log_error("reload: %s: out of memory; keeping %s", keys[k].name, was);
				continue;
			}
			free(*(char **)field(cur, k));
			*(char **)field(cur, k) = copy;
			break;
		}
		}
		log_info("reload: %s: %s -> %s", keys[k].name, was, now);
		applied++;
	}
	return applied;
}

void config_print_help(FILE *f)
{
	for (size_t k = 0; k < KEY_COUNT; k++) {
		char flag[64], text[640];
		const char *help = text;
		snprintf(flag, sizeof(flag), "--%s%s%s", keys[k].name, keys[k].arg ? " " : "",
			 keys[k].arg ? keys[k].arg : "");
		if (keys[k].kind == KIND_LIMIT)
			snprintf(text, sizeof(text), "%s (default %" PRIu64 ")", keys[k].help, keys[k].def);
		else
			snprintf(text, sizeof(text), "%s", keys[k].help);
		fprintf(f, "  %-30s ", flag);
		/* Wrap at about 100 columns, continuing under the help column. */
		while (strlen(help) > 66) {
			int cut = 66;
			while (cut > 0 && help[cut] != ' ')
				cut--;
			if (cut == 0)
				break;
			fprintf(f, "%.*s\n  %-30s ", cut, help, "");
			help += cut + 1;
		}
		fprintf(f, "%s\n", help);
	}
}
