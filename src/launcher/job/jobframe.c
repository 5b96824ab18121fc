/*
 * jobframe.c -- what each frame from a host's agent does to the job
 * (job.c keeps the phases, the fail-fast policy and the end). Which frame
 * a host may send in which phase is the protocol's table, asked by
 * hostframe_take before any handler here runs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/agentproto.h"
#include "launcher/cli/cli.h"
#include "launcher/plan/netplan.h"
#include "common/exitcodes.h"
#include "common/err.h"
#include "launcher/job/hostframe.h"
#include "launcher/job/job.h"
#include "common/link.h"
#include "common/log.h"
#include "launcher/job/ranks.h"
#include "common/sys.h"
#include "util/xmalloc.h"
#include "launcher/job/jobint.h"

/* EXIT: one of h's ranks ended; the first failure stops the job. */
static void
job_rank_exit(struct job_host *h, const struct ap_exit *x)
{
	struct job	*j = h->job;
	struct rootcause *rc = ranks_errfile_take(j->run.ranks, x->rank);
	pid_t		 pid = ranks_pid(j->run.ranks, x->rank);
	char		*tail = NULL;
	size_t		 tlen;

	ranks_ended(j->run.ranks, x->rank, job_stopping(j));
	HOOKS_CALL(&j->run.hooks, rank_ended, (size_t)x->rank);
	if (x->how == AP_EXITED && x->code == 0)
		goto out;
	if (job_stopping(j) || j->start_report)
		goto out;	/* stopped by us, or after the first failure;
				   or ending, once the missing ranks' stacks
				   are in (their peers were told to abort) */
	tail = ranks_stderr_tail(j->run.ranks, x->rank, &tlen);
	jobend_exit(&j->je, jobend_rank(&j->je, j->o, x, h->ph->name,
	    j->plan->ranks[x->rank].local_rank, pid, &rc, tail, job_live(j)));
	job_stop(j, SIGTERM, j->o->kill_grace);
out:
	free(tail);
	rootcause_free(rc);
}

/* HELLO: h's agent is up (first, or again after AGAIN). */
static enum hf_rc
job_on_hello(struct job_host *h, struct ap_hello *hello)
{
	struct job	*j = h->job;
	struct link	*l;

	host_to(h, HP_CONNECTED);
	if (h->be->news != NULL)
		h->be->news(h, JN_HELLO);
	free(h->agent_host);
	h->agent_host = hello->hostname;
	h->agent_pid = (pid_t)hello->pid;
	h->at.free_port = hello->free_port;
	HOOKS_CALL(&j->run.hooks, connected, (size_t)h->index, hello);
	if (hello->version != AP_VERSION) {
		log_error("%s: agent speaks protocol %u, dtrun %d: install the "
		    "same dtrun version there", h->ph->name, hello->version,
		    AP_VERSION);
		job_fail(j, EXIT_CONFIG);
		return HF_OK;
	}
	/*
	 * From now on it hears from us, and we expect to hear from it. The
	 * first beat and what job_advance sends h now (a lone host's whole
	 * job) go in one write.
	 */
	l = h->link;
	link_hold(l, 1);
	agents_beat(h, job_host_silent);
	job_advance(j);
	if (h->link == l)
		link_hold(l, 0);
	return HF_OK;
}

/* PORTLIST: the ports h's agent found for its workers (TF_CONFIG). */
static enum hf_rc
job_on_portlist(struct job_host *h, const int *ports, uint32_t n)
{
	struct job	*j = h->job;

	if (h->at.got_ports || n != (uint32_t)h->ph->nworkers)
		return HF_BAD;
	h->at.got_ports = 1;
	jobmsg_ports(&j->run.msg, &j->run.env, h, ports, n);
	if (j->nports_pending > 0)
		j->nports_pending--;
	job_advance(j);
	return HF_OK;
}

/* CHECKED: the check's (--check, --preflight). */
static enum hf_rc
job_on_checked(struct job_host *h, const uint8_t *p, size_t n)
{
	return hostframe_rc(hooks_checked(&h->job->run.hooks, h, p, n,
	    DT_ERR_PROTO));
}

/* IFACE: the interface h's agent chose for its ranks, or why none. */
static enum hf_rc
job_on_iface(struct job_host *h, const struct ap_iface *fi)
{
	if (env_host_chose(&h->job->run.env, h->index, fi) != 0)
		job_fail(h->job, EXIT_CONFIG);
	return HF_OK;
}

