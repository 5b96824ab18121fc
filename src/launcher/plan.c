/*
 * plan.c -- from options to processes: engine.yaml fills what the command
 * line left unset, hosts come from -H/--hostfile, engine.yaml or this
 * machine, and src/hostfile places the ranks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/opts.h"
#include "hostfile/config.h"
#include "common/err.h"
#include "hostfile/hostfile.h"
#include "common/log.h"
#include "launcher/peerflags.h"
#include "launcher/plan.h"
#include "util/strv.h"
#include "util/xmalloc.h"
#include "launcher/yamlopts.h"

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

/* "2,3" for the n device ids in ids (each below HF_SLOTS_MAX). */
static char *
plan_devices(const int *ids, int n)
{
	char	*s = xmalloc((size_t)n * 5 + 1);
	size_t	 off = 0;
	int	 i;

	s[0] = '\0';
	for (i = 0; i < n; i++)
		off += sprintf(s + off, "%s%d", i ? "," : "", ids[i]);
	return s;
}

/* Copies the library's plan into ours. */
static void
plan_from_hf(struct plan *p)
{
	const struct hf_plan	*h = &p->hf;
	struct plan_host	*ph;
	size_t			 i;

	p->nhosts = h->nhosts;
	p->hosts = xcalloc(h->nhosts, sizeof(*p->hosts));
	for (i = 0; i < h->nhosts; i++) {
		ph = &p->hosts[i];
		ph->name = xstrdup(h->hosts[i].name);
		ph->user = h->hosts[i].user ? xstrdup(h->hosts[i].user) : NULL;
		ph->port = h->hosts[i].port;
		ph->nworkers = h->host_nworkers[i];
		ph->ranks = xcalloc(h->host_nprocs[i], sizeof(int));
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
	if (o->config != NULL &&
	    (rc = hf_config_load(c, o->config, o->template, e)) == 0)
		rc = yamlopts_apply(o, c, e);
	else if (o->config == NULL && o->template != NULL)
		rc = dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "--template needs "
		    "an engine.yaml to merge under (-f FILE)");
	if (rc == 0)
		rc = plan_hosts(hs, o, c, &given, e);
	if (rc == 0 && o->launcher == LAUNCH_AUTO)
		o->launcher = given ? LAUNCH_SSH : LAUNCH_LOCAL;
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
			rc = hf_place(hs, po, &p->hf, e);
	}
	if (rc == 0) {
		plan_from_hf(p);
		p->local = o->launcher == LAUNCH_LOCAL;
		p->np = p->nworkers;
		p->dropped = xcalloc(hs->n ? hs->n : 1, 1);
		rc = peer_nnodes_check(o, p->nhosts, e);
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
	p->nhosts = p->nranks = 0;
}

/* Places np workers over the hosts not dropped (a shallow view of p->hs). */
static int
plan_place_kept(struct plan *p, int np, struct hf_plan *out, struct dt_err *e)
{
	struct hf_hosts		view;
	struct hf_place_opts	po = p->po;
	size_t			i;
	int			rc;

	memset(&view, 0, sizeof(view));
	view.v = xcalloc(p->hs.n ? p->hs.n : 1, sizeof(*view.v));
	for (i = 0; i < p->hs.n; i++)
		if (!p->dropped[i])
			view.v[view.n++] = p->hs.v[i];
	po.np = np;
	memset(out, 0, sizeof(*out));
	rc = hf_place(&view, &po, out, e);
	free(view.v);
	return rc;
}

int
plan_drop(struct plan *p, char *const *names, size_t n, int min_np,
    struct dt_err *e)
{
	struct hf_plan	hf;
	size_t		i;
	long		k;
	int		rc;

	for (i = 0; i < n; i++)
		if ((k = hf_hosts_find(&p->hs, names[i])) >= 0)
			p->dropped[k] = 2;	/* 2: dropped now, undone below */
	rc = plan_place_kept(p, p->np, &hf, e);
	if (rc == DT_ERR_RANGE && min_np > 0) {
		hf_plan_free(&hf);
		rc = plan_place_kept(p, 0, &hf, e);
		if (rc == 0 && (hf.nworkers < min_np || hf.nworkers > p->np))
			rc = dt_errf(e, NULL, 0, 0, DT_ERR_RANGE, "the other "
			    "hosts take %d rank%s, not the %d of --min-np",
			    hf.nworkers, hf.nworkers == 1 ? "" : "s", min_np);
	}
	for (i = 0; i < p->hs.n; i++)
		if (p->dropped[i] == 2)
			p->dropped[i] = rc == 0;
	if (rc != 0) {
		hf_plan_free(&hf);
		return rc;
	}
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

int
plan_loopback_name(const char *name)
{
	return strncmp(name, "127.", 4) == 0 || strcmp(name, "localhost") == 0;
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
	    p->nworkers == 1 ? "" : "s", p->nhosts, p->nhosts == 1 ? "" : "s",
	    kinds[o->launcher]);
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
	free(p->dropped);
	memset(p, 0, sizeof(*p));
}
