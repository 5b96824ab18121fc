/*
 * checkhost.c -- dtrun --check: what is wrong on one host (open files,
 * memory, GPUs, its clock), and what differs between the hosts (kernel,
 * libraries, GPUs), each problem with its fix.
 */
#include <stdlib.h>
#include <string.h>

#include "launcher/cli/cli.h"
#include "launcher/plan/plan.h"
#include "common/sys.h"
#include "util/xmalloc.h"
#include "launcher/check/checkint.h"

/* Descriptors the agent of host i needs for its ranks (dtlimits.h). */
static unsigned long long
check_nofile_agent(const struct check *c, size_t i)
{
	return (unsigned long long)c->p->hosts[i].nranks * DT_NOFILE_PER_RANK +
	    DT_NOFILE_SPARE;
}

/* dtrun's own limit against its rendezvous and links (dtlimits.h). */
static void
check_nofile_dtrun(struct check *c)
{
	unsigned long long	need, lim = dt_nofile_limit();

	need = (unsigned long long)c->p->nhosts * DT_NOFILE_PER_HOST +
	    DT_NOFILE_SPARE;
	if (c->o->output_dir != NULL)
		need += (unsigned long long)c->p->nranks *
		    DT_NOFILE_OUTPUT_PER_RANK;
	if (lim < need)
		check_problem(c, "dtrun (this machine): its open-files limit "
		    "is %llu, below the %llu it needs for %zu ranks on %zu "
		    "host%s%s: raise it (ulimit -n), or run fewer ranks", lim,
		    need, c->p->nranks, c->p->nhosts, c->p->nhosts == 1 ? "" : "s",
		    c->o->output_dir != NULL ? " with --output-dir" : "");
}

/*
 * The memory settings of host i that make a job fail: a locked-memory
 * limit RDMA registration outgrows, strict overcommit.
 */
static void
check_memory_problems(struct check *c, size_t i)
{
	const struct chost	*ch = &c->hs[i];
	const char		*name = c->p->hosts[i].name, *v, *rdma;
	unsigned long long	 kb;

	if ((rdma = ch_get(ch, "rdma")) != NULL && strtoull(rdma, NULL, 10) > 0 &&
	    (v = ch_get(ch, "memlock")) != NULL && strcmp(v, "unlimited") != 0 &&
	    (kb = strtoull(v, NULL, 10)) < DT_MEMLOCK_MIN_KB)
		check_problem(c, "%s: its locked-memory limit is %llu KiB, and "
		    "NCCL registers its buffers for the %s RDMA device%s there "
		    "against it: raise it there (ulimit -l unlimited where the "
		    "agent starts, LimitMEMLOCK=infinity, or memlock in "
		    "limits.conf)", name, kb, rdma, strcmp(rdma, "1") == 0 ? "" :
		    "s");
	/* CUDA and PyTorch reserve far more address space than they touch. */
	if ((v = ch_get(ch, "overcommit")) != NULL && strcmp(v, "2") == 0)
		check_problem(c, "%s: vm.overcommit_memory is 2 (strict): CUDA "
		    "and PyTorch reserve large virtual ranges and fail there "
		    "with out of memory: sysctl vm.overcommit_memory=0 (or 1)",
		    name);
}

/*
 * A GPU with uncorrected ECC errors since its driver loaded (the job's
 * first touch of that memory can kill it), and a failed DCGM diagnostic.
 */
static void
check_gpu_health(struct check *c, size_t i)
{
	const struct chost	*ch = &c->hs[i];
	const char		*name = c->p->hosts[i].name, *v;
	size_t			 k;
	int			 gpu;
	unsigned long		 n;

	for (k = 0; k < ch->nkv; k++) {
		if (strncmp(ch->kv[k], "gpu_ecc=", 8) != 0 ||
		    sscanf(ch->kv[k] + 8, "%d:%lu", &gpu, &n) != 2)
			continue;
		check_problem(c, "%s: GPU %d has %lu uncorrected ECC error%s "
		    "since its driver loaded: drain the host and reset the GPU "
		    "(nvidia-smi -r -i %d), or leave it out (--exclude %s:%d)",
		    name, gpu, n, n == 1 ? "" : "s", gpu, name, gpu);
	}
	if ((v = ch_get(ch, "dcgm_err")) != NULL)
		check_problem(c, "%s: %s: run dcgmi diag -r 2 there for the "
		    "details, and leave the host out (--exclude %s) until it "
		    "passes", name, v, name);
}

