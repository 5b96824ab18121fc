/*
 * backend_local.c -- the local launcher's agent: dtrun-agent started on
 * this machine, speaking over a socketpair. It is put in its own process
 * group so a terminal's Ctrl-C reaches dtrun alone, which decides.
 *
 * Room launcher/backend/: the ways to reach agents: a local pipe, ssh
 * (libssh2, jump hosts, the agent's upload), srun. It includes only cli/,
 * plan/ and job/ (t0041's rooms).
 */
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "launcher/backend/agentbin.h"
#include "launcher/backend/child.h"
#include "launcher/backend/local.h"
#include "common/err.h"
#include "launcher/job/job.h"
#include "common/link.h"
#include "common/log.h"
#include "launcher/plan/plan.h"
#include "host/procs.h"
#include "host/record.h"
#include "proto/agentproto.h"
#include "util/xmalloc.h"

extern char **environ;

struct local {
	struct link	*link;
	pid_t		 pid;		/* our child: the agent, or its keeper */
};

/*
 * The keeper's part, taken by dtrun on its own host (keeper.h says what a
 * keeper does): dtrun is a child subreaper, so what the agent leaves when
 * it is SIGKILLed or crashes (a rank's daemon, a rank's child) comes to
 * dtrun, which kills it (local_sweep) and removes the agent's record. The
 * agent then runs without a keeper of its own (--parent-keeps): no fork
 * and no second process on a local job's critical path, at its start and
 * at its end. A stopped or stuck agent is SIGKILLed by dtrun once it gives
 * the host up (job_host_silent), where its keeper would have killed its
 * ranks. 1: so; 0: PR_SET_CHILD_SUBREAPER failed, the agent forks its
 * keeper as on other hosts; -1: not tried yet.
 */
static int	local_keeps = -1;
/* Rounds of local_sweep, 10 ms apart: how long a stray we cannot kill holds us. */
#define LOCAL_SWEEP_ROUNDS	300

/*
 * An agent started before the job asked for one (local_prespawn), with
 * dtrun's end of its socketpair: the first local_start takes it.
 */
static pid_t	early_pid;
static int	early_fd = -1;

/* Starts dtrun-agent on a new socketpair; *fd is dtrun's end. */
static int
local_spawn(pid_t *pid, int *fd, struct dt_err *e)
{
	char	path[PATH_MAX];
	char	*argv[3];
	int	sv[2], rc;

	if ((rc = agentbin_path(path, sizeof(path), e)) != 0)
		return rc;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		return dt_errf(e, NULL, 0, 0, DT_ERR_SYS, "socketpair: %s",
		    strerror(errno));
	if (local_keeps == -1)
		local_keeps = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
	argv[0] = "dtrun-agent";
	argv[1] = local_keeps ? "--parent-keeps" : NULL;
	argv[2] = NULL;
	rc = child_spawn(pid, path, argv, environ, sv[1], sv[1], -1);
	close(sv[1]);
	if (rc != 0) {
		close(sv[0]);
		return dt_errf(e, NULL, 0, 0, DT_ERR_SYS, "cannot start %s: %s",
		    path, strerror(rc));
	}
	*fd = sv[0];
	return 0;
}

/*
 * The agent's exec and start-up (~5 ms of a one-rank job's ~17 on a small
 * VM) run beside dtrun's own set-up instead of after it. Quiet on failure:
 * local_start tries again and says why.
 */
void
local_prespawn(void)
{
	struct dt_err	e;

	if (early_fd == -1)
		(void)local_spawn(&early_pid, &early_fd, &e);
}

/*
 * Kills and reaps what came to us from a dead agent, until nothing is
 * left (what a killed process leaves comes to us in turn), as its keeper
 * would (keeper.c); our own helpers stay. A stray we may not kill (not
 * ours) holds us LOCAL_SWEEP_ROUNDS at most.
 */
static void
local_sweep(void)
{
	struct timespec	ts = { 0, 10 * 1000 * 1000 };
	size_t		live, sent;
	int		rounds;

	for (rounds = 0; rounds < LOCAL_SWEEP_ROUNDS; rounds++) {
		if ((live = spawn_sweep_strays(child_ours, &sent)) == 0)
			break;
		if (sent == 0 && rounds >= 10)
			break;
		nanosleep(&ts, NULL);
	}
}

