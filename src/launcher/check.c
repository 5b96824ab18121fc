/*
 * check.c -- dtrun --check and --preflight, the launcher's side. The job
 * connects every host and starts every agent as a run does; then, instead
 * of the job, each agent gets a CHECK(GATHER): it chooses its interface as
 * a run's agent would, finds the command, tests the socket interface
 * variables and (not --preflight) probes the interpreter, torch, GPUs and
 * libnccl; rank 0's agent also listens on its chosen address. Once every
 * host answered, each gets a CHECK(PROBE) with that address and really
 * connects to it. The answers make one table and a list of problems, each
 * with its fix. Clock skew is the agent's clock against ours at the
 * moment the CHECK reached it, allowing half the round trip.
 */
#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "launcher/check.h"
#include "launcher/cli.h"
#include "launcher/deepcheck.h"
#include "launcher/pyscript.h"
#include "common/dtlimits.h"
#include "common/environ.h"
#include "common/err.h"
#include "common/iface.h"
#include "common/mac.h"
#include "proto/agentproto.h"
#include "launcher/agents.h"
#include "common/log.h"
#include "launcher/plan.h"
#include "util/strv.h"
#include "launcher/sync.h"
#include "common/sys.h"
#include "common/wire.h"
#include "util/xmalloc.h"

/* One host's answers. */
struct chost {
	struct job_host	*h;
	uint64_t	 sent_real;	/* GATHER sent: our wall clock */
	uint64_t	 sent_mono;
	int		 gathered;
	int		 probed;
	char		**kv;		/* GATHER's answers */
	size_t		 nkv;
	char		**pkv;		/* PROBE's */
	size_t		 npkv;
	size_t		 paired;	/* --deep: rounds answered */
	int64_t		 skew_ms;	/* its clock minus ours */
	uint64_t	 rtt_ms;	/* the round trip, less its work */
	char		*gpu_count;	/* from its gpu= answers, or NULL */
	char		*gpu_model;
	size_t		 nproblems;	/* the problems that name it */
};

struct check {
	struct check_cbs	 cb;
	const struct opts	*o;
	const struct plan	*p;
	int			 fast;
	int			 torch;		/* the command's script imports torch */
	const char		*rank0;		/* the run's, or NULL */
	struct chost		*hs;
	size_t			 ngathered, nprobed;
	int			 probing;
	int			 over;
	struct dt_wbuf		 wb;
	struct strv		 problems;
	struct deepcheck	*deep;		/* --deep, once every host probed */
	size_t			*deep_to;	/* the round's: whom each measures */
	size_t			 deep_round;	/* rounds begun */
	size_t			 deep_wait;	/* the round's answers still out */
	uint64_t		 deep_t0;	/* the first round began */
	/* --deep: the key the pair connections prove they hold (hex) */
	char			 deep_key[AP_CHK_KEY_HEX + 1];
};

/* The first answer named key, or NULL. */
static const char *
kv_get(char *const *kv, size_t n, const char *key)
{
	size_t	i, l = strlen(key);

	for (i = 0; i < n; i++)
		if (strncmp(kv[i], key, l) == 0 && kv[i][l] == '=')
			return kv[i] + l + 1;
	return NULL;
}

/* How many answers are named key. */
static size_t
kv_count(char *const *kv, size_t n, const char *key)
{
	size_t	i, l = strlen(key), k = 0;

	for (i = 0; i < n; i++)
		k += strncmp(kv[i], key, l) == 0 && kv[i][l] == '=';
	return k;
}

/* h's GATHER answer named key. */
static const char *
ch_get(const struct chost *c, const char *key)
{
	return kv_get(c->kv, c->nkv, key);
}

/*
 * --deep: a fresh key for this check's pair connections, so that no one
 * but its agents is counted in a pair (a stranger's connections to the
 * listeners are shed).
 */
static void
check_deep_key(struct check *c)
{
	uint8_t	key[AP_CHK_KEY_HEX / 2];

	if (dt_random(key, sizeof(key)) != 0 || dt_hex_encode(key,
	    sizeof(key), c->deep_key, sizeof(c->deep_key)) != 0) {
		log_error("--deep: no random bytes for the pair test's key "
		    "(getrandom: %s): the agents will refuse its pairs",
		    strerror(errno));
		c->deep_key[0] = '\0';
	}
	explicit_bzero(key, sizeof(key));
}

