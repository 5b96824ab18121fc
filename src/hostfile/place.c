/*
 * place.c -- rank placement: workers host-major over the hosts' slots
 * (with --nproc-per-node, -n and --oversubscribe), MXNet's servers round
 * the hosts and its scheduler, and how --dry-run and DMLC_* show a plan.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strs.h"
#include "hostfile/hf_impl.h"
#include "hostfile/hosts.h"

/* The counts a placement works out before it makes ranks. */
struct place_counts {
	int	*workers;	/* per source host */
	int	*servers;
	int	*slots;		/* slots each host offers */
	long	 total;		/* sum of slots */
};

/* Checks opts; returns 0 or DT_ERR_INVAL. */
static int
place_check(const struct hf_hosts *hs, const struct hf_place_opts *o,
    struct dt_err *e)
{
	if (hs->n == 0)
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "no hosts to run "
		    "on (give -H, --hostfile or hosts in engine.yaml)");
	if (o->np < 0 || o->np > HF_RANKS_MAX)
		return dt_errf(e, "-n", 0, 0, DT_ERR_INVAL, "%d processes is "
		    "outside 0..%d", o->np, HF_RANKS_MAX);
	if (o->nproc_per_node < 0 || o->nproc_per_node > HF_SLOTS_MAX)
		return dt_errf(e, "--nproc-per-node", 0, 0, DT_ERR_INVAL,
		    "%d is outside 0..%d", o->nproc_per_node, HF_SLOTS_MAX);
	if (o->nservers < 0 || o->nservers > HF_RANKS_MAX)
		return dt_errf(e, "-s", 0, 0, DT_ERR_INVAL, "%d servers is "
		    "outside 0..%d", o->nservers, HF_RANKS_MAX);
	if (o->ps_port < 0 || o->ps_port > 65535)
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "scheduler port %d "
		    "is outside 1..65535", o->ps_port);
	return 0;
}

/* Adds the workers past the slots one at a time round the hosts. */
static int
place_oversubscribe(const struct hf_hosts *hs, struct place_counts *c,
    long left, int np, struct dt_err *e)
{
	size_t	i;
	int	progress;

	while (left > 0) {
		progress = 0;
		for (i = 0; i < hs->n && left > 0; i++) {
			if (hs->v[i].max_slots != 0 &&
			    c->workers[i] >= hs->v[i].max_slots)
				continue;
			c->workers[i]++;
			left--;
			progress = 1;
		}
		if (!progress)
			return dt_errf(e, "-n", 0, 0, DT_ERR_RANGE, "%d "
			    "processes are more than the hosts' max_slots allow "
			    "(%ld), even with --oversubscribe", np,
			    (long)np - left);
	}
	return 0;
}

/* Works out the workers and servers on each source host. */
static int
place_count(const struct hf_hosts *hs, const struct hf_place_opts *o,
    struct place_counts *c, int *np, struct dt_err *e)
{
	const struct hf_host	*h;
	size_t			 i;
	long			 left;

	for (i = 0; i < hs->n; i++) {
		h = &hs->v[i];
		c->slots[i] = o->nproc_per_node ? o->nproc_per_node : h->slots;
		if (h->max_slots != 0 && c->slots[i] > h->max_slots)
			return dt_errf(e, h->file, h->line, h->col,
			    DT_ERR_RANGE, "--nproc-per-node %d is more than "
			    "max_slots=%d of %s", c->slots[i], h->max_slots,
			    h->name);
		c->total += c->slots[i];
	}
	if (o->np == 0 && c->total > HF_RANKS_MAX)
		return dt_errf(e, NULL, 0, 0, DT_ERR_RANGE, "the hosts have "
		    "%ld slots, more than %d processes; give -n", c->total,
		    HF_RANKS_MAX);
	*np = o->np ? o->np : (int)c->total;
	left = *np;
	for (i = 0; i < hs->n; i++) {
		c->workers[i] = left < c->slots[i] ? (int)left : c->slots[i];
		left -= c->workers[i];
	}
	if (left > 0 && !o->oversubscribe)
		return dt_errf(e, "-n", 0, 0, DT_ERR_RANGE, "%d processes "
		    "asked for, but the %zu host%s %s %ld slot%s%s; add "
		    "hosts or slots, or pass --oversubscribe", *np, hs->n,
		    hs->n == 1 ? "" : "s", hs->n == 1 ? "has" : "have",
		    c->total, c->total == 1 ? "" : "s",
		    o->nproc_per_node ? " (--nproc-per-node)" : "");
	if (left > 0 && place_oversubscribe(hs, c, left, *np, e) != 0)
		return DT_ERR_RANGE;
	for (i = 0; i < (size_t)o->nservers; i++)
		c->servers[i % hs->n]++;
	return 0;
}

/* Makes plan's hosts, counts and ranks from the counts. */
static int
place_build(const struct hf_hosts *hs, struct place_counts *c,
    struct hf_plan *plan)
{
	struct hf_rank		*r;
	const struct hf_host	*h;
	size_t			 i, k, nprocs, *map;
	int			 j, sched, *srvlocal;

