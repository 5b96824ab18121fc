/*
 * agents.c -- every host's agent, kept across the job's attempts: which
 * agents a restart may reuse, and which must go (agents.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "proto/agentproto.h"
#include "launcher/job/agents.h"
#include "launcher/cli/cli.h"
#include "common/exitcodes.h"
#include "common/link.h"
#include "common/log.h"
#include "launcher/plan/plan.h"
#include "common/wire.h"
#include "util/xmalloc.h"

struct job_scope {
	struct event_base	*base;
	const struct opts	*o;
	struct job_host		**all;		/* every host met, by name */
	size_t			 nall;
	struct job_host		**cur;		/* the attempt's, in node-rank order */
	size_t			 ncur;
};

int
host_hello(const struct job_host *h)
{
	return h->at.hello;
}

int
host_done(const struct job_host *h)
{
	return h->at.phase == HP_DONE;
}

struct event_base *
job_base(struct job_host *h)
{
	return h->scope->base;
}

struct event_base *
agents_base(struct job_scope *sc)
{
	return sc->base;
}

struct job_host **
job_hosts(struct job_host *h, size_t *n)
{
	*n = h->scope->ncur;
	return h->scope->cur;
}

/* --heartbeat-timeout in milliseconds, as HEARTBEAT carries it. */
static uint64_t
agents_beat_ms(const struct opts *o)
{
	return (uint64_t)(o->heartbeat_timeout * 1000 + 0.5);
}

/*
 * The host named name in scope, made (not yet connected) if it is new;
 * here: it names this machine, so its agent is started here, not by ssh.
 */
static struct job_host *
agents_host(struct job_scope *sc, const char *name, int here)
{
	struct job_host	*h;
	size_t		 i;

	for (i = 0; i < sc->nall; i++)
		if (strcmp(sc->all[i]->name, name) == 0)
			return sc->all[i];
	h = xcalloc(1, sizeof(*h));
	h->scope = sc;
	h->o = sc->o;
	h->name = xstrdup(name);
	h->be = sc->o->launcher == LAUNCH_SSH && !here ? &backend_ssh :
	    sc->o->launcher == LAUNCH_SLURM ? &backend_slurm : &backend_local;
	sc->all = xreallocarray(sc->all, sc->nall + 1, sizeof(*sc->all));
	sc->all[sc->nall++] = h;
	return h;
}

/* Starts h's agent's end (agents_disconnect finishes it). */
static void
agents_hangup(struct job_host *h)
{
	if (h->priv != NULL && h->be->hangup != NULL)
		h->be->hangup(h);
}

/* Closes h's connection (its agent exits) and forgets the agent. */
static void
agents_disconnect(struct job_host *h)
{
	if (h->priv != NULL)
		h->be->free(h);
	h->priv = NULL;
	h->link = NULL;
	h->idle = h->down = 0;
	free(h->agent_host);
	h->agent_host = NULL;
	h->agent_pid = 0;
}

struct job_host **
agents_attach(struct job_scope *sc, struct job *j, const struct plan *p)
{
	struct job_host	*h;
	size_t		 i;
	int		 all = 1;

	/* Hear of links that closed while no attempt ran, before choosing. */
	event_base_loop(sc->base, EVLOOP_NONBLOCK);
	for (i = 0; i < sc->nall; i++)
		sc->all[i]->index = -1;
	sc->cur = xcalloc(p->nhosts, sizeof(*sc->cur));
	sc->ncur = p->nhosts;
	for (i = 0; i < p->nhosts; i++) {
		h = sc->cur[i] = agents_host(sc, p->hosts[i].name,
		    p->hosts[i].here);
		h->job = j;
		h->index = (int)i;
		h->ph = &p->hosts[i];
		memset(&h->at, 0, sizeof(h->at));
		/* Only an agent that said DONE, on a link still up, is kept. */
		if (h->priv != NULL && (!h->idle || h->down))
			agents_disconnect(h);
		if (h->priv == NULL)
			all = 0;
	}
	for (i = 0; i < sc->nall; i++) {
		if (sc->all[i]->index >= 0)
			continue;
		if (sc->all[i]->priv != NULL)
			all = 0;
		agents_disconnect(sc->all[i]);
	}
	/* Agents that share one srun step are kept all together, or none. */
	for (i = 0; !all && i < p->nhosts; i++)
		if (sc->cur[i]->be->reuse == BE_REUSE_ALL)
			agents_disconnect(sc->cur[i]);
	return sc->cur;
}

