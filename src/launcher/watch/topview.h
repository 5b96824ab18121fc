/*
 * topview.h -- what dtrun top shows of a running attempt: a row per rank
 * (host, state, step and seconds per step, the age of its last line, CPU
 * and memory of its processes, restarts), outliers first, as a table or
 * as JSON. The usage comes from the agents' PROGRESS, once a second; the
 * pace from the straggler watch (straggle.h).
 */
#ifndef DT_TOPVIEW_H
#define DT_TOPVIEW_H

#include <stddef.h>
#include <stdint.h>

struct plan;
struct ranks;
struct straggle;
struct topview;

/* The view of attempt (0 first) of p, its ranks rk and watch st (may be NULL). */
struct topview	*topview_new(const struct plan *p, const struct ranks *rk,
		    struct straggle *st, int attempt);
void		 topview_free(struct topview *);

/* rank's processes had used cpu_ms of CPU and held rss_kb, at now_ms. */
void		 topview_usage(struct topview *, size_t rank, uint64_t cpu_ms,
		    uint32_t rss_kb, uint64_t now_ms);

/* The view at now_ms of job_id: a table, or JSON (one object). Malloc'd. */
char		*topview_render(struct topview *, const char *job_id,
		    int json, uint64_t now_ms);

#endif
