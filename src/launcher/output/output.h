/*
 * output.h -- where forwarded worker output goes: dtrun's stdout/stderr,
 * whole prefixed lines, written without ever blocking the event loop; and
 * optionally DIR/rank.N/{stdout,stderr}, byte for byte.
 */
#ifndef DT_OUTPUT_H
#define DT_OUTPUT_H

#include <stddef.h>

/* From this many ranks on, a terminal gets --collapse by default. */
#define OUTPUT_COLLAPSE_RANKS	8

struct event_base;
struct dt_err;
struct job_feature;
struct output;

/* The output and the status line on the job's hooks (outfeat.c). */
extern const struct job_feature output_feature;

struct output_cfg {
	const char	*prefix;	/* checked format; "" = none */
	const char	*dir;		/* --output-dir (this attempt's), or NULL */
	int		 attempt;	/* the prefix's %a */
	int		 timestamp;	/* --timestamp */
	int		 escape;	/* --escape-output */
	int		 collapse;	/* --collapse (prefix without %h, %l) */
	int		 color[2];	/* colour the prefix on stdout, stderr */
	/* Called with 1 when too much is queued (stop reading agents), 0 when drained. */
	void		(*pressure)(void *arg, int on);
	/*
	 * Called once when dtrun's stdout (1) or stderr (2) loses its reader
	 * (EPIPE): what was queued for it and all further output to it are
	 * dropped; --output-dir files are still written. May be NULL.
	 */
	void		(*closed)(void *arg, int stream);
	void		*arg;
};

/* Makes the sinks for nranks ranks. Returns NULL only if out of memory. */
struct output	*output_new(struct event_base *, const struct output_cfg *,
		    size_t nranks);
/* Sets a rank's prefix fields and, with --output-dir, creates its files. Returns 0 or DT_ERR_IO. */
int		 output_rank(struct output *, int rank, int local_rank,
		    const char *host, struct dt_err *);
/* Keeps rank's streams not in mask (1 stdout, 2 stderr) off the terminal. */
void		 output_rank_term(struct output *, int rank, int mask);
/* Forwards a chunk of rank's stream (1 = stdout, 2 = stderr). */
void		 output_feed(struct output *, int rank, int stream,
		    const void *p, size_t n);
/* A rank ended: emit its unfinished last lines. */
void		 output_rank_end(struct output *, int rank);
/* Ends everything: emits all unfinished lines, writes out what is queued
 * (blocking, up to ms milliseconds), restores stdout/stderr. */
void		 output_finish(struct output *, int ms);
void		 output_free(struct output *);

#endif