/*
 * Reaps our child (the agent, or its keeper) once its link is closed: it
 * exits, woken the moment it does, for up to 2 s; then it is killed. An
 * agent we keep that did not end by itself cleaned nothing up: we do.
 */
static void
local_reap(pid_t pid, int *status)
{
	*status = 0;
	if (child_wait(pid, status, 2000) != 0) {
		kill(pid, SIGKILL);
		waitpid(pid, status, 0);
	}
}

/* After our kept agent (pid, reaped with status): its keeper's part, if due. */
static void
local_after(pid_t pid, int status)
{
	if (local_keeps != 1 || !WIFSIGNALED(status))
		return;
	local_sweep();
	record_remove_dead(pid, 0);
}

/*
 * An early agent no job took (dtrun stopped before starting one): its
 * link closes, it exits, and it (or its keeper) is reaped, as local_free
 * does.
 */
void
local_prespawn_discard(void)
{
	int	st;

	if (early_fd == -1)
		return;
	close(early_fd);
	early_fd = -1;
	local_reap(early_pid, &st);
	local_after(early_pid, st);
	early_pid = 0;
}

static void
local_frame(void *arg, uint8_t type, const uint8_t *p, size_t n)
{
	job_host_frame(arg, type, p, n);
}

static void
local_close(void *arg, int err, const char *why)
{
	job_host_closed(arg, err, why);
}

static int
local_start(struct job_host *h, struct dt_err *e)
{
	struct local		*l;
	struct link_cbs		 cbs;
	int			 fd, rc;
	pid_t			 pid;

	if (early_fd != -1) {
		pid = early_pid;
		fd = early_fd;
		early_fd = -1;
		early_pid = 0;
	} else if ((rc = local_spawn(&pid, &fd, e)) != 0)
		return rc;
	l = xcalloc(1, sizeof(*l));
	l->pid = pid;
	cbs.frame = local_frame;
	cbs.close = local_close;
	cbs.drain = NULL;
	cbs.arg = h;
	if ((l->link = link_new(job_base(h), fd, fd, AP_FRAME_MAX,
	    &cbs)) == NULL) {
		kill(pid, SIGKILL);
		close(fd);
		free(l);
		return dt_errf(e, NULL, 0, 0, DT_ERR_NOMEM, "out of memory");
	}
	h->priv = l;
	h->link = l->link;
	log_debug("started agent pid %d for %s", (int)pid, h->ph->name);
	return 0;
}

/*
 * Kills the agent at once. The agent's ranks have PR_SET_PDEATHSIG: they
 * die with it, and its keeper (we, or our child l->pid) kills what they
 * left. Killing a keeper instead would have the agent stop with the grace.
 */
static void
local_kill(struct job_host *h)
{
	struct local		*l = h->priv;
	struct proc_info	 pi;

	if (l->pid <= 0)
		return;
	/* While our child is unreaped, its child's pid is the agent's. */
	if (h->agent_pid > 0 && proc_info(h->agent_pid, &pi) == 0 &&
	    pi.ppid == l->pid && proc_signal(h->agent_pid, pi.start,
	    SIGKILL) == 0)
		return;
	kill(l->pid, SIGKILL);
}

static void
local_reaped(struct job_host *h, pid_t pid, int status)
{
	struct local	*l = h->priv;

	if (pid != l->pid)
		return;
	l->pid = 0;
	local_after(pid, status);
	if (WIFSIGNALED(status) || WEXITSTATUS(status) != 0)
		log_debug("agent for %s ended with status %d", h->ph->name,
		    status);
}

/* Closes the link: the agent sees it end, and exits. */
static void
local_hangup(struct job_host *h)
{
	struct local	*l = h->priv;

	if (l->link != NULL)
		link_free(l->link);
	l->link = NULL;
	h->link = NULL;
}

static void
local_free(struct job_host *h)
{
	struct local	*l = h->priv;
	int		 st;

	if (l == NULL)
		return;
	if (l->link != NULL)
		link_free(l->link);
	if (l->pid > 0) {
		local_reap(l->pid, &st);
		local_after(l->pid, st);
	}
	free(l);
	h->priv = NULL;
}

const struct backend backend_local = {
	.name = "local",
	.reuse = BE_REUSE_HOST,
	.start = local_start,
	.kill = local_kill,
	.reaped = local_reaped,
	.hangup = local_hangup,
	.free = local_free,
};