/* PREPARED: h checked its commands (job_advance). */
static enum hf_rc
job_on_prepared(struct job_host *h)
{
	host_to(h, HP_PREPARED);
	HOOKS_CALL(&h->job->run.hooks, prepared, (size_t)h->index);
	job_advance(h->job);
	return HF_OK;
}

/* STARTED: one of h's ranks runs. */
static enum hf_rc
job_on_started(struct job_host *h, uint32_t rank, uint32_t pid)
{
	struct job	*j = h->job;

	if (rank >= j->plan->nranks)
		return HF_BAD;
	if (ranks_started(j->run.ranks, rank, (pid_t)pid))
		HOOKS_CALL(&j->run.hooks, rank_started, (size_t)rank);
	return HF_OK;
}

/* OUTPUT: a chunk of what a rank wrote. */
static enum hf_rc
job_on_output(struct job_host *h, const struct ap_output *out)
{
	struct job	*j = h->job;

	if (out->rank >= j->plan->nranks)
		return HF_BAD;
	HOOKS_CALL(&j->run.hooks, output, (size_t)out->rank, out->stream,
	    out->data, out->len);
	/* A crash loop is told by the end of a failed rank's stderr. */
	if (out->stream == 2 && j->o->max_restarts > 0)
		ranks_stderr(j->run.ranks, out->rank, out->data, out->len);
	return HF_OK;
}

/* ERRFILE: what a rank's torch @record wrote; kept for its EXIT, next. */
static enum hf_rc
job_on_errfile(struct job_host *h, const struct ap_errfile *f)
{
	struct job		*j = h->job;
	struct rootcause	*rc;

	if (f->rank >= j->plan->nranks ||
	    j->plan->ranks[f->rank].host != h->index)
		return HF_BAD;
	rc = rootcause_new(f);
	if (j->att->output_dir != NULL &&
	    rootcause_keep(rc, j->att->output_dir, f->rank) != 0)
		log_warn("rank %u: cannot copy its error file into %s: %s",
		    f->rank, j->att->output_dir, strerror(errno));
	ranks_errfile(j->run.ranks, f->rank, rc);
	return HF_OK;
}

/* EXIT: a rank of h's ended (one of another host's is ignored). */
static enum hf_rc
job_on_exit(struct job_host *h, const struct ap_exit *x)
{
	struct job	*j = h->job;

	if (x->rank < j->plan->nranks && j->plan->ranks[x->rank].host == h->index)
		job_rank_exit(h, x);
	return HF_OK;
}

/* ERROR: h's agent could not go on; a host going down counts as lost. */
static enum hf_rc
job_on_error(struct job_host *h, const struct ap_error *e)
{
	struct job	*j = h->job;
	char		*lead = NULL;

	if (h->be->news != NULL)
		h->be->news(h, JN_ERROR);
	if (!job_stopping(j) || !j->started) {
		/* Its lines (a setup's stderr) each start with its name. */
		if (h->agent_host != NULL)
			xasprintf(&lead, "%s: ", h->agent_host);
		log_error_lines(e->msg, lead);
		free(lead);
	}
	/* 143: the agent got SIGTERM (a host going down); 255: its keeper died. */
	if (e->rank == AP_NORANK && (e->code == EXIT_AGENT_TERM ||
	    e->code == EXIT_LOST)) {
		h->at.lost = 1;
		jobend_cause(&j->je, JC_LOST);
		if (j->att->what[0] == '\0')
			snprintf(j->att->what, sizeof(j->att->what), "%s",
			    e->msg);
	}
	/* 125: its rendezvous relay ran out of descriptors (said above). */
	if (e->rank == AP_NORANK && e->code == EXIT_RDZV)
		jobend_begin(&j->je, END_RDZV);
	job_fail(j, e->code);
	return HF_OK;
}

/* STACK: a rank's stack for the report, or the end of h's. */
static enum hf_rc
job_on_stack(struct job_host *h, const struct ap_stack *k)
{
	HOOKS_CALL(&h->job->run.hooks, stack, (size_t)h->index, k);
	return HF_OK;
}

/* STACKASK: h's agent got SIGQUIT (dtrun-kill --stacks). */
static enum hf_rc
job_on_stackask(struct job_host *h)
{
	HOOKS_CALL(&h->job->run.hooks, stackask);
	return HF_OK;
}