struct check *
check_new(const struct check_cbs *cb, const struct opts *o,
    const struct plan *p, int fast, const char *rank0)
{
	struct check	*c = xcalloc(1, sizeof(*c));

	c->cb = *cb;
	c->o = o;
	c->p = p;
	c->fast = fast;
	c->torch = pyscript_imports_torch(o->cmd, o->ncmd);
	c->rank0 = rank0;
	c->hs = xcalloc(p->nhosts, sizeof(*c->hs));
	dt_wbuf_init(&c->wb);
	if (o->deep)
		check_deep_key(c);
	return c;
}

void
check_free(struct check *c)
{
	size_t	i;

	if (c == NULL)
		return;
	for (i = 0; i < c->p->nhosts; i++) {
		dt_strv_free(c->hs[i].kv);
		dt_strv_free(c->hs[i].pkv);
		free(c->hs[i].gpu_count);
		free(c->hs[i].gpu_model);
	}
	free(c->hs);
	deepcheck_free(c->deep);
	free(c->deep_to);
	dt_wbuf_free(&c->wb);
	strv_free(&c->problems);
	free(c);
}

/*
 * What a rank would get from dtrun that matters here: the -x variables,
 * and NCCL_SOCKET_IFNAME/GLOO_SOCKET_IFNAME from our environment (a run
 * passes the user's own, not dtrun's choice, only when they are set).
 */
static void
check_env(const struct check *c, struct strv *sv)
{
	static const char *const vars[] = { "NCCL_SOCKET_IFNAME",
	    "GLOO_SOCKET_IFNAME" };
	const char	*v;
	size_t		 k;

	strv_addv(sv, c->o->exports, c->o->nexports);
	for (k = 0; k < 2; k++)
		if (dt_env_find(c->o->exports, c->o->nexports,
		    vars[k]) == NULL && (v = getenv(vars[k])) != NULL)
			strv_setf(sv, vars[k], "%s", v);
}

/*
 * Where every host routes to for rank 0's host: the run's own rank0_addr
 * when each host chooses (so the table shows the choice a run makes).
 */
static const char *
check_rank0(const struct check *c)
{
	if (c->rank0 != NULL)
		return c->rank0;
	return c->p->local ? "127.0.0.1" : c->p->hosts[0].name;
}

/* Sends one CHECK to host i; 0, or an error code for the job. */
static int
check_send(struct check *c, size_t i, uint32_t step, const char *target)
{
	struct chost	*ch = &c->hs[i];
	struct ap_check	 ak;
	struct strv	 env = { 0 };
	struct dt_err	 e;
	char		 cands[1024], msg[512], dir[4096];
	int		 rc;

	memset(&ak, 0, sizeof(ak));
	ak.step = step;
	ak.flags = (c->fast ? AP_CHK_FAST : 0) |
	    (i == 0 && step == AP_CHK_GATHER ? AP_CHK_LISTEN : 0) |
	    (c->o->deep && step == AP_CHK_GATHER ? AP_CHK_DEEP : 0);
	dt_err_clear(&e);
	if (iface_spec_host(c->o->iface, c->p->hosts[i].name, cands,
	    sizeof(cands), &e) != 0) {
		log_error("%s", dt_err_str(&e, msg, sizeof(msg)));
		return 2;
	}
	ak.iface = cands;
	ak.target = (char *)target;
	ak.key = ak.flags & AP_CHK_DEEP ? c->deep_key : "";
	ak.cmd = c->o->ncmd > 0 ? c->o->cmd[0] : "";
	/* --check sees what the ranks would: after --setup (not a preflight's). */
	ak.setup = (char *)(step == AP_CHK_GATHER && !c->fast &&
	    c->o->setup != NULL ? c->o->setup : "");
	/* As JOB's: locally the agent is here; --preflight after a sync, there. */
	ak.cwd = c->p->local || c->p->hosts[i].here ||
	    getcwd(dir, sizeof(dir)) == NULL ? "" : dir;
	if (c->o->sync_dst != NULL && !c->o->check)
		ak.cwd = (char *)sync_dir(c->o, &c->p->hosts[i], c->p->local ||
		    c->p->hosts[i].here, dir, sizeof(dir));
	check_env(c, &env);
	ak.env = env.v;
	ak.nenv = env.n;
	ch->sent_real = dt_clock_ms(CLOCK_REALTIME);
	ch->sent_mono = dt_clock_ms(CLOCK_MONOTONIC);
	ak.now_ms = ch->sent_real;
	rc = ap_put_check(&c->wb, &ak);
	strv_free(&env);
	if (rc != 0) {
		log_error("the variables for %s are too big to carry in one "
		    "check (at most %d KiB)", c->p->hosts[i].name,
		    AP_FRAME_MAX >> 10);
		return 2;
	}
	agents_send(ch->h, &c->wb);
	return 0;
}

