/*
 * batch_predict.h: how long a batch will keep the GPU busy, from the bytes its jobs move and
 * the GPU times of earlier batches, so that the loop can be polling when a long batch ends
 * instead of sleeping through its end. Sleeping costs a request 0.1 to 0.7 ms on the H100
 * hosts (an interrupt, the completion thread's wake-up and the loop's): a 16 MiB shared-memory
 * reduce took 0.37 ms end to end with the daemon's threads polling and 0.42 to 0.80 without,
 * a 1 GiB scan 26.9 to 27.1 ms against 27.5 to 27.6 (BENCHMARKS, session 41, runs S41-9 and
 * S41-10). Loop thread only.
 */
#ifndef VKR_BATCH_PREDICT_H
#define VKR_BATCH_PREDICT_H

#include <stdint.h>

#include "kern.h"

/* Kinds learnt apart: a scan moves its bytes both ways, a reduction one way, and the bus
 * carries them at different rates (on an H100 host 12 against 20 ps per byte). */
enum { PREDICT_REDUCE, PREDICT_SCAN, PREDICT_KINDS };

/* Batches moving fewer bytes end within the loop's own poll after a submission. */
#define PREDICT_MIN_LOG2 20
#define PREDICT_MIN_BYTES ((uint64_t)1 << PREDICT_MIN_LOG2)

/* Batch sizes learnt apart, one class per power of two from PREDICT_MIN_BYTES (the last class
 * takes every larger batch): a batch costs a fixed time besides its bytes, so a 1 MiB one
 * takes about a third more per byte than a 1 GiB one on an H100 host (run S41-11), and one
 * rate for every size kept missing the ends of 16 MiB and 1 GiB scans alternating (S42-1).
 * The class is of a kind's bytes in the whole batch, however many jobs share them: batches
 * of many jobs are learnt as such, in the class of their total. */
#define PREDICT_CLASSES 17 /* 1 MiB to 64 GiB and more */

struct batch_predict {
	/* GPU time per KiB moved, in picoseconds, by kind and size class; 0: not known yet */
	uint64_t ps_per_kib[PREDICT_KINDS][PREDICT_CLASSES];
};

/* The size class of a batch that moves bytes of one kind (class 0 for fewer than
 * PREDICT_MIN_BYTES). */
unsigned batch_predict_class(uint64_t bytes);

/* Adds what job moves to bytes[] (its input, and a scan's output). */
void batch_predict_count(uint64_t bytes[PREDICT_KINDS], const struct kern_job *job);

/* Expected GPU time of a batch that moves bytes[]: 0 where it moves less than
 * PREDICT_MIN_BYTES or a kind it moves has no GPU time learnt yet. Each kind's bytes take
 * the rate of their own size class, or where that is not learnt yet the nearest learnt
 * class's, on a tie the smaller one's (it over-predicts a larger batch: the loop then starts
 * polling late and the batch is answered as without a prediction, rather than polled for
 * in vain). */
uint64_t batch_predict_ns(const struct batch_predict *p, const uint64_t bytes[PREDICT_KINDS]);

/* How far from the expected end to poll on either side: a sixteenth of the expected time,
 * at least 50 us and at most 2 ms (bounds the polling a wrong guess costs). */
uint64_t batch_predict_margin_ns(uint64_t expect_ns);

/* Learns from a batch of one kind that moved at least PREDICT_MIN_BYTES and took gpu_ns
 * (timestamps): a moving average of its size class, a quarter of the new sample. Mixed
 * batches teach nothing. */
void batch_predict_learn(struct batch_predict *p, const uint64_t bytes[PREDICT_KINDS], uint64_t gpu_ns);

#endif