/* The problems of one host's answers. */
static void
check_host_problems(struct check *c, size_t i)
{
	const struct chost	*ch = &c->hs[i], *h0 = &c->hs[0];
	const char		*name = c->p->hosts[i].name, *v, *var;
	const char		*r0 = c->p->hosts[0].name, *py;
	unsigned long long	 lim, need;
	int64_t			 off;

	if ((v = ch_get(ch, "version")) != NULL && strcmp(v, DT_VERSION) != 0)
		check_problem(c, "%s: its agent is dtrun %s, this is %s: install "
		    "the same dtrun there (or remove its cached agent)", name, v,
		    DT_VERSION);
	if ((v = ch_get(ch, "iface_err")) != NULL)
		check_problem(c, "%s: no interface to choose: %s: name one with "
		    "--iface IFACE (or --iface %s=IFACE for this host alone)",
		    name, v, name);
	if (i == 0 && (v = ch_get(ch, "listen_err")) != NULL &&
	    ch_get(ch, "iface_err") == NULL)
		check_problem(c, "%s (rank 0's host): %s: choose another "
		    "interface with --iface %s=IFACE", name, v, name);
	if ((v = kv_get(ch->pkv, ch->npkv, "reach_err")) != NULL)
		check_problem(c, "%s cannot reach rank 0's host %s at its "
		    "address %s (%s): %s: choose an interface on %s that every "
		    "host reaches (--iface %s=IFACE), or let TCP through "
		    "between them", name, r0, ch_get(h0, "addr"),
		    ch_get(h0, "iface"), v, r0, r0);
	if ((v = ch_get(ch, "cmd_err")) != NULL)
		check_problem(c, "%s: %s", name, v);
	if ((v = ch_get(ch, "nccl_ifname_err")) != NULL ||
	    (v = ch_get(ch, "gloo_ifname_err")) != NULL) {
		var = ch_get(ch, "nccl_ifname_err") == v ? "NCCL_SOCKET_IFNAME" :
		    "GLOO_SOCKET_IFNAME";
		check_problem(c, "%s: %s: pass one it has (-x %s=IFACE), or "
		    "leave %s unset and dtrun sets it", name, v, var, var);
		if (var[0] == 'N' && (v = ch_get(ch, "gloo_ifname_err")) != NULL)
			check_problem(c, "%s: %s: pass one it has (-x "
			    "GLOO_SOCKET_IFNAME=IFACE), or leave it unset and "
			    "dtrun sets it", name, v);
	}
	if ((v = ch_get(ch, "python_err")) != NULL)
		check_problem(c, "%s: the interpreter does not run: %s: check "
		    "that it works there", name, v);
	else if (c->torch && (v = ch_get(ch, "torch_err")) != NULL) {
		py = ch_get(ch, "cmd") != NULL ? ch_get(ch, "cmd") :
		    c->o->cmd[0];
		check_problem(c, "%s: the script imports torch, but %s there has "
		    "none (%s): install torch for that interpreter (%s -m pip "
		    "install torch, or the distribution's python3-torch), or "
		    "name one that has it", name, py, v, py);
	}
	if ((v = ch_get(ch, "gpu_err")) != NULL)
		check_problem(c, "%s: %s: check its NVIDIA driver (a reboot "
		    "after an upgrade, or nvidia-smi there, says more)", name, v);
	check_gpu_health(c, i);
	if ((v = ch_get(ch, "probe_err")) != NULL)
		check_problem(c, "%s: %s", name, v);
	if ((v = ch_get(ch, "setup_err")) != NULL)
		check_problem(c, "%s: --setup failed there: %s: fix it (a run "
		    "would stop there, exit 2, before any rank)", name, v);
	if ((v = ch_get(ch, "nofile")) != NULL &&
	    (lim = strtoull(v, NULL, 10)) < (need = check_nofile_agent(c, i)))
		check_problem(c, "%s: its open-files limit is %llu, below the "
		    "%llu its agent needs for %d ranks: raise it there (ulimit "
		    "-n where the agent starts, LimitNOFILE= or limits.conf)",
		    name, lim, need, c->p->hosts[i].nranks);
	if ((v = ch_get(ch, "shm_mb")) != NULL && c->p->hosts[i].nranks > 1 &&
	    (lim = strtoull(v, NULL, 10)) < DT_SHM_MIN_MB)
		check_problem(c, "%s: /dev/shm is %llu MiB: NCCL's shared memory "
		    "between its %d ranks needs more (docker run --shm-size=1g, "
		    "or mount -o remount,size=2g /dev/shm)", name, lim,
		    c->p->hosts[i].nranks);
	if ((v = ch_get(ch, "disk_free_mb")) != NULL &&
	    (lim = strtoull(v, NULL, 10)) < DT_DISK_MIN_MB)
		check_problem(c, "%s: only %llu MiB free in the job's directory "
		    "there: free some, or start the job from another directory",
		    name, lim);
	check_memory_problems(c, i);
	off = ch->skew_ms < 0 ? -ch->skew_ms : ch->skew_ms;
	if (ch->gathered && off > CHECK_SKEW_MAX_MS + (int64_t)ch->rtt_ms / 2)
		check_problem(c, "%s: its clock is %.1f s %s dtrun's: run NTP "
		    "there (chrony, systemd-timesyncd)", name, off / 1000.0,
		    ch->skew_ms > 0 ? "ahead of" : "behind");
}