void
check_begin(struct check *c, struct job_host **hosts)
{
	size_t	i;
	int	rc;

	log_info("%s: asking %zu agent%s", c->fast ? "--preflight" :
	    "--check", c->p->nhosts, c->p->nhosts == 1 ? "" : "s");
	for (i = 0; i < c->p->nhosts; i++)
		c->hs[i].h = hosts[i];
	for (i = 0; i < c->p->nhosts; i++) {
		if ((rc = check_send(c, i, AP_CHK_GATHER, check_rank0(c))) != 0) {
			c->over = 1;
			c->cb.done(c->cb.arg, rc);
			return;
		}
	}
}

/* Adds a problem line. */
static void
check_problem(struct check *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void
check_problem(struct check *c, const char *fmt, ...)
{
	char	buf[2048];
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	strv_addf(&c->problems, "%s", buf);
}

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

	need = (unsigned long long)c->p->nranks + c->p->nhosts *
	    DT_NOFILE_PER_HOST + DT_NOFILE_SPARE;
	if (lim < need)
		check_problem(c, "dtrun (this machine): its open-files limit "
		    "is %llu, below the %llu it needs for %zu ranks on %zu "
		    "host%s: raise it (ulimit -n), or run fewer ranks", lim,
		    need, c->p->nranks, c->p->nhosts, c->p->nhosts == 1 ? "" : "s");
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

/* The RANK0 cell of host i. */
static const char *
check_reach_cell(const struct chost *ch)
{
	if (kv_get(ch->pkv, ch->npkv, "reach") != NULL)
		return "ok";
	if (kv_get(ch->pkv, ch->npkv, "reach_err") != NULL)
		return "FAILED";
	return NULL;
}

#define NCOL	12
#define COL_ADDR	3
#define COL_SKEW	5

/* Host i's row of the table: NCOL cells, cells 5 and 9 malloc'd. */
static void
check_row(struct check *c, size_t i, char **row)
{
	const struct chost	*ch = &c->hs[i];
	char			 buf[32];
	size_t			 ngpu = kv_count(ch->kv, ch->nkv, "gpu");

	row[0] = c->p->hosts[i].name;
	row[1] = (char *)ch_get(ch, "version");
	row[2] = (char *)ch_get(ch, "iface");
	row[3] = (char *)ch_get(ch, "addr");
	row[4] = (char *)check_reach_cell(ch);
	snprintf(buf, sizeof(buf), "%+.3fs", ch->skew_ms / 1000.0);
	row[5] = ch->gathered ? xstrdup(buf) : NULL;
	row[6] = (char *)(ch_get(ch, "cmd_err") != NULL ? "MISSING" :
	    ch_get(ch, "cmd"));
	row[7] = (char *)ch_get(ch, "python");
	row[8] = (char *)(ch_get(ch, "torch") != NULL ? ch_get(ch, "torch") :
	    ch_get(ch, "torch_err") != NULL ? "none" : NULL);
	snprintf(buf, sizeof(buf), "%zu", ngpu);
	row[9] = ngpu > 0 ? xstrdup(buf) : ch_get(ch, "gpu_err") != NULL ?
	    xstrdup("FAILED") : NULL;
	row[10] = (char *)(ch_get(ch, "nccl") != NULL ? "yes" : NULL);
	row[11] = (char *)(ch_get(ch, "nccl_ifname_err") != NULL ||
	    ch_get(ch, "gloo_ifname_err") != NULL ? "NONE" :
	    ch_get(ch, "nccl_ifname") != NULL ||
	    ch_get(ch, "gloo_ifname") != NULL ? "ok" : NULL);
}

/*
 * The summary row's ADDRESS and SKEW cells, over the hosts marked in
 * sum: one value when they share it, else the lowest and highest
 * ("10.0.0.1..10.0.0.240", "-0.004s..+0.012s"); ADDRESS "*" when an
 * address is not IPv4. Both malloc'd.
 */
static void
check_summary_ranges(struct check *c, char **rows, const char *sum,
    char **addr, char **skew)
{
	struct in_addr	 a;
	uint32_t	 lo = UINT32_MAX, hi = 0, x;
	int64_t		 slo = INT64_MAX, shi = INT64_MIN;
	const char	*alo = NULL, *ahi = NULL, *s;
	size_t		 i;
	int		 ipv4 = 1;

	for (i = 0; i < c->p->nhosts; i++) {
		if (!sum[i])
			continue;
		if (c->hs[i].gathered) {
			slo = c->hs[i].skew_ms < slo ? c->hs[i].skew_ms : slo;
			shi = c->hs[i].skew_ms > shi ? c->hs[i].skew_ms : shi;
		}
		s = rows[i * NCOL + COL_ADDR] != NULL ? rows[i * NCOL +
		    COL_ADDR] : "-";
		if (inet_pton(AF_INET, s, &a) != 1) {
			ipv4 = 0;
			continue;
		}
		x = ntohl(a.s_addr);
		if (x <= lo)
			alo = s, lo = x;
		if (x >= hi)
			ahi = s, hi = x;
	}
	if (!ipv4 || alo == NULL)
		*addr = xstrdup("*");
	else if (lo == hi)
		*addr = xstrdup(alo);
	else
		xasprintf(addr, "%s..%s", alo, ahi);
	if (slo == INT64_MAX)
		*skew = NULL;
	else if (slo == shi)
		xasprintf(skew, "%+.3fs", slo / 1000.0);
	else
		xasprintf(skew, "%+.3fs..%+.3fs", slo / 1000.0, shi / 1000.0);
}

/*
 * Many hosts (over CHECK_TABLE_FULL): the rows worth reading. First each
 * host a problem names, then each whose cells (but ADDRESS and SKEW,
 * which are every host's own) differ from the most common in their
 * column, then one row for the rest: "N hosts" (or "N more hosts"),
 * their shared cells, and ADDRESS and SKEW as ranges. rows: a row per
 * host; the table (header first) goes to out, *nout rows; its summary
 * row's cells, malloc'd, in sumrow.
 */
static void
check_summarise(struct check *c, char **rows, char **out, size_t *nout,
    char **sumrow)
{
	const char	**col = xcalloc(c->p->nhosts + 1, sizeof(*col));
	const char	*maj[NCOL];
	char		*sum = xcalloc(c->p->nhosts + 1, 1);
	size_t		 i, k, pass, cnt, ans, n = 0, nsum = 0;
	ssize_t		 m;

	for (k = 0; k < NCOL; k++) {
		for (i = 0; i < c->p->nhosts; i++)
			col[i] = rows[i * NCOL + k] != NULL ? rows[i * NCOL + k] :
			    "-";
		m = check_majority(col, c->p->nhosts, &cnt, &ans);
		maj[k] = m >= 0 ? col[m] : "-";
	}
	for (i = 0; i < c->p->nhosts; i++) {
		sum[i] = c->hs[i].nproblems == 0;
		for (k = 1; k < NCOL && sum[i]; k++)
			if (k != COL_ADDR && k != COL_SKEW &&
			    strcmp(rows[i * NCOL + k] != NULL ?
			    rows[i * NCOL + k] : "-", maj[k]) != 0)
				sum[i] = 0;
		nsum += sum[i];
	}
	/* A summary of one host says less than its row. */
	if (nsum == 1)
		memset(sum, 0, c->p->nhosts);
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < c->p->nhosts; i++)
			if (!sum[i] && (c->hs[i].nproblems > 0) == (pass == 0))
				memcpy(out + NCOL * n++, rows + i * NCOL,
				    NCOL * sizeof(*out));
	if (nsum > 1) {
		xasprintf(&sumrow[0], "%zu %shosts", nsum, n > 0 ? "more " : "");
		for (k = 1; k < NCOL; k++)
			sumrow[k] = maj[k][0] == '-' && maj[k][1] == '\0' ? NULL :
			    xstrdup(maj[k]);
		free(sumrow[COL_ADDR]);
		free(sumrow[COL_SKEW]);
		check_summary_ranges(c, rows, sum, &sumrow[COL_ADDR],
		    &sumrow[COL_SKEW]);
		memcpy(out + NCOL * n++, sumrow, NCOL * sizeof(*out));
	}
	*nout = n;
	free(col);
	free(sum);
}

