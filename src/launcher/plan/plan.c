/*
 * plan.c -- from options to processes: engine.yaml fills what the command
 * line left unset, hosts come from -H/--hostfile, engine.yaml or this
 * machine, and src/hostfile places the ranks.
 *
 * Room launcher/plan/: the plan (hosts, ranks, placement), the network
 * plan, the ranks' environment per framework. It includes only cli/
 * (t0041's rooms).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/cli/opts.h"
#include "hostfile/config.h"
#include "common/err.h"
#include "hostfile/hostfile.h"
#include "common/log.h"
#include "launcher/cli/peerflags.h"
#include "launcher/plan/plan.h"
#include "util/strv.h"
#include "util/xmalloc.h"
#include "launcher/cli/yamlopts.h"

/*
 * Gathers the hosts: -H/--hostfile, else engine.yaml's, else the Slurm
 * allocation (--launcher slurm, or by itself inside one), else this machine.
 */
static int
plan_hosts(struct hf_hosts *hs, struct opts *o, struct hf_config *c,
    int *given, struct dt_err *e)
{
	char	 spec[64];
	size_t	 i;
	int	 rc = 0, n;

	*given = 1;
	/* engine.yaml's launcher: ssh or local keeps every name a host. */
	if (o->launcher != LAUNCH_AUTO)
		hs->here = NULL;
	if (o->nhosts > 0) {
		for (i = 0; i < o->nhosts && rc == 0; i++)
			rc = hf_load_arg(hs, o->hosts[i], e);
	} else if (hf_config_has(c, HF_C_HOSTS)) {
		*hs = c->hosts;		/* take them over */
		hf_hosts_init(&c->hosts);
	} else if (hf_config_has(c, HF_C_HOSTFILE))
		rc = hf_parse_file(hs, c->hostfile, e);
	else if (o->launcher == LAUNCH_SLURM ||
	    (o->launcher == LAUNCH_AUTO && hf_slurm_job_id() != NULL)) {
		hs->here = NULL;	/* Slurm's nodes are its own */
		if (o->launcher == LAUNCH_AUTO)
			log_notice("inside Slurm job %s: using --launcher slurm",
			    hf_slurm_job_id());
		o->launcher = LAUNCH_SLURM;
		rc = hf_from_slurm_env(hs, e);
	} else {
		*given = 0;
		n = o->nproc_per_node ? o->nproc_per_node : o->np ? o->np : 1;
		/* No host has more than HF_SLOTS_MAX slots; this one neither. */
		if (n > HF_SLOTS_MAX && !o->oversubscribe)
			return dt_errf(e, o->nproc_per_node ? "--nproc-per-node"
			    : "-n", 0, 0, DT_ERR_RANGE, "%d ranks are more than "
			    "this machine's %d local slots; pass --oversubscribe "
			    "to run them all here, or -H to spread them over "
			    "hosts", n, HF_SLOTS_MAX);
		snprintf(spec, sizeof(spec), "localhost:%d",
		    n < HF_SLOTS_MAX ? n : HF_SLOTS_MAX);
		rc = hf_parse_list(hs, spec, e);
	}
	if (rc == 0 && hf_config_has(c, HF_C_SLOTSPERHOST))
		rc = hf_hosts_default_slots(hs, c->slots_per_host, e);
	if (rc == 0 && (o->include != NULL || o->exclude != NULL))
		rc = hf_filter(hs, o->include, o->exclude, e);
	for (i = 0; rc == 0 && i < hs->nnotes; i++)
		log_info("%s", hs->notes[i]);
	return rc;
}

/* True if every host of hs names this machine. */
static int
plan_all_here(const struct hf_hosts *hs)
{
	size_t	i;

	for (i = 0; i < hs->n; i++)
		if (!plan_here_name(hs->v[i].name))
			return 0;
	return 1;
}

/*
 * Too many ranks for hosts of which one is this machine: its names are one
 * host (Open MPI's rule), so say how to have several here.
 */
static void
plan_hint_here(const struct plan *p, struct dt_err *e)
{
	size_t	i, n;

	for (i = 0; i < p->nuse; i++)
		if (plan_here_name(p->hs.v[p->use[i]].name))
			break;
	if (i == p->nuse || e == NULL)
		return;
	n = strlen(e->msg);
	snprintf(e->msg + n, sizeof(e->msg) - n, "; every name of this "
	    "machine is one host: to simulate several hosts here, give them "
	    "names of their own with --launcher local (-H a:2,b:2 --launcher "
	    "local)");
}