/*
 * What every host should have alike, and the fix when one differs. The
 * GPUs' count and model are ours, from the gpu= answers.
 */
static const struct check_drift {
	const char	*key;
	const char	*fix;
} check_drifts[] = {
	{ "kernel", "boot the same kernel everywhere" },
	{ "glibc", "install the same C library everywhere (one OS image)" },
	{ "python", "install the same version everywhere" },
	{ "torch", "install the same version everywhere" },
	{ "nccl_version", "install the same version everywhere (NCCL "
	    "versions need not talk to each other)" },
	{ "driver", "install the same NVIDIA driver everywhere" },
	{ "gpu_count", "a GPU missing has usually fallen off the bus "
	    "(nvidia-smi -L, dmesg there): fix it, or leave those hosts out" },
	{ "gpu_model", "run on hosts of one GPU model: the slowest sets "
	    "every step's pace" },
};

#define CHECK_DRIFT_NAMES	8	/* hosts named per value, at most */
#define CHECK_DRIFT_VALUES	4	/* values other than the majority's */

/* The GPUs' count and models of host i, from its gpu= answers. */
static void
check_gpus(struct chost *ch)
{
	struct strv	 models = { 0 };
	const char	*v, *b, *e;
	size_t		 k, m, n = 0, l;

	for (k = 0; k < ch->nkv; k++) {
		if (strncmp(ch->kv[k], "gpu=", 4) != 0)
			continue;
		n++;
		/* "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-...)" */
		v = ch->kv[k] + 4;
		b = (b = strstr(v, ": ")) != NULL ? b + 2 : v;
		l = (e = strstr(b, " (UUID")) != NULL ? (size_t)(e - b) :
		    strlen(b);
		for (m = 0; m < models.n; m++)
			if (strlen(models.v[m]) == l &&
			    strncmp(models.v[m], b, l) == 0)
				break;
		if (m == models.n)
			strv_addf(&models, "%.*s", (int)l, b);
	}
	if (n == 0)
		return;
	xasprintf(&ch->gpu_count, "%zu", n);
	/* A host of mixed GPUs: every model, in nvidia-smi's order. */
	ch->gpu_model = xstrdup("");
	for (m = 0; m < models.n; m++) {
		v = ch->gpu_model;
		xasprintf(&ch->gpu_model, "%s%s%s", v, m ? " + " : "",
		    models.v[m]);
		free((char *)v);
	}
	strv_free(&models);
}

/* Host ch's value of a drift key: an answer, or one of ours. */
static const char *
check_value(const struct chost *ch, const char *key)
{
	if (strcmp(key, "gpu_count") == 0)
		return ch->gpu_count;
	if (strcmp(key, "gpu_model") == 0)
		return ch->gpu_model;
	return ch_get(ch, key);
}

/* qsort_r: by value, then by host (so a value's first host comes first). */
static int
check_majority_cmp(const void *a, const void *b, void *arg)
{
	const char *const	*v = arg;
	size_t			 i = *(const size_t *)a, j = *(const size_t *)b;
	int			 r = strcmp(v[i], v[j]);

	return r != 0 ? r : i < j ? -1 : i > j;
}

ssize_t
check_majority(const char *const *v, size_t n, size_t *count,
    size_t *answered)
{
	size_t	*idx = xcalloc(n + 1, sizeof(*idx));
	size_t	 i, k, run, best = 0, bestn = 0, m = 0;

	for (i = 0; i < n; i++)
		if (v[i] != NULL)
			idx[m++] = i;
	/* Sorted, equal values are neighbours: O(n log n) at any scale. */
	qsort_r(idx, m, sizeof(*idx), check_majority_cmp, (void *)v);
	for (i = 0; i < m; i = k) {
		for (k = i + 1; k < m && strcmp(v[idx[k]], v[idx[i]]) == 0; k++)
			;
		run = k - i;
		if (run > bestn || (run == bestn && idx[i] < best)) {
			bestn = run;
			best = idx[i];
		}
	}
	free(idx);
	*count = bestn;
	*answered = m;
	return m > 0 ? (ssize_t)best : -1;
}

/*
 * Appends to buf, at *off, the hosts whose value in v is val ("a, b and
 * 3 more"), marking each with a problem; returns how many there are.
 */
