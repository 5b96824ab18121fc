/*
 * jobend.c -- how an attempt ends (jobend.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/agentproto.h"
#include "launcher/cli/cli.h"
#include "common/exitcodes.h"
#include "launcher/job/jobend.h"
#include "common/log.h"
#include "util/strv.h"

void
job_attempt_free(struct job_attempt *a)
{
	size_t	i;

	for (i = 0; i < a->nlost; i++)
		free(a->lost[i]);
	free(a->lost);
	a->lost = NULL;
	a->nlost = 0;
}

void
jobend_cause(struct jobend *je, enum job_cause c)
{
	if (!je->exit_set && je->cause == JC_NONE)
		je->cause = c;
}

void
jobend_exit(struct jobend *je, int code)
{
	if (!je->exit_set) {
		je->exit_set = 1;
		je->exit_code = code;
	}
}

struct summary *
jobend_begin(struct jobend *je, int cause)
{
	if (je->exit_set || je->end.cause != END_NONE)
		return NULL;
	je->end.cause = cause;
	return &je->end;
}

/* Describes how a rank ended into how; returns the exit status it means. */
static int
jobend_describe(const struct ap_exit *x, char *how, size_t len)
{
	if (x->how == AP_SIGNALED) {
		snprintf(how, len, "was killed by signal %u (%s)", x->code,
		    strsignal(x->code));
		return EXIT_SIGNAL(x->code);
	}
	if (x->how == AP_NOSTART) {
		snprintf(how, len, "could not start: %s", strerror(x->code));
		return x->code == ENOEXEC || x->code == EACCES ? EXIT_NOEXEC :
		    EXIT_NOTFOUND;
	}
	snprintf(how, len, "exited with code %u", x->code);
	return (int)x->code;
}

/*
 * The signature of x's failure: from its error file's traceback when it
 * left one (torch's own words), else from the end of its stderr.
 */
static void
jobend_sig(struct jobend *je, const struct ap_exit *x,
    const struct rootcause *rc, const char *tail)
{
	char	*tb = rc != NULL ? rootcause_traceback(rc) : NULL;
	const char *text = tb != NULL ? tb : tail;

	/* One that never started is a usage error, never restarted. */
	if (x->how == AP_EXITED || x->how == AP_SIGNALED)
		crashsig_make(&je->sig, x->rank, x->how == AP_SIGNALED, x->code,
		    text, text != NULL ? strlen(text) : 0);
	free(tb);
}

int
jobend_rank(struct jobend *je, const struct opts *o, const struct ap_exit *x,
    const char *host, int local_rank, pid_t pid, struct rootcause **rc,
    const char *tail, size_t live)
{
	struct summary	*end;
	char			 how[128];
	int			 code = jobend_describe(x, how, sizeof(how));

	if (pid > 0)
		log_error("rank %u on %s (pid %d) %s; stopping %zu other "
		    "rank%s", x->rank, host, (int)pid, how, live,
		    live == 1 ? "" : "s");
	else
		log_error("rank %u on %s %s; stopping %zu other rank%s",
		    x->rank, host, how, live, live == 1 ? "" : "s");
	jobend_cause(je, JC_RANK);
	if ((end = jobend_begin(je, END_RANK)) == NULL)
		return code;
	end->rank = x->rank;
	end->host = host;
	snprintf(end->how, sizeof(end->how), "%s", how);
	jobend_sig(je, x, *rc, tail);
	if (*rc == NULL)
		return code;
	je->root = *rc;
	*rc = NULL;
	je->who.rank = x->rank;
	je->who.local_rank = local_rank;
	je->who.host = host;
	je->who.pid = (int)pid;
	je->who.exitcode = x->how == AP_SIGNALED ? -(int)x->code : (int)x->code;
	je->who.name = rootcause_name(o->cmd, o->ncmd);
	return code;
}

int
jobend_timeout(struct jobend *je, double timeout, size_t live)
{
	struct summary	*end;

	if ((end = jobend_begin(je, END_TIMEOUT)) != NULL)
		end->timeout = timeout;
	if (live == 0)
		log_error("job timed out after %g s (--timeout) before any "
		    "rank started", timeout);
	else
		log_error("job timed out after %g s (--timeout): stopping %zu "
		    "rank%s", timeout, live, live == 1 ? "" : "s");
	return EXIT_TIMEOUT;
}