	nprocs = (size_t)plan->nworkers + plan->nservers +
	    (plan->nservers > 0);
	map = calloc(hs->n, sizeof(*map));
	plan->hosts = calloc(hs->n, sizeof(*plan->hosts));
	plan->host_nprocs = calloc(hs->n, sizeof(*plan->host_nprocs));
	plan->host_nworkers = calloc(hs->n, sizeof(*plan->host_nworkers));
	plan->ranks = calloc(nprocs ? nprocs : 1, sizeof(*plan->ranks));
	srvlocal = calloc(hs->n, sizeof(*srvlocal));
	if (map == NULL || plan->hosts == NULL || plan->host_nprocs == NULL ||
	    plan->host_nworkers == NULL || plan->ranks == NULL ||
	    srvlocal == NULL)
		goto nomem;
	for (i = 0; i < hs->n; i++) {
		sched = i == 0 && plan->nservers > 0;
		if (c->workers[i] + c->servers[i] + sched == 0)
			continue;
		map[i] = plan->nhosts;
		if (hosts_copy(&plan->hosts[plan->nhosts++], &hs->v[i],
		    &plan->files, &plan->nfiles) != 0)
			goto nomem;
		plan->host_nworkers[map[i]] = c->workers[i];
		plan->host_nprocs[map[i]] = c->workers[i] + c->servers[i] +
		    sched;
	}
	r = plan->ranks;
	for (i = 0; i < hs->n; i++) {
		h = &hs->v[i];
		for (j = 0; j < c->workers[i]; j++, r++) {
			r->host = (int)map[i];
			r->local_rank = j;
			r->slot = h->slot_ids != NULL ?
			    h->slot_ids[j % h->nslot_ids] : j % c->slots[i];
			r->role = HF_ROLE_WORKER;
			r->role_rank = (int)(r - plan->ranks);
		}
	}
	for (k = 0; k < (size_t)plan->nservers; k++, r++) {
		i = k % hs->n;
		r->host = (int)map[i];
		r->local_rank = srvlocal[i]++;
		r->slot = -1;
		r->role = HF_ROLE_SERVER;
		r->role_rank = (int)k;
	}
	if (plan->nservers > 0) {
		r->host = 0;
		r->slot = -1;
		r->role = HF_ROLE_SCHEDULER;
	}
	plan->nranks = nprocs;
	free(map);
	free(srvlocal);
	return 0;
nomem:
	free(map);
	free(srvlocal);
	return DT_ERR_NOMEM;
}

int
hf_place(const struct hf_hosts *hs, const struct hf_place_opts *o,
    struct hf_plan *plan, struct dt_err *e)
{
	struct place_counts	c;
	int			r, np = 0;

	memset(plan, 0, sizeof(*plan));
	memset(&c, 0, sizeof(c));
	if ((r = place_check(hs, o, e)) != 0)
		return r;
	c.workers = calloc(hs->n, sizeof(*c.workers));
	c.servers = calloc(hs->n, sizeof(*c.servers));
	c.slots = calloc(hs->n, sizeof(*c.slots));
	if (c.workers == NULL || c.servers == NULL || c.slots == NULL) {
		r = dt_errf(e, NULL, 0, 0, DT_ERR_NOMEM, "out of memory");
		goto out;
	}
	if ((r = place_count(hs, o, &c, &np, e)) != 0)
		goto out;
	plan->nworkers = np;
	plan->nservers = o->nservers;
	plan->ps_port = o->ps_port ? o->ps_port : HF_PS_PORT;
	if ((r = place_build(hs, &c, plan)) != 0)
		r = dt_errf(e, NULL, 0, 0, r, "out of memory placing %d "
		    "processes", np);
out:
	free(c.workers);
	free(c.servers);
	free(c.slots);
	return r;
}

void
hf_plan_free(struct hf_plan *plan)
{
	size_t	i;

	if (plan->hosts != NULL)
		for (i = 0; i < plan->nhosts; i++)
			hosts_host_free(&plan->hosts[i]);
	free(plan->hosts);
	free(plan->host_nprocs);
	free(plan->host_nworkers);
	free(plan->ranks);
	dt_strs_free(plan->files, plan->nfiles);
	memset(plan, 0, sizeof(*plan));
}

int
hf_plan_line(const struct hf_plan *plan, size_t i, char *buf, size_t len)
{
	const struct hf_rank	*r = &plan->ranks[i];
	const char		*host = plan->hosts[r->host].name;

	switch (r->role) {
	case HF_ROLE_SERVER:
		return snprintf(buf, len, "server:%d %s %d", r->role_rank, host,
		    r->local_rank);
	case HF_ROLE_SCHEDULER:
		return snprintf(buf, len, "scheduler %s %d", host,
		    r->local_rank);
	}
	return snprintf(buf, len, "%zu %s %d", i, host, r->local_rank);
}

int
hf_plan_dmlc_env(const struct hf_plan *plan, size_t i, hf_env_fn fn,
    void *arg)
{
	static const char *const roles[] = { "worker", "server", "scheduler" };
	const struct hf_rank	*sched;
	char			 port[16], nw[16], ns[16];
	int			 r;

	if (plan->nservers == 0)
		return 0;
	sched = &plan->ranks[plan->nranks - 1];
	snprintf(port, sizeof(port), "%d", plan->ps_port);
	snprintf(nw, sizeof(nw), "%d", plan->nworkers);
	snprintf(ns, sizeof(ns), "%d", plan->nservers);
	if ((r = fn("DMLC_ROLE", roles[plan->ranks[i].role], arg)) != 0 ||
	    (r = fn("DMLC_PS_ROOT_URI", plan->hosts[sched->host].name,
	    arg)) != 0 ||
	    (r = fn("DMLC_PS_ROOT_PORT", port, arg)) != 0 ||
	    (r = fn("DMLC_NUM_WORKER", nw, arg)) != 0 ||
	    (r = fn("DMLC_NUM_SERVER", ns, arg)) != 0)
		return r;
	return 0;
}