/* DONE: h's part is over; its agent waits for AGAIN. */
static enum hf_rc
job_on_done(struct job_host *h)
{
	uint64_t	got, frames;

	link_counts(h->link, &got, &frames);
	log_debug("%s: done; its frames, %llu bytes so far, came in %llu "
	    "bytes%s", h->ph->name, (unsigned long long)frames,
	    (unsigned long long)got, got < frames ? " (packed)" : "");
	h->idle = !h->at.lost;
	job_host_done(h);
	return HF_OK;
}

/* RDZV: a rank's rendezvous bytes, through h's agent, to the server. */
static enum hf_rc
job_on_rdzv(struct job_host *h, uint32_t chan, const uint8_t *p, size_t n)
{
	jobrdzv_chan_input(&h->job->run.rdzv, h, chan, p, n);
	return HF_OK;
}

/* STORE: a rank's TCPStore bytes, through h's agent, to the store feature. */
static enum hf_rc
job_on_store(struct job_host *h, uint32_t chan, const uint8_t *p, size_t n)
{
	HOOKS_CALL(&h->job->run.hooks, store, h, chan, p, n);
	return HF_OK;
}

/* Whether each of the n items' rank is placed on h. */
#define JOB_RANKS_ON(j, h, v, n, ok) do {				\
	uint32_t i_;							\
	(ok) = 1;							\
	for (i_ = 0; i_ < (n); i_++)					\
		if ((v)[i_].rank >= (j)->plan->nranks ||		\
		    (j)->plan->ranks[(v)[i_].rank].host != (h)->index)	\
			(ok) = 0;					\
} while (0)

/* COLLS: h's ranks' arrivals at NCCL collectives, for the watch. */
static enum hf_rc
job_on_colls(struct job_host *h, uint64_t now_ns, const struct ap_coll *v,
    uint32_t n)
{
	struct job	*j = h->job;
	int		 ok;

	JOB_RANKS_ON(j, h, v, n, ok);
	if (!ok)
		return HF_BAD;
	HOOKS_CALL(&j->run.hooks, colls, (size_t)h->index, now_ns, v, n);
	return HF_OK;
}

/* WAITS: where h's ranks waited, for the watch. */
static enum hf_rc
job_on_waits(struct job_host *h, const struct ap_wait *v, uint32_t n)
{
	struct job	*j = h->job;
	int		 ok;

	JOB_RANKS_ON(j, h, v, n, ok);
	if (!ok)
		return HF_BAD;
	HOOKS_CALL(&j->run.hooks, waits, (size_t)h->index, v, n);
	return HF_OK;
}

/* PROGRESS: h's ranks' steps and usage, for the features (the watch). */
static enum hf_rc
job_on_progress(struct job_host *h, const struct ap_progress *v, uint32_t n)
{
	struct job	*j = h->job;
	uint64_t	 now = dt_clock_ms(CLOCK_MONOTONIC);
	uint32_t	 i;

	for (i = 0; i < n; i++) {
		/* Only the ranks placed on h: a step is no way to touch others. */
		if (v[i].rank >= j->plan->nranks ||
		    j->plan->ranks[v[i].rank].host != h->index)
			return HF_BAD;
		HOOKS_CALL(&j->run.hooks, progress, &v[i], now);
	}
	return HF_OK;
}

static const struct hostframe_ops job_frame_ops = {
	job_on_hello, job_on_portlist, job_on_checked, job_on_iface,
	job_on_prepared, job_on_started, job_on_output, job_on_errfile,
	job_on_exit, job_on_error, job_on_stack, job_on_stackask, job_on_done,
	job_on_rdzv, job_on_store, job_on_colls, job_on_progress, job_on_waits
};

void
job_host_frame(struct job_host *h, uint8_t type, const uint8_t *p, size_t n)
{
	struct dt_err	e;
	int		rc;

	/* Between attempts too: the table says a kept agent only beats. */
	if ((rc = hostframe_take(&job_frame_ops, h, type, p, n, &e)) == 0)
		return;
	if (rc == DT_ERR_NOMEM) {
		log_error("%s: %s", h->name, e.msg);
		exit(EXIT_INTERNAL);
	}
	log_error("%s: protocol error from its agent: %s: cutting it off",
	    h->name, e.msg);
	h->be->kill(h);
	job_host_closed(h, DT_ERR_PROTO, "protocol error");
}