/* -v: every answer of every host, and how the skew was measured. */
static void
check_print_details(struct check *c)
{
	struct chost	*ch;
	char		 esc[512], esc2[512];
	size_t		 i, k;

	for (i = 0; i < c->p->nhosts; i++) {
		ch = &c->hs[i];
		log_escape(esc, sizeof(esc), c->p->hosts[i].name);
		printf("%s: agent pid %d on %s; round trip %llu ms, clock %+lld "
		    "ms (+/- %llu)\n", esc, (int)ch->h->agent_pid,
		    log_escape(esc2, sizeof(esc2), ch->h->agent_host != NULL ?
		    ch->h->agent_host : "?"), (unsigned long long)ch->rtt_ms,
		    (long long)ch->skew_ms, (unsigned long long)ch->rtt_ms / 2);
		for (k = 0; k < ch->nkv + ch->npkv; k++)
			printf("%s:   %s\n", esc, log_escape(esc2, sizeof(esc2),
			    k < ch->nkv ? ch->kv[k] : ch->pkv[k - ch->nkv]));
	}
}

/*
 * Prints the table (stdout): a row per host, or past CHECK_TABLE_FULL
 * hosts (and without -v) the rows check_summarise keeps; with -v every
 * host's details.
 */
static void
check_print(struct check *c)
{
	static const char *const head[NCOL] = { "HOST", "AGENT", "IFACE",
	    "ADDRESS", "RANK0", "SKEW", "COMMAND", "PYTHON", "TORCH", "GPUS",
	    "NCCL", "IFNAME" };
	size_t		 i, k, n = c->p->nhosts;
	char		**rows = xcalloc((n + 1) * NCOL, sizeof(char *));
	char		**out = xcalloc((n + 2) * NCOL, sizeof(char *));
	char		*sumrow[NCOL] = { 0 }, *t;

	for (i = 0; i < n; i++)
		check_row(c, i, rows + i * NCOL);
	memcpy(out, head, sizeof(head));
	if (n > CHECK_TABLE_FULL && c->o->verbose == 0)
		check_summarise(c, rows, out + NCOL, &n, sumrow);
	else
		memcpy(out + NCOL, rows, n * NCOL * sizeof(*out));
	if ((t = check_table(out, n + 1, NCOL)) != NULL)
		fputs(t, stdout);
	free(t);
	for (i = 0; i < c->p->nhosts; i++) {
		free(rows[i * NCOL + COL_SKEW]);
		free(rows[i * NCOL + 9]);
	}
	for (k = 0; k < NCOL; k++)
		free(sumrow[k]);
	free(rows);
	free(out);
	if (c->o->verbose > 0)
		check_print_details(c);
}

