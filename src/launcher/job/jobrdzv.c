/*
 * jobrdzv.c -- a job attempt's rendezvous server (jobrdzv.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/agentproto.h"
#include "launcher/job/agents.h"
#include "launcher/cli/cli.h"
#include "launcher/plan/envctx.h"
#include "common/err.h"
#include "launcher/job/jobrdzv.h"
#include "common/log.h"
#include "launcher/plan/plan.h"
#include "rendezvous/server.h"
#include "common/wire.h"
#include "util/xmalloc.h"

/* Some rank joined, not all in time. */
static void
jobrdzv_timeout_cb(void *arg, const char *msg)
{
	struct jobrdzv	*r = arg;

	r->cb.timeout(r->cb.arg, msg);
}

/* The server gave up; msg says why and what to do. */
static void
jobrdzv_error_cb(void *arg, const char *msg)
{
	struct jobrdzv	*r = arg;

	r->cb.error(r->cb.arg, msg);
}

/* A joined rank beat. */
static void
jobrdzv_alive_cb(void *arg, int rank)
{
	struct jobrdzv	*r = arg;

	r->cb.alive(r->cb.arg, rank);
}

/* A rank joined. */
/* ARGSUSED */
static void
jobrdzv_join_cb(void *arg, int rank, int njoined)
{
	struct jobrdzv	*r = arg;

	r->cb.join(r->cb.arg, rank);
}

/* Every worker joined. */
/* ARGSUSED */
static void
jobrdzv_joined_cb(void *arg)
{
	struct jobrdzv	*r = arg;

	log_info("all %d workers joined the rendezvous", r->nworkers);
}

/* One rank's rendezvous through its agent: a virtual connection. */
struct jobrdzv_chan {
	struct job_host		*h;
	uint32_t		 id;
	struct rdzv_conn	*vc;	/* NULL once closed */
};

/* Bytes for the rank's channel (none: it ends), to its agent. */
static void
jobrdzv_chan_send(void *arg, const uint8_t *p, size_t n)
{
	struct jobrdzv_chan	*c = arg;
	struct dt_wbuf		 wb;

	if (host_done(c->h))
		return;
	dt_wbuf_init(&wb);
	ap_put_rdzv(&wb, c->id, p, n);
	agents_send(c->h, &wb);
	dt_wbuf_free(&wb);
}

/* The server dropped the rank's connection: its agent closes the rank's. */
static void
jobrdzv_chan_closed(void *arg)
{
	struct jobrdzv_chan	*c = arg;

	c->vc = NULL;
	jobrdzv_chan_send(c, NULL, 0);
}

/*
 * A rank's channel that cannot be served: the job fails at once with
 * why (the first time), not after --start-timeout or never.
 */
static void
jobrdzv_refuse(struct jobrdzv *r, struct job_host *h, uint32_t chan,
    const char *fmt, ...)
{
	char	why[384], msg[512];
	va_list	ap;

	r->refused++;
	if (r->refused > 1)
		return;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	snprintf(msg, sizeof(msg), "rendezvous: %s's agent carried a rank's "
	    "connection (channel %u) that cannot be served: it %s", h->name,
	    chan, why);
	r->cb.error(r->cb.arg, msg);
}

void
jobrdzv_chan_input(struct jobrdzv *r, struct job_host *h, uint32_t chan,
    const uint8_t *p, size_t n)
{
	struct rdzv_vconn_cbs	 cb = { jobrdzv_chan_send, jobrdzv_chan_closed,
				    NULL };
	struct jobrdzv_chan	*c;
	size_t			 i, host = (size_t)h->index;

	if (r->srv == NULL || host >= r->nhosts || chan == 0)
		return;
	/*
	 * Channels are numbered from 1 by the agent, in the order their
	 * first bytes came. One we cannot take is a rank that never joins:
	 * say so now rather than let the job wait for it.
	 */
	if (chan > r->nch[host]) {
		if (n == 0)
			return;
		if (chan > r->nch[host] + 1024) {
			jobrdzv_refuse(r, h, chan, "comes after channel "
			    "%zu: the agent skipped over 1024", r->nch[host]);
			return;
		}
		r->ch[host] = xreallocarray(r->ch[host], chan,
		    sizeof(*r->ch[host]));
		for (i = r->nch[host]; i < chan; i++)
			r->ch[host][i] = NULL;
		r->nch[host] = chan;
	}
	if ((c = r->ch[host][chan - 1]) == NULL) {
		if (n == 0)
			return;
		c = r->ch[host][chan - 1] = xcalloc(1, sizeof(*c));
		c->h = h;
		c->id = chan;
		cb.arg = c;
		if ((c->vc = rdzv_server_vopen(r->srv, &cb)) == NULL) {
			jobrdzv_chan_send(c, NULL, 0);
			jobrdzv_refuse(r, h, chan, "is one too many: %d "
			    "rendezvous connections are open for %d rank%s "
			    "(a process of the job's user flooding %s's "
			    "ranks' rendezvous socket?)", r->nworkers + 1024,
			    r->nworkers, r->nworkers == 1 ? "" : "s", h->name);
			return;
		}
	}
	if (c->vc == NULL)
		return;		/* dropped by the server: the rank is told */
	if (n == 0) {
		rdzv_server_vclose(c->vc);
		c->vc = NULL;
		return;
	}
	rdzv_server_vinput(c->vc, p, n);
}