int
jobend_signal(struct jobend *je, int sig, size_t live, int stopping)
{
	struct summary	*end;

	if (++je->signals > 1) {
		jobend_exit(je, EXIT_SIGNAL(sig));
		log_warn("got SIG%s again: killing every rank now",
		    sigabbrev_np(sig));
		return SIGKILL;
	}
	if (!stopping && live == 0)
		log_warn("got SIG%s before any rank started: stopping (again "
		    "to kill at once)", sigabbrev_np(sig));
	else if (!stopping)
		log_warn("got SIG%s: stopping %zu rank%s (again to kill at "
		    "once)", sigabbrev_np(sig), live, live == 1 ? "" : "s");
	if ((end = jobend_begin(je, END_SIGNAL)) != NULL)
		end->signo = sig;
	jobend_exit(je, EXIT_SIGNAL(sig));
	return sig;
}

int
jobend_start(struct jobend *je, const char *msg, double timeout, int n)
{
	struct summary	*end;

	log_error("%s (--start-timeout %g)", msg, timeout);
	if ((end = jobend_begin(je, END_START)) != NULL) {
		end->rank = n;
		end->timeout = timeout;
	}
	jobend_exit(je, EXIT_RDZV);
	return EXIT_RDZV;
}

int
jobend_rdzv(struct jobend *je, const char *msg)
{
	log_error("%s", msg);
	jobend_begin(je, END_RDZV);
	jobend_exit(je, EXIT_RDZV);
	return EXIT_RDZV;
}

int
jobend_hang(struct jobend *je, double timeout)
{
	struct summary	*end;

	if ((end = jobend_begin(je, END_HANG)) != NULL)
		end->timeout = timeout;
	jobend_cause(je, JC_HANG);
	jobend_exit(je, EXIT_HANG);
	return EXIT_HANG;
}

int
jobend_straggler(struct jobend *je, const char *who)
{
	struct summary	*end;

	if ((end = jobend_begin(je, END_STRAGGLER)) != NULL)
		snprintf(end->how, sizeof(end->how), "%s", who);
	jobend_cause(je, JC_NONE);
	jobend_exit(je, EXIT_STRAGGLER);
	return EXIT_STRAGGLER;
}

int
jobend_pipe(struct jobend *je, const char *dir, size_t running, int over)
{
	if (dir != NULL) {
		log_warn("stdout was closed (its reader went away): the job "
		    "goes on, its output is still written to %s", dir);
		return 0;
	}
	if (je->exit_set)
		return 0;		/* something else ended it first */
	jobend_exit(je, EXIT_PIPE);
	if (over)
		log_error("stdout was closed (its reader went away) before "
		    "all output was written (exit %d, as SIGPIPE would)",
		    EXIT_PIPE);
	else
		log_error("stdout was closed (its reader went away): stopping "
		    "%zu rank%s, as SIGPIPE would (exit %d)", running,
		    running == 1 ? "" : "s", EXIT_PIPE);
	return EXIT_PIPE;
}

void
jobend_report(struct jobend *je, struct job_attempt *a, size_t started,
    size_t stopped)
{
	struct strv	lines = { 0 };
	char		msg[1024];
	size_t		i;

	if (je->root != NULL) {
		rootcause_lines(je->root, &je->who, &lines);
		for (i = 0; i < lines.n; i++)
			log_error("%s", lines.v[i]);
		strv_free(&lines);
	}
	rootcause_free(je->root);
	je->root = NULL;
	je->end.started = started;
	je->end.stopped = stopped;
	a->cause = je->cause;
	a->signaled = je->signals > 0;
	if (a->cause == JC_RANK)
		a->sig = je->sig;
	if (summary_line(&je->end, msg, sizeof(msg)) != NULL) {
		log_error("%s", msg);
		snprintf(a->what, sizeof(a->what), "%.*s",
		    (int)sizeof(a->what) - 1, msg);
	} else if (a->what[0] == '\0' && je->exit_code == 0)
		snprintf(a->what, sizeof(a->what), "every rank exited 0");
	else if (a->what[0] == '\0')
		snprintf(a->what, sizeof(a->what), "exit %d", je->exit_code);
	if (je->end.host != NULL)
		snprintf(a->host, sizeof(a->host), "%s", je->end.host);
}