/* "2,3" for the n device ids in ids (each below HF_RANKS_MAX). */
static char *
plan_devices(const int *ids, int n)
{
	char	*s = xmalloc((size_t)n * 8 + 1);
	size_t	 off = 0;
	int	 i;

	s[0] = '\0';
	for (i = 0; i < n; i++)
		off += sprintf(s + off, "%s%d", i ? "," : "", ids[i]);
	return s;
}

/* The spare sh as a host with an agent and no rank; here: p->here_auto. */
static void
plan_spare_host(struct plan_host *ph, const struct hf_host *sh, int here)
{
	ph->name = xstrdup(sh->name);
	ph->user = sh->user ? xstrdup(sh->user) : NULL;
	ph->port = sh->port;
	ph->ranks = xcalloc(1, sizeof(int));
	ph->here = here && plan_here_name(sh->name);
}

/* Copies the library's plan into ours, the spares left after its hosts. */
static void
plan_from_hf(struct plan *p)
{
	const struct hf_plan	*h = &p->hf;
	struct plan_host	*ph;
	size_t			 i;

	p->nnodes = h->nhosts;
	p->nhosts = h->nhosts + p->nspare;
	p->hosts = xcalloc(p->nhosts ? p->nhosts : 1, sizeof(*p->hosts));
	for (i = 0; i < p->nspare; i++)
		plan_spare_host(&p->hosts[h->nhosts + i], &p->hs.v[p->spare[i]],
		    p->here_auto);
	for (i = 0; i < h->nhosts; i++) {
		ph = &p->hosts[i];
		ph->name = xstrdup(h->hosts[i].name);
		ph->user = h->hosts[i].user ? xstrdup(h->hosts[i].user) : NULL;
		ph->port = h->hosts[i].port;
		ph->here = p->here_auto && plan_here_name(ph->name);
		ph->nworkers = h->host_nworkers[i];
		ph->ranks = xcalloc(h->host_nprocs[i] ? h->host_nprocs[i] : 1,
		    sizeof(int));
		if (h->hosts[i].slot_ids != NULL)
			ph->devices = plan_devices(h->hosts[i].slot_ids,
			    h->hosts[i].nslot_ids);
	}
	p->nranks = h->nranks;
	p->nworkers = h->nworkers;
	p->ranks = xcalloc(h->nranks, sizeof(*p->ranks));
	for (i = 0; i < h->nranks; i++) {
		p->ranks[i].host = h->ranks[i].host;
		p->ranks[i].local_rank = h->ranks[i].local_rank;
		p->ranks[i].slot = h->ranks[i].slot;
		p->ranks[i].role = h->ranks[i].role;
		ph = &p->hosts[h->ranks[i].host];
		ph->ranks[ph->nranks++] = i;
	}
}

/*
 * Sets the last --spares hosts of hs apart. They must leave a host for
 * the ranks, and need hosts to come from: this machine alone has none.
 */
static int
plan_split(struct plan *p, const struct opts *o, int given,
    struct dt_err *e)
{
	size_t	i, n = p->hs.n, nspare = o->spares > 0 ? (size_t)o->spares : 0;

	if (nspare > 0 && !given)
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "--spares %d: "
		    "this machine is the only host; name the hosts, spares last "
		    "(-H a,b,spare or --hostfile), or leave --spares out",
		    o->spares);
	if (nspare >= n && nspare > 0)
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "--spares %d "
		    "leaves no host for the ranks (%zu host%s in all; the "
		    "spares are the last of the list): give fewer spares or "
		    "more hosts",
		    o->spares, n, n == 1 ? "" : "s");
	p->nuse = n - nspare;
	p->nspare = nspare;
	p->use = xcalloc(n ? n : 1, sizeof(*p->use));
	p->spare = xcalloc(n ? n : 1, sizeof(*p->spare));
	for (i = 0; i < n; i++) {
		if (i < p->nuse)
			p->use[i] = i;
		else
			p->spare[i - p->nuse] = i;
	}
	return 0;
}

/* Places np workers over the hosts use[0..nuse) of p->hs, in that order. */
static int
plan_place(struct plan *p, const size_t *use, size_t nuse, int np,
    struct hf_plan *out, struct dt_err *e)
{
	struct hf_hosts		view;
	struct hf_place_opts	po = p->po;
	size_t			i;
	int			rc;

	memset(&view, 0, sizeof(view));
	view.v = xcalloc(nuse ? nuse : 1, sizeof(*view.v));
	for (i = 0; i < nuse; i++)
		view.v[view.n++] = p->hs.v[use[i]];
	po.np = np;
	memset(out, 0, sizeof(*out));
	rc = hf_place(&view, &po, out, e);
	free(view.v);
	return rc;
}