/* The hosts' names, for deepcheck (freed by the caller, not the names). */
static const char **
check_names(const struct check *c)
{
	const char	**names = xcalloc(c->p->nhosts + 1, sizeof(*names));
	size_t		  i;

	for (i = 0; i < c->p->nhosts; i++)
		names[i] = c->p->hosts[i].name;
	return names;
}

/*
 * --deep's GPU part, in a line: DCGM's quick diagnostic where dcgmi is;
 * an NCCL all-reduce across the hosts is not measured by this dtrun.
 */
static const char *
check_deep_gpus(const struct check *c)
{
	size_t	i, gpus = 0, dcgm = 0;

	for (i = 0; i < c->p->nhosts; i++) {
		gpus += kv_count(c->hs[i].kv, c->hs[i].nkv, "gpu") > 0;
		dcgm += ch_get(&c->hs[i], "dcgm") != NULL ||
		    ch_get(&c->hs[i], "dcgm_err") != NULL;
	}
	if (gpus == 0)
		return "skipped: no GPU";
	if (dcgm == 0)
		return "nvidia-smi's health only (no dcgmi for a diagnostic); "
		    "the NCCL all-reduce is not measured: TCP figures only";
	return "nvidia-smi's health and DCGM's quick diagnostic; the NCCL "
	    "all-reduce is not measured: TCP figures only";
}

