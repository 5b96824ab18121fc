/*
 * signals.h -- the signals dtrun handles while a job runs: the stop
 * signals (INT, TERM, HUP), SIGQUIT (a stack report), SIGCHLD (reaping),
 * and --forward-signals (passed to every rank). Handlers run on the job's
 * event base (evsignal), never in signal context; each goes to the job
 * through a callback. Between attempts the signals are held, pending,
 * not lost.
 */
#ifndef DT_SIGNALS_H
#define DT_SIGNALS_H

#include <stdint.h>
#include <sys/types.h>

struct event_base;
struct signals;

/* What the job does with each; arg is theirs. */
struct signals_cbs {
	void	(*reaped)(void *arg, pid_t pid, int status); /* each child reaped */
	void	(*quit)(void *arg);			/* SIGQUIT */
	void	(*forward)(void *arg, int sig);		/* one of --forward-signals */
	void	(*stop)(void *arg, int sig);		/* INT, TERM, HUP */
	void	*arg;
};

/*
 * Handles the signals on base for one attempt, fwd (a bit per signal,
 * --forward-signals) passed on, and lets through those held since the
 * last attempt. Never NULL.
 */
struct signals	*signals_new(struct event_base *, uint64_t fwd,
		    const struct signals_cbs *);
void		 signals_free(struct signals *);

/* Holds (1) or lets through (0) the signals dtrun handles. */
void		 signals_hold(int on);

#endif