int
plan_build(struct plan *p, struct opts *o, struct dt_err *e)
{
	struct hf_config	*c = &p->cfg;
	struct hf_hosts		*hs = &p->hs;
	struct hf_place_opts	*po = &p->po;
	size_t			i;
	int			rc = 0, given;

	memset(p, 0, sizeof(*p));
	for (i = 0; i < o->nnotes; i++)
		log_notice("%s", o->notes[i]);
	hf_config_init(c);
	hf_hosts_init(hs);
	/* A chosen launcher reaches this machine's names by themselves. */
	if (o->launcher == LAUNCH_AUTO)
		hs->here = plan_here_name;
	if (o->config != NULL &&
	    (rc = hf_config_load(c, o->config, o->template, e)) == 0)
		rc = yamlopts_apply(o, c, e);
	else if (o->config == NULL && o->template != NULL)
		rc = dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "--template needs "
		    "an engine.yaml to merge under (-f FILE)");
	if (rc == 0)
		rc = plan_hosts(hs, o, c, &given, e);
	if (rc == 0)
		rc = plan_split(p, o, given, e);
	if (rc == 0 && o->launcher == LAUNCH_AUTO) {
		/* Hosts that name this machine are started here, not by ssh. */
		p->here_auto = given;
		o->launcher = given && !plan_all_here(hs) ? LAUNCH_SSH :
		    LAUNCH_LOCAL;
	}
	if (rc == 0 && o->launcher == LAUNCH_SLURM && hf_slurm_job_id() == NULL)
		rc = dt_errf(e, NULL, 0, 0, DT_ERR_NOTFOUND, "--launcher slurm: "
		    "not inside a Slurm allocation (run dtrun under salloc or "
		    "in an sbatch script)");
	if (rc == 0) {
		memset(po, 0, sizeof(*po));
		po->np = o->np;
		/* Locally without hosts, -n and --nproc-per-node both mean "this many here". */
		po->nproc_per_node = given ? o->nproc_per_node : 0;
		/* Past the local slots (--oversubscribe): all of them still. */
		if (!given && po->np == 0 && o->nproc_per_node > HF_SLOTS_MAX)
			po->np = o->nproc_per_node;
		po->oversubscribe = o->oversubscribe;
		po->nservers = o->nservers;
		if (!given && o->np > 0 && o->nproc_per_node > 0 &&
		    o->np != o->nproc_per_node)
			rc = dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "-n %d and "
			    "--nproc-per-node %d disagree on one local host "
			    "(give one of them)", o->np, o->nproc_per_node);
		if (rc == 0)
			rc = plan_place(p, p->use, p->nuse, po->np, &p->hf, e);
		if (rc == DT_ERR_RANGE && p->here_auto)
			plan_hint_here(p, e);
	}
	if (rc == 0) {
		plan_from_hf(p);
		p->local = o->launcher == LAUNCH_LOCAL;
		p->np = p->nworkers;
		rc = peer_nnodes_check(o, p->nnodes, e);
	}
	return rc;
}

/* Frees the copy of the library's plan (plan_from_hf's). */
static void
plan_free_placed(struct plan *p)
{
	size_t	h;

	for (h = 0; h < p->nhosts; h++) {
		free(p->hosts[h].name);
		free(p->hosts[h].user);
		free(p->hosts[h].ranks);
		free(p->hosts[h].devices);
	}
	free(p->hosts);
	free(p->ranks);
	hf_plan_free(&p->hf);
	p->hosts = NULL;
	p->ranks = NULL;
	p->nhosts = p->nnodes = p->nranks = 0;
}

/* The index of k in v[0..n), or -1. */
static long
plan_index(const size_t *v, size_t n, size_t k)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (v[i] == k)
			return (long)i;
	return -1;
}

/* Removes v[i] from v[0..*n), keeping the order. */
static void
plan_cut(size_t *v, size_t *n, size_t i)
{
	memmove(v + i, v + i + 1, (*n - i - 1) * sizeof(*v));
	(*n)--;
}

/* Forgets the last plan_drop's swaps. */
static void
plan_swaps_free(struct plan *p)
{
	size_t	i;

	for (i = 0; i < p->nswaps; i++) {
		free(p->swaps[i].lost);
		free(p->swaps[i].spare);
	}
	free(p->swaps);
	p->swaps = NULL;
	p->nswaps = 0;
}

/*
 * Takes the hosts named in names out of use (a copy of p->use) and spare:
 * a lost host's place goes to the first spare left, noted in p->swaps.
 */