#define NDEEPCOL	6

/* --deep's pairs as a table (a few hosts, or -v), then its summary line. */
static void
check_deep_print(struct check *c)
{
	const char	**names = check_names(c);
	static const char *const head[NDEEPCOL] = { "FROM", "TO", "PAIRS",
	    "RTT", "THROUGHPUT", "NOTE" };
	struct strv	 out = { 0 };
	char		**cells, *t, *p, *tab;
	size_t		 i, k, nrows = 0;

	deepcheck_report(c->deep, names, c->p->nhosts <= CHECK_TABLE_FULL ||
	    c->o->verbose > 0, &out);
	cells = xcalloc((out.n + 1) * NDEEPCOL, sizeof(*cells));
	for (k = 0; k < NDEEPCOL; k++)
		cells[k] = (char *)head[k];
	for (i = 0; i < out.n && strchr(out.v[i], '\t') != NULL; i++) {
		nrows++;
		for (p = out.v[i], k = 0; k < NDEEPCOL && p != NULL; k++) {
			if ((tab = strchr(p, '\t')) != NULL)
				*tab = '\0';
			cells[nrows * NDEEPCOL + k] = p;
			p = tab != NULL ? tab + 1 : NULL;
		}
	}
	if (nrows > 0 && (t = check_table(cells, nrows + 1, NDEEPCOL)) != NULL) {
		fputs("\n", stdout);
		fputs(t, stdout);
		free(t);
	}
	for (; i < out.n; i++)
		printf("%s\n", out.v[i]);
	if (c->p->local)
		printf("deep: every host is this machine (the local launcher): "
		    "the figures are its own, no pair is judged\n");
	printf("deep: GPUs: %s\n", check_deep_gpus(c));
	free(cells);
	free(names);
	strv_free(&out);
}

/* --deep's problems, each counted for the hosts it names. */
static void
check_deep_verdict(struct check *c)
{
	const char	**names = check_names(c);
	const char	**ifaces = xcalloc(c->p->nhosts + 1, sizeof(*ifaces));
	size_t		 *named = xcalloc(c->p->nhosts + 1, sizeof(*named));
	size_t		  i;

	for (i = 0; i < c->p->nhosts; i++) {
		ifaces[i] = ch_get(&c->hs[i], "iface");
		if (ch_get(&c->hs[i], "deep_err") != NULL) {
			check_problem(c, "%s: --deep cannot measure it: %s",
			    names[i], ch_get(&c->hs[i], "deep_err"));
			c->hs[i].nproblems++;
		}
	}
	deepcheck_verdict(c->deep, names, ifaces, &c->problems, named);
	for (i = 0; i < c->p->nhosts; i++)
		c->hs[i].nproblems += named[i];
	log_debug("--deep: %zu rounds in %llu ms", c->deep_round,
	    (unsigned long long)(dt_clock_ms(CLOCK_MONOTONIC) - c->deep_t0));
	free(names);
	free(ifaces);
	free(named);
}

/* Every answer is in: the table, the problems, and the job's next step. */
static void
check_done(struct check *c)
{
	size_t	i, k, n;
	int	code;

	c->over = 1;
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
	if (c->deep != NULL)
		check_deep_verdict(c);
	c->cb.quiet(c->cb.arg);
	if (!c->fast || c->o->verbose > 0) {
		check_print(c);
		if (c->deep != NULL)
			check_deep_print(c);
	}
	fflush(stdout);
	for (i = 0; i < c->problems.n; i++)
		log_error("%s: %s", c->fast ? "preflight" : "check",
		    c->problems.v[i]);
	code = c->problems.n > 0 ? CHECK_EXIT : 0;
	if (code != 0)
		log_error("%s found %zu problem%s: %s", c->fast ? "--preflight" :
		    "--check", c->problems.n, c->problems.n == 1 ? "" : "s",
		    c->fast ? "no rank was started" : "see above");
	else if (!c->fast)
		printf("no problems on %zu host%s\n", c->p->nhosts,
		    c->p->nhosts == 1 ? "" : "s");
	else
		log_info("--preflight: no problems on %zu hosts", c->p->nhosts);
	c->cb.done(c->cb.arg, code);
}

