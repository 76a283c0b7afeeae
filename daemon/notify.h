/*
 * notify.h: talking to the service manager, implemented by hand rather than with libsystemd
 * so that the daemon has the same behaviour (and the same tests) whether or not libsystemd is
 * installed. Both protocols are small, stable and documented in sd_notify(3) and
 * sd_listen_fds(3):
 *
 *  - readiness, status and the watchdog are datagrams of "KEY=value" lines sent to the
 *    AF_UNIX socket named by $NOTIFY_SOCKET (a path, or "@name" in the abstract namespace);
 *  - socket activation hands over $LISTEN_FDS descriptors starting at fd 3, meant for the
 *    process whose pid is $LISTEN_PID.
 *
 * The service part (notify_service_*) runs on the loop: STATUS= at most once a second, and
 * WATCHDOG=1 only while the GPU makes progress (see notify_watchdog_should_feed). Loop thread
 * only, like the rest of the daemon.
 */
#ifndef VKRD_NOTIFY_H
#define VKRD_NOTIFY_H

#include <stdbool.h>
#include <stdint.h>

struct vkrd;
struct notify_service;

/* First descriptor of socket activation, SD_LISTEN_FDS_START in sd-daemon.h. */
#define NOTIFY_LISTEN_FDS_START 3

/* Sends state (for example "READY=1\nSTATUS=serving") to $NOTIFY_SOCKET. Returns 1 when
 * sent, 0 when there is no $NOTIFY_SOCKET (not run by a service manager), or -errno. */
int notify_send(const char *state);
/* printf-style notify_send. */
int notify_sendf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The descriptors passed by socket activation: returns their number (0 when the
 * environment passes none or names another process), or -EINVAL for a malformed
 * environment. They start at NOTIFY_LISTEN_FDS_START and are made close-on-exec; the
 * variables are removed from the environment so that they are not used twice. */
int notify_listen_fds(void);

/* The watchdog interval in microseconds from $WATCHDOG_USEC (0: no watchdog; also 0 when
 * $WATCHDOG_PID names another process). */
uint64_t notify_watchdog_usec(void);

/*
 * Whether the watchdog may be fed now. The watchdog is meant to catch a GPU (or a loop)
 * that stopped completing work, so it is fed only when
 *  - nothing is queued or on the GPU (idle: the loop that asks is alive and owes nothing), or
 *  - a batch completed within the last interval (the GPU makes progress).
 * Work that is queued or running with no completion for a whole interval starves it, and
 * the service manager restarts the daemon. All times in monotonic nanoseconds.
 */
bool notify_watchdog_should_feed(bool idle, uint64_t last_progress_ns, uint64_t now_ns,
				 uint64_t interval_ns);

/* Starts the status and watchdog timer on d's loop (a no-op object without $NOTIFY_SOCKET).
 * Returns 0 or -errno. */
int notify_service_start(struct vkrd *d, struct notify_service **out);
/* A batch completed: called from the completion path (batch.c), which may feed the
 * watchdog. Accepts NULL. */
void notify_progress(struct notify_service *s);
/* Sends a STATUS= line now (and remembers it, so the periodic refresh does not repeat it). */
void notify_status_now(struct notify_service *s, const char *status);
/* Stops the timer; the memory is freed once the loop has closed it. Accepts NULL. */
void notify_service_stop(struct notify_service *s);

#endif /* VKRD_NOTIFY_H */