static void
plan_replace(struct plan *p, char *const *names, size_t n, size_t *use,
    size_t *nuse, size_t *spare, size_t *nspare)
{
	struct plan_swap	*sw;
	long			 k, at;
	size_t			 i;

	for (i = 0; i < n; i++) {
		if ((k = hf_hosts_find(&p->hs, names[i])) < 0)
			continue;
		if ((at = plan_index(spare, *nspare, (size_t)k)) >= 0) {
			plan_cut(spare, nspare, (size_t)at);
			continue;
		}
		if ((at = plan_index(use, *nuse, (size_t)k)) < 0)
			continue;
		if (*nspare == 0) {
			plan_cut(use, nuse, (size_t)at);
			continue;
		}
		use[at] = spare[0];
		plan_cut(spare, nspare, 0);
		p->swaps = xreallocarray(p->swaps, p->nswaps + 1,
		    sizeof(*p->swaps));
		sw = &p->swaps[p->nswaps++];
		sw->lost = xstrdup(names[i]);
		sw->spare = xstrdup(p->hs.v[use[at]].name);
	}
}

int
plan_drop(struct plan *p, char *const *names, size_t n, int min_np,
    struct dt_err *e)
{
	struct hf_plan	hf;
	size_t		cap = p->hs.n ? p->hs.n : 1, nuse = p->nuse;
	size_t		nspare = p->nspare;
	size_t		*use = xcalloc(cap, sizeof(*use));
	size_t		*spare = xcalloc(cap, sizeof(*spare));
	int		rc;

	memcpy(use, p->use, p->nuse * sizeof(*use));
	memcpy(spare, p->spare, p->nspare * sizeof(*spare));
	plan_swaps_free(p);
	plan_replace(p, names, n, use, &nuse, spare, &nspare);
	rc = plan_place(p, use, nuse, p->np, &hf, e);
	if (rc == DT_ERR_RANGE && min_np > 0) {
		hf_plan_free(&hf);
		rc = plan_place(p, use, nuse, 0, &hf, e);
		if (rc == 0 && (hf.nworkers < min_np || hf.nworkers > p->np))
			rc = dt_errf(e, NULL, 0, 0, DT_ERR_RANGE, "the other "
			    "hosts take %d rank%s, not the %d of --min-np",
			    hf.nworkers, hf.nworkers == 1 ? "" : "s", min_np);
	}
	if (rc != 0) {
		hf_plan_free(&hf);
		plan_swaps_free(p);
		free(use);
		free(spare);
		return rc;
	}
	free(p->use);
	free(p->spare);
	p->use = use;
	p->nuse = nuse;
	p->spare = spare;
	p->nspare = nspare;
	plan_free_placed(p);
	p->hf = hf;
	plan_from_hf(p);
	return 0;
}

int
plan_on_loopback(const struct plan *p)
{
	size_t	h;

	if (p->local)
		return 1;
	for (h = 0; h < p->nhosts; h++)
		if (!plan_loopback_name(p->hosts[h].name))
			return 0;
	return 1;
}

/* Prints s quoted for a POSIX shell when it needs quoting. */
static void
print_word(FILE *f, const char *s)
{
	char	*q;

	if (*s != '\0' && strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") == strlen(s)) {
		fputs(s, f);
		return;
	}
	q = shell_quote(s);
	fputs(q, f);
	free(q);
}

void
plan_print(const struct plan *p, const struct opts *o, const char *job_id)
{
	static const char *const kinds[] = { "auto", "local", "ssh", "slurm" };
	char	line[512];
	size_t	r;
	int	i;

	printf("# dtrun plan: job %s, %zu process%s (%d worker%s) on %zu "
	    "host%s, launcher %s\n", job_id, p->nranks,
	    p->nranks == 1 ? "" : "es", p->nworkers,
	    p->nworkers == 1 ? "" : "s", p->nnodes, p->nnodes == 1 ? "" : "s",
	    kinds[o->launcher]);
	for (r = p->nnodes; r < p->nhosts; r++)
		printf("# spare %s: an agent, no rank\n", p->hosts[r].name);
	printf("# RANK HOST LOCAL_RANK COMMAND\n");
	for (r = 0; r < p->nranks; r++) {
		hf_plan_line(&p->hf, r, line, sizeof(line));
		fputs(line, stdout);
		for (i = 0; i < o->ncmd; i++) {
			putchar(' ');
			print_word(stdout, o->cmd[i]);
		}
		putchar('\n');
	}
	fflush(stdout);
}

void
plan_free(struct plan *p)
{
	plan_free_placed(p);
	hf_config_free(&p->cfg);
	hf_hosts_free(&p->hs);
	free(p->use);
	free(p->spare);
	plan_swaps_free(p);
	memset(p, 0, sizeof(*p));
}