/*
 * --deep's connections per pair: NCCL's socket transport opens
 * NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD per peer when the job sets
 * them (-x, or our environment as a run passes it), else a few.
 */
static uint32_t
check_deep_streams(const struct check *c)
{
	static const char *const vars[] = { "NCCL_SOCKET_NTHREADS",
	    "NCCL_NSOCKS_PERTHREAD" };
	unsigned long	 v[2];
	const char	*s;
	size_t		 k;

	for (k = 0; k < 2; k++) {
		if ((s = dt_env_find(c->o->exports, c->o->nexports, vars[k])) ==
		    NULL && (s = getenv(vars[k])) == NULL)
			return DEEP_STREAMS_DEFAULT;
		if ((v[k] = strtoul(s, NULL, 10)) == 0)
			return DEEP_STREAMS_DEFAULT;
	}
	return v[0] * v[1] > AP_CHK_STREAMS_MAX ? AP_CHK_STREAMS_MAX :
	    (uint32_t)(v[0] * v[1]);
}

/* Sends host i its PAIR of the round r: 0, or an error code for the job. */
static int
check_send_pair(struct check *c, size_t i, const struct deep_round *r,
    const char *target)
{
	struct ap_check	ak;

	memset(&ak, 0, sizeof(ak));
	ak.step = AP_CHK_PAIR;
	ak.now_ms = dt_clock_ms(CLOCK_REALTIME);
	ak.iface = ak.cmd = ak.cwd = ak.setup = "";
	ak.target = (char *)target;
	ak.bytes = r->bytes;
	ak.streams = r->streams;
	ak.key = c->deep_key;
	if (ap_put_check(&c->wb, &ak) != 0) {
		log_error("%s: cannot send its pair test", c->p->hosts[i].name);
		return 2;
	}
	agents_send(c->hs[i].h, &c->wb);
	return 0;
}

static void	check_done(struct check *);

/* The next round of --deep, or the end of the check. */
static void
check_deep_round(struct check *c)
{
	const struct deep_round	*r;
	const char		*to;
	size_t			 i;
	int			 rc;

	while ((r = deepcheck_next(c->deep, c->deep_to)) != NULL) {
		c->deep_round++;
		log_debug("--deep: the %s%s, %s", r->name, r->again ?
		    " again" : "", r->bytes == 0 ? "round trips" : "throughput");
		for (i = 0; i < c->p->nhosts; i++) {
			if (c->deep_to[i] == SIZE_MAX)
				continue;
			to = ch_get(&c->hs[c->deep_to[i]], "deep_listen");
			if ((rc = check_send_pair(c, i, r, to)) != 0) {
				c->over = 1;
				c->cb.done(c->cb.arg, rc);
				return;
			}
			c->deep_wait++;
		}
		if (c->deep_wait > 0)
			return;
	}
	check_done(c);
}

/* Every host probed: --deep's rounds between the hosts that listen. */
static void
check_deep_start(struct check *c)
{
	int	*ok = xcalloc(c->p->nhosts + 1, sizeof(*ok));
	size_t	 i;

	for (i = 0; i < c->p->nhosts; i++)
		ok[i] = ch_get(&c->hs[i], "deep_listen") != NULL;
	/*
	 * Locally every "host" is this machine: the pairs share its CPUs and
	 * loopback, and their figures say nothing of a network.
	 */
	c->deep = deepcheck_new(c->p->nhosts, ok, c->o->deep_bytes,
	    check_deep_streams(c), !c->p->local);
	c->deep_to = xcalloc(c->p->nhosts + 1, sizeof(*c->deep_to));
	c->deep_t0 = dt_clock_ms(CLOCK_MONOTONIC);
	free(ok);
	check_deep_round(c);
}

/* The probes are in: --deep's rounds, or the end. */
static void
check_probed(struct check *c)
{
	if (c->o->deep)
		check_deep_start(c);
	else
		check_done(c);
}