/* True if h's agent can serve the next attempt: it said DONE, its link is up. */
static int
agents_reusable(const struct job_host *h)
{
	return h->idle && !h->down && !h->at.lost &&
	    h->be->reuse != BE_REUSE_NONE;
}

void
agents_detach(struct job_scope *sc)
{
	struct job_host	*h;
	size_t		 i;
	int		 all = 1;

	for (i = 0; i < sc->ncur; i++)
		all &= agents_reusable(sc->cur[i]);
	/* Agents that share one srun step are kept all together, or none. */
	for (i = 0; i < sc->ncur; i++) {
		h = sc->cur[i];
		if (!agents_reusable(h) || (h->be->reuse == BE_REUSE_ALL && !all))
			agents_hangup(h);
	}
	for (i = 0; i < sc->ncur; i++) {
		h = sc->cur[i];
		h->job = NULL;
		if (!agents_reusable(h) || (h->be->reuse == BE_REUSE_ALL && !all))
			agents_disconnect(h);
		h->ph = NULL;
	}
	free(sc->cur);
	sc->cur = NULL;
	sc->ncur = 0;
}

struct job_scope *
job_scope_new(const struct opts *o)
{
	struct job_scope	*sc;

	if ((sc = calloc(1, sizeof(*sc))) == NULL)
		return NULL;
	sc->o = o;
	if ((sc->base = event_base_new()) == NULL) {
		free(sc);
		return NULL;
	}
	return sc;
}

double
job_scope_tick(struct job_scope *sc)
{
	/* The links' heartbeat timers fire here, if due (the job's silent callback). */
	event_base_loop(sc->base, EVLOOP_NONBLOCK);
	if (sc->o->heartbeat_timeout <= 0)
		return 1;
	/* Often enough that a look is never more than a quarter late. */
	return link_beat_period_ms(agents_beat_ms(sc->o)) / 4000.0;
}

void
job_scope_free(struct job_scope *sc)
{
	size_t	i;

	if (sc == NULL)
		return;
	for (i = 0; i < sc->nall; i++)
		agents_hangup(sc->all[i]);
	for (i = 0; i < sc->nall; i++) {
		agents_disconnect(sc->all[i]);
		free(sc->all[i]->name);
		free(sc->all[i]);
	}
	free(sc->all);
	free(sc->cur);
	event_base_free(sc->base);
	free(sc);
}

void
agents_send(struct job_host *h, struct dt_wbuf *wb)
{
	struct dt_wbuf	mine;

	/* The small encoders fail only so; JOB and RANK are checked apart. */
	if (wb->oom) {
		log_error("out of memory");
		exit(EXIT_INTERNAL);
	}
	if (wb->len == 0 || host_done(h) || h->link == NULL) {
		dt_wbuf_reset(wb);
		return;
	}
	mine = *wb;
	dt_wbuf_init(wb);
	link_send(h->link, mine.p, mine.len);
	if (wb->cap == 0) {
		*wb = mine;		/* keep the allocation */
		dt_wbuf_reset(wb);
	} else
		dt_wbuf_free(&mine);
}

int
agents_reach(struct job_host *h, struct dt_err *e)
{
	struct dt_wbuf	wb;

	if (h->priv == NULL)
		return h->be->start(h, e);
	dt_wbuf_init(&wb);
	ap_put_empty(&wb, AP_AGAIN);
	agents_send(h, &wb);
	dt_wbuf_free(&wb);
	return 0;
}

void
agents_beat(struct job_host *h, void (*silent)(void *))
{
	struct dt_wbuf	wb;
	uint64_t	ms = agents_beat_ms(h->o);

	if (h->o->heartbeat_timeout <= 0)
		return;
	dt_wbuf_init(&wb);
	ap_put_heartbeat(&wb, ms);
	if (wb.oom || link_heartbeat(h->link, ms, wb.p, wb.len, silent,
	    h) != 0) {
		log_error("out of memory");
		exit(EXIT_INTERNAL);
	}
	agents_send(h, &wb);
	dt_wbuf_free(&wb);
}

void
agents_pause(struct job_scope *sc, int on)
{
	size_t	i;

	for (i = 0; i < sc->ncur; i++)
		if (!host_done(sc->cur[i]) && sc->cur[i]->link != NULL)
			link_pause(sc->cur[i]->link, on);
}

void
agents_reaped(struct job_scope *sc, pid_t pid, int status)
{
	size_t	i;

	for (i = 0; i < sc->ncur; i++)
		sc->cur[i]->be->reaped(sc->cur[i], pid, status);
}