static size_t
check_drift_hosts(struct check *c, const char *const *v, const char *val,
    char *buf, size_t size, size_t *off)
{
	size_t	i, n = 0, k;

	for (i = 0; i < c->p->nhosts; i++)
		n += v[i] != NULL && strcmp(v[i], val) == 0;
	for (i = 0, k = 0; i < c->p->nhosts && *off < size; i++) {
		if (v[i] == NULL || strcmp(v[i], val) != 0)
			continue;
		if (k < CHECK_DRIFT_NAMES)
			*off += snprintf(buf + *off, size - *off, "%s%s",
			    k == 0 ? "" : k + 1 == n ? " and " : ", ",
			    c->p->hosts[i].name);
		k++;
	}
	if (n > CHECK_DRIFT_NAMES && *off < size)
		*off += snprintf(buf + *off, size - *off, " and %zu more",
		    n - CHECK_DRIFT_NAMES);
	return n;
}

/*
 * A key whose value is not the same on every host that answered it: the
 * hosts that differ from the majority, by value; with no majority (2 and
 * 2), every value with its hosts. Either way one problem, and a mark on
 * each host that does not have the most common value.
 */
static void
check_drift(struct check *c, const struct check_drift *d)
{
	const char	**v = xcalloc(c->p->nhosts + 1, sizeof(*v));
	const char	*maj;
	char		 buf[2048];
	size_t		 i, off = 0, nmaj, nans, cnt, left, nval = 0, rest = 0;
	ssize_t		 m;

	for (i = 0; i < c->p->nhosts; i++)
		v[i] = check_value(&c->hs[i], d->key);
	if ((m = check_majority(v, c->p->nhosts, &nmaj, &nans)) < 0 ||
	    nmaj == nans) {
		free(v);
		return;
	}
	maj = v[m];
	for (i = 0; i < c->p->nhosts; i++)
		if (v[i] != NULL && strcmp(v[i], maj) != 0)
			c->hs[i].nproblems++;
	buf[0] = '\0';
	if (2 * nmaj <= nans)
		off = snprintf(buf, sizeof(buf), "%s differs, with no "
		    "majority: ", d->key);
	/* Each value in turn, the most common first; the majority's aside. */
	while ((m = check_majority(v, c->p->nhosts, &cnt, &left)) >= 0 &&
	    off < sizeof(buf)) {
		const char *val = v[m];

		if (2 * nmaj > nans && strcmp(val, maj) == 0) {
			for (i = 0; i < c->p->nhosts; i++)
				if (v[i] != NULL && strcmp(v[i], val) == 0)
					v[i] = NULL;
			continue;
		}
		if (nval++ == CHECK_DRIFT_VALUES) {
			rest = left;	/* every host still in v */
			break;
		}
		if (2 * nmaj > nans) {
			off += snprintf(buf + off, sizeof(buf) - off, "%s%s on ",
			    nval > 1 ? ", " : "", d->key);
			check_drift_hosts(c, v, val, buf, sizeof(buf), &off);
			if (off < sizeof(buf))
				off += snprintf(buf + off, sizeof(buf) - off,
				    " is %s", val);
		} else {
			off += snprintf(buf + off, sizeof(buf) - off, "%s%s on ",
			    nval > 1 ? "; " : "", val);
			check_drift_hosts(c, v, val, buf, sizeof(buf), &off);
		}
		for (i = 0; i < c->p->nhosts; i++)
			if (v[i] != NULL && strcmp(v[i], val) == 0)
				v[i] = NULL;
	}
	if (rest > 0 && off < sizeof(buf))
		off += snprintf(buf + off, sizeof(buf) - off, "%s%zu more "
		    "host%s with other values", 2 * nmaj > nans ? ", " : "; ",
		    rest, rest == 1 ? "" : "s");
	if (2 * nmaj > nans)
		check_problem(c, "%s, %zu of %zu hosts have %s: %s", buf, nmaj,
		    nans, maj, d->fix);
	else
		check_problem(c, "%s: %s", buf, d->fix);
	free(v);
}

/* Every host's problems, and what differs between them. */
void
check_judge(struct check *c)
{
	size_t	i, k, n;

	for (i = 0; i < c->p->nhosts; i++) {
		n = c->problems.n;
		check_host_problems(c, i);
		c->hs[i].nproblems += c->problems.n - n;
		check_gpus(&c->hs[i]);
	}
	/* A version that differs seldom fails a job at once: not a preflight's. */
	for (k = 0; !c->fast && k < sizeof(check_drifts) /
	    sizeof(check_drifts[0]); k++)
		check_drift(c, &check_drifts[k]);
	check_nofile_dtrun(c);
}
