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
 *
 * Room launcher/check/: --check, --preflight and --deep. It includes only
 * cli/, plan/, job/, backend/ and sync/ (t0041's rooms).
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/check/check.h"
#include "launcher/check/checkint.h"
#include "launcher/cli/cli.h"
#include "launcher/check/deepcheck.h"
#include "launcher/check/pyscript.h"
#include "common/environ.h"
#include "common/iface.h"
#include "common/mac.h"
#include "launcher/job/agents.h"
#include "common/log.h"
#include "launcher/plan/plan.h"
#include "launcher/plan/rundir.h"
#include "common/sys.h"
#include "util/xmalloc.h"

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
		ak.cwd = (char *)run_dir(c->o, &c->p->hosts[i], c->p->local ||
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

/* Every answer is in: the table, the problems, and the job's next step. */
static void
check_done(struct check *c)
{
	size_t	i;
	int	code;

	c->over = 1;
	check_judge(c);
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
	int			 rc;

	if ((rc = ap_get_checked(p, n, &ak)) != 0)
		return rc;
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
	return DT_ERR_PROTO;
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
