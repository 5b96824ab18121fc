/*
 * jobrdzv.c -- a job attempt's rendezvous server (jobrdzv.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher/cli.h"
#include "launcher/envctx.h"
#include "common/err.h"
#include "launcher/jobrdzv.h"
#include "common/log.h"
#include "launcher/plan.h"
#include "rendezvous/server.h"
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

/*
 * Where remote hosts reach us: the address of the chosen interface
 * (--iface or automatic). Not our host name: Debian maps it to
 * 127.0.1.1, which on another host is that host itself.
 */
static void
jobrdzv_address(struct jobrdzv *r, const struct env_ctx *env, int local)
{
	char	host[256];

	if (local)
		snprintf(host, sizeof(host), "127.0.0.1");
	else if (env->ifaddr[0] != '\0')
		snprintf(host, sizeof(host), "%s", env->ifaddr);
	else if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "localhost");
	snprintf(r->addr, sizeof(r->addr), "%s:%d", host,
	    rdzv_server_port(r->srv));
	log_debug("rendezvous at %s", r->addr);
}

int
jobrdzv_start(struct jobrdzv *r, struct event_base *base,
    const struct opts *o, const struct plan *p, struct env_ctx *env,
    const struct jobrdzv_cbs *cb, struct dt_err *e)
{
	struct rdzv_server_cfg	 cfg;
	struct rdzv_rank_info	*ri;
	uint8_t			 secret[RDZV_SECRET_LEN];
	int			 rc, local = plan_on_loopback(p);

	if ((rc = rdzv_auth_random(secret, sizeof(secret), e)) != 0)
		return rc;
	rdzv_hex_encode(secret, sizeof(secret), r->token, sizeof(r->token));
	env->rdzv_token = r->token;
	env->rdzv_addr = r->addr;
	r->nworkers = p->nworkers;
	r->cb = *cb;
	ri = jobrdzv_ranks(p);
	memset(&cfg, 0, sizeof(cfg));
	cfg.bind_addr = local ? "127.0.0.1" : NULL;
	cfg.secret = secret;
	cfg.secret_len = sizeof(secret);
	cfg.world = p->nworkers;
	cfg.nnodes = p->nhosts;
	cfg.ranks = ri;
	cfg.start_timeout = o->start_timeout;
	cfg.start_on_first_join = 1;
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
	jobrdzv_address(r, env, local);
	return 0;
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
	if (r->srv != NULL)
		rdzv_server_free(r->srv);
	r->srv = NULL;
	explicit_bzero(r->token, sizeof(r->token));
}
