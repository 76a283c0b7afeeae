/*
 * client_ref.h: CPU references for the client tests (the semantics of issue 3), plus random
 * inputs and the comparisons with their tolerances, and a helper that runs a real vkreduced
 * on a temporary socket.
 */
#ifndef VKR_TESTS_CLIENT_REF_H
#define VKR_TESTS_CLIENT_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "vkreduce.h"

/* Reference reduce. Returns 0, or VKR_EINVALID_ARGUMENT for min/max of nothing. */
int ref_reduce(vkr_op op, vkr_dtype dtype, const void *data, size_t n,
               const vkr_reduce_opts *opts, vkr_value *out);
/* Reference scan (op sum, prod, min or max). */
void ref_scan(vkr_op op, vkr_dtype dtype, const void *data, size_t n, bool exclusive, void *out);

/* Whether got is an acceptable answer for the reduce (exact for integers and min/max, within
 * the float tolerance of the issue for sums and products). On a mismatch why says how. */
bool ref_reduce_ok(vkr_op op, vkr_dtype dtype, const void *data, size_t n,
                   const vkr_reduce_opts *opts, vkr_value got, char *why, size_t why_size);
/* Same for a whole scan output. */
bool ref_scan_ok(vkr_op op, vkr_dtype dtype, const void *data, size_t n, bool exclusive,
                 const void *got, char *why, size_t why_size);

/* Fills data with n random elements suited to op: floats in [-1, 1) for sums, near 1 for
 * products so that they neither overflow nor vanish, integers over their full range. */
void ref_fill(uint64_t *state, vkr_op op, vkr_dtype dtype, void *data, size_t n);
uint64_t ref_rand(uint64_t *state);
/* A seed from $VKR_TEST_SEED or the clock, printed so a failure can be replayed. */
uint64_t ref_seed(const char *test);

/* Starts `vkreduced --socket <tmp>/vkreduce.sock extra_args...` and waits until it answers
 * ping. The daemon's path comes from $VKREDUCED. Returns 0 or a negative errno. */
struct ref_daemon {
	pid_t pid;
	char dir[256];
	char socket[300];
};
int ref_daemon_start(struct ref_daemon *d, const char *const *extra_args);
/* SIGTERM, wait, and remove the temporary directory. Returns the daemon's exit status (0 for
 * a clean shutdown) or -1 if it died of a signal other than the one we sent. */
int ref_daemon_stop(struct ref_daemon *d);

#endif