/* Every host gathered: each probes rank 0's listener, if there is one. */
static void
check_probe_all(struct check *c)
{
	const char	*to = ch_get(&c->hs[0], "listen");
	size_t		 i;
	int		 rc;

	if (to == NULL) {
		check_probed(c);
		return;
	}
	c->probing = 1;
	for (i = 0; i < c->p->nhosts && !c->over; i++) {
		if ((rc = check_send(c, i, AP_CHK_PROBE, to)) != 0) {
			c->over = 1;
			c->cb.done(c->cb.arg, rc);
			return;
		}
	}
}

int
check_frame(struct check *c, struct job_host *h, const uint8_t *p, size_t n)
{
	struct ap_checked	 ak;
	struct chost		*ch = &c->hs[h->index];
	uint64_t		 now = dt_clock_ms(CLOCK_MONOTONIC);

	if (ap_get_checked(p, n, &ak) != 0)
		return -1;
	if (c->over) {
		ap_checked_free(&ak);
		return 0;	/* late: the check is over */
	}
	if (ak.step == AP_CHK_GATHER && !ch->gathered && !c->probing) {
		ch->gathered = 1;
		ch->kv = ak.kv;
		ch->nkv = ak.nkv;
		check_skew(ch->sent_real, now - ch->sent_mono, ak.took_ms,
		    ak.now_ms, &ch->rtt_ms, &ch->skew_ms);
		if (++c->ngathered == c->p->nhosts)
			check_probe_all(c);
		return 0;
	}
	if (ak.step == AP_CHK_PROBE && c->probing && !ch->probed) {
		ch->probed = 1;
		ch->pkv = ak.kv;
		ch->npkv = ak.nkv;
		if (++c->nprobed == c->p->nhosts)
			check_probed(c);
		return 0;
	}
	if (ak.step == AP_CHK_PAIR && c->deep != NULL &&
	    ch->paired < c->deep_round && c->deep_to[h->index] != SIZE_MAX) {
		ch->paired = c->deep_round;
		deepcheck_answer(c->deep, h->index, ak.kv, ak.nkv);
		ap_checked_free(&ak);
		if (--c->deep_wait == 0)
			check_deep_round(c);
		return 0;
	}
	ap_checked_free(&ak);
	return -1;
}

void
check_skew(uint64_t sent, uint64_t elapsed, uint64_t took, uint64_t at,
    uint64_t *rtt, int64_t *skew)
{
	/* The network's share of the wait; the agent's work is not. */
	*rtt = elapsed > took ? elapsed - took : 0;
	/* It read our CHECK half a round trip after we sent it. */
	*skew = (int64_t)at - (int64_t)(sent + *rtt / 2);
}

char *
check_table(char *const *cells, size_t nrows, size_t ncol)
{
	size_t	*w, r, k, len, off = 0, cap = 0;
	char	 esc[512], *buf = NULL, *nb;
	const char *s;

	if ((w = calloc(ncol, sizeof(*w))) == NULL)
		return NULL;
	for (r = 0; r < nrows; r++)
		for (k = 0; k < ncol; k++) {
			s = cells[r * ncol + k] != NULL ? cells[r * ncol + k] :
			    "-";
			len = strlen(log_escape(esc, sizeof(esc), s));
			if (len > w[k])
				w[k] = len;
		}
	for (r = 0; r < nrows; r++) {
		for (k = 0; k < ncol; k++) {
			s = cells[r * ncol + k] != NULL ? cells[r * ncol + k] :
			    "-";
			log_escape(esc, sizeof(esc), s);
			len = w[k] + 3;
			if (off + len + 2 > cap) {
				cap = (off + len + 2) * 2;
				if ((nb = realloc(buf, cap)) == NULL) {
					free(buf);
					free(w);
					return NULL;
				}
				buf = nb;
			}
			/* The last column is not padded: no trailing blanks. */
			off += snprintf(buf + off, cap - off, k + 1 < ncol ?
			    "%-*s  " : "%-*s", k + 1 < ncol ? (int)w[k] : 0, esc);
		}
		buf[off++] = '\n';
		buf[off] = '\0';
	}
	free(w);
	return buf;
}
