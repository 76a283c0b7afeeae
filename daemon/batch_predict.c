/* batch_predict.c: expected GPU time of a batch from the bytes it moves (batch_predict.h). */
#include "batch_predict.h"

#include "proto_names.h"

void batch_predict_count(uint64_t bytes[PREDICT_KINDS], const struct kern_job *job)
{
	uint64_t moved = job->n * proto_dtype_size(job->dtype);
	if (job->kind == KERN_SCAN)
		bytes[PREDICT_SCAN] += 2 * moved;
	else
		bytes[PREDICT_REDUCE] += moved;
}

unsigned batch_predict_class(uint64_t bytes)
{
	unsigned log2 = bytes ? 63u - (unsigned)__builtin_clzll(bytes) : 0;
	if (log2 < PREDICT_MIN_LOG2)
		return 0;
	return log2 - PREDICT_MIN_LOG2 < PREDICT_CLASSES ? log2 - PREDICT_MIN_LOG2 : PREDICT_CLASSES - 1;
}

/* The rate for bytes of one kind: their class's, or the nearest learnt class's. */
static uint64_t rate_ps_per_kib(const uint64_t rates[PREDICT_CLASSES], uint64_t bytes)
{
	int own = (int)batch_predict_class(bytes);
	for (int d = 0; d < PREDICT_CLASSES; d++) {
		if (own - d >= 0 && rates[own - d])
			return rates[own - d];
		if (own + d < PREDICT_CLASSES && rates[own + d])
			return rates[own + d];
	}
	return 0;
}

uint64_t batch_predict_ns(const struct batch_predict *p, const uint64_t bytes[PREDICT_KINDS])
{
	uint64_t total = 0, ps = 0;
	for (unsigned k = 0; k < PREDICT_KINDS; k++) {
		if (bytes[k] == 0)
			continue;
		uint64_t rate = rate_ps_per_kib(p->ps_per_kib[k], bytes[k]);
		if (rate == 0)
			return 0;
		total += bytes[k];
		/* a batch's bytes are many jobs' (each up to 2^36): no prediction past 2^64 ps */
		uint64_t kind_ps;
		if (__builtin_mul_overflow(bytes[k] >> 10, rate, &kind_ps) ||
		    __builtin_add_overflow(ps, kind_ps, &ps))
			return 0;
	}
	return total < PREDICT_MIN_BYTES ? 0 : ps / 1000;
}

uint64_t batch_predict_margin_ns(uint64_t expect_ns)
{
	uint64_t margin = expect_ns / 16;
	return margin < 50000 ? 50000 : margin > 2000000 ? 2000000 : margin;
}

void batch_predict_learn(struct batch_predict *p, const uint64_t bytes[PREDICT_KINDS], uint64_t gpu_ns)
{
	unsigned kinds = 0, kind = 0;
	for (unsigned k = 0; k < PREDICT_KINDS; k++)
		if (bytes[k]) {
			kinds++;
			kind = k;
		}
	if (kinds != 1 || bytes[kind] < PREDICT_MIN_BYTES || gpu_ns == 0)
		return;
	uint64_t sample = gpu_ns * 1000 / (bytes[kind] >> 10);
	uint64_t *avg = &p->ps_per_kib[kind][batch_predict_class(bytes[kind])];
	*avg = *avg == 0 ? sample : *avg - *avg / 4 + sample / 4;
}
