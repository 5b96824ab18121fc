/*
 * signals.c -- the signals dtrun handles while a job runs (signals.h).
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "launcher/cli/cli.h"
#include "common/log.h"
#include "launcher/job/signals.h"
#include "util/xmalloc.h"

struct signals {
	struct signals_cbs	 cb;
	uint64_t		 fwd;		/* --forward-signals */
	struct event		*ev[64];	/* stop, QUIT, CHLD and forwarded */
	size_t			 nev;
};

/* The signals dtrun always handles; signals_hold holds those that act. */
static const int signals_std[] = { SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2,
    SIGCHLD, SIGQUIT };
/* The other --forward-signals of the last attempt: held between attempts too. */
static uint64_t signals_extra;

void
signals_hold(int on)
{
	sigset_t	set;
	size_t		i;

	sigemptyset(&set);
	for (i = 0; i < sizeof(signals_std) / sizeof(signals_std[0]); i++)
		if (signals_std[i] != SIGCHLD)
			sigaddset(&set, signals_std[i]);
	for (i = 1; i < 64 && i < NSIG; i++)
		if (signals_extra & (1ULL << i))
			sigaddset(&set, (int)i);
	sigprocmask(on ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
}

/* ARGSUSED */
static void
signals_cb(evutil_socket_t sig, short what, void *arg)
{
	struct signals	*s = arg;
	pid_t		 pid;
	int		 status;

	switch (sig) {
	case SIGCHLD:
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
			s->cb.reaped(s->cb.arg, pid, status);
		return;
	case SIGQUIT:
		s->cb.quit(s->cb.arg);
		return;
	}
	if (sig < 64 && (s->fwd & (1ULL << sig))) {
		s->cb.forward(s->cb.arg, sig);
		return;
	}
	if (sig == SIGUSR1 || sig == SIGUSR2) {
		/* Caught all the same: its default would kill dtrun blind. */
		log_warn("got SIG%s: not in --forward-signals, ignored",
		    sigabbrev_np(sig));
		return;
	}
	s->cb.stop(s->cb.arg, sig);
}

/* Adds a handler for sig. */
static void
signals_add(struct signals *s, struct event_base *base, int sig)
{
	s->ev[s->nev] = evsignal_new(base, sig, signals_cb, s);
	event_add(s->ev[s->nev++], NULL);
}

struct signals *
signals_new(struct event_base *base, uint64_t fwd, const struct signals_cbs *cb)
{
	struct signals	*s = xcalloc(1, sizeof(*s));
	char		 msg[1024];
	size_t		 i;
	int		 sig;

	s->cb = *cb;
	s->fwd = fwd;
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < sizeof(signals_std) / sizeof(signals_std[0]); i++)
		signals_add(s, base, signals_std[i]);
	/* --forward-signals beyond USR1 and USR2 (cli.c allows no others of signals_std). */
	signals_extra = fwd & ~((1ULL << SIGUSR1) | (1ULL << SIGUSR2));
	for (sig = 1; sig < 64 && sig < NSIG; sig++)
		if (signals_extra & (1ULL << sig))
			signals_add(s, base, sig);
	/* Signals held since the last attempt now reach the handlers above. */
	signals_hold(0);
	log_info("signals passed to the ranks (--forward-signals): %s",
	    cli_signals_str(fwd, msg, sizeof(msg)));
	return s;
}

void
signals_free(struct signals *s)
{
	size_t	i;

	if (s == NULL)
		return;
	for (i = 0; i < s->nev; i++)
		event_free(s->ev[i]);
	free(s);
}