/* Closes and frees the channels of the plan's host index host. */
static void
jobrdzv_drop(struct jobrdzv *r, size_t host)
{
	struct jobrdzv_chan	*c;
	size_t			 i;

	for (i = 0; i < r->nch[host]; i++) {
		if ((c = r->ch[host][i]) == NULL)
			continue;
		if (c->vc != NULL && r->srv != NULL)
			rdzv_server_vclose(c->vc);
		free(c);
		r->ch[host][i] = NULL;
	}
	free(r->ch[host]);
	r->ch[host] = NULL;
	r->nch[host] = 0;
}

void
jobrdzv_host_gone(struct jobrdzv *r, struct job_host *h)
{
	if (h->index >= 0 && (size_t)h->index < r->nhosts)
		jobrdzv_drop(r, (size_t)h->index);
}

/* The plan's workers, as the server hands them out. */
static struct rdzv_rank_info *
jobrdzv_ranks(const struct plan *p)
{
	struct rdzv_rank_info	*ri = xcalloc(p->nworkers, sizeof(*ri));
	int			 r;

	for (r = 0; r < p->nworkers; r++) {
		ri[r].rank = r;
		ri[r].local_rank = p->ranks[r].local_rank;
		ri[r].local_world = p->hosts[p->ranks[r].host].nworkers;
		ri[r].node_rank = p->ranks[r].host;
		ri[r].host = p->hosts[p->ranks[r].host].name;
	}
	return ri;
}

int
jobrdzv_start(struct jobrdzv *r, struct event_base *base,
    const struct opts *o, const struct plan *p, struct env_ctx *env,
    const struct jobrdzv_cbs *cb, struct dt_err *e)
{
	struct rdzv_server_cfg	 cfg;
	struct rdzv_rank_info	*ri;
	uint8_t			 secret[RDZV_SECRET_LEN];
	int			 rc;

	if ((rc = rdzv_auth_random(secret, sizeof(secret), e)) != 0)
		return rc;
	env->rdzv_addr = r->addr;
	r->nworkers = p->nworkers;
	r->cb = *cb;
	r->nhosts = p->nhosts;
	r->ch = xcalloc(p->nhosts ? p->nhosts : 1, sizeof(*r->ch));
	r->nch = xcalloc(p->nhosts ? p->nhosts : 1, sizeof(*r->nch));
	ri = jobrdzv_ranks(p);
	memset(&cfg, 0, sizeof(cfg));
	/* Every rank comes through its agent: no TCP port for strangers. */
	cfg.no_listen = 1;
	cfg.secret = secret;
	cfg.secret_len = sizeof(secret);
	cfg.world = p->nworkers;
	cfg.nnodes = p->nnodes;	/* the spares join nothing */
	cfg.ranks = ri;
	cfg.start_timeout = o->start_timeout;
	cfg.start_on_first_use = 1;
	cfg.on_timeout = jobrdzv_timeout_cb;
	cfg.on_error = jobrdzv_error_cb;
	cfg.on_all_joined = jobrdzv_joined_cb;
	cfg.on_join = jobrdzv_join_cb;
	cfg.on_alive = jobrdzv_alive_cb;
	cfg.arg = r;
	rc = rdzv_server_new(base, &cfg, &r->srv, e);
	free(ri);
	explicit_bzero(secret, sizeof(secret));
	if (rc != 0)
		return rc;
	snprintf(r->addr, sizeof(r->addr), "agent");
	return 0;
}

void
jobrdzv_started(struct jobrdzv *r)
{
	if (r->srv != NULL)
		rdzv_server_start_clock(r->srv);
}

void
jobrdzv_abort(struct jobrdzv *r, const char *why)
{
	if (r->srv != NULL)
		rdzv_server_abort(r->srv, why);
}

uint8_t *
jobrdzv_missing(const struct jobrdzv *r, size_t nranks, int *n)
{
	uint8_t	*miss = xcalloc(nranks ? nranks : 1, 1);
	int	 k;

	*n = 0;
	for (k = 0; k < r->nworkers; k++) {
		miss[k] = !rdzv_server_joined(r->srv, k);
		*n += miss[k];
	}
	return miss;
}

void
jobrdzv_stop(struct jobrdzv *r)
{
	size_t	i;

	for (i = 0; i < r->nhosts; i++)
		jobrdzv_drop(r, i);
	free(r->ch);
	free(r->nch);
	r->ch = NULL;
	r->nch = NULL;
	r->nhosts = 0;
	if (r->srv != NULL)
		rdzv_server_free(r->srv);
	r->srv = NULL;
}
