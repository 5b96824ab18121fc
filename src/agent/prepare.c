/*
 * prepare.c -- the agent's PREPARE: this host's interface (IFACE), the
 * working directory, the job's --setup and the variables it prints, the
 * ranks' environments (with the rendezvous relay and the progress socket
 * where dtrun asked for them), and every rank's command found; then
 * PREPARED, or an ERROR saying why not. Nothing is started but the setup.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/agentint.h"
#include "agent/errfile.h"
#include "host/procs.h"
#include "agent/progress.h"
#include "agent/waits.h"
#include "agent/rdzvrelay.h"
#include "agent/setup.h"
#include "common/dtlimits.h"
#include "common/envfile.h"
#include "common/environ.h"
#include "common/err.h"
#include "common/sys.h"
#include "common/exitcodes.h"
#include "common/iface.h"
#include "common/log.h"

extern char **environ;

static int	agent_relay(struct agent *);
static int	agent_progress(struct agent *);
static void	agent_resolve(struct agent *);

/*
 * Builds a->base_env: environ, the setup's variables (with_setup), our
 * interface choice and the job's (dtrun's and -x) laid over it in that
 * order, then JOB's defaults where none set the name. Returns 0 or
 * DT_ERR_NOMEM.
 */
static int
agent_base_env(struct agent *a, int with_setup)
{
	struct dt_environ	*e = &a->base_env;

	dt_environ_free(e);
	if (dt_environ_merge(e, environ, DT_ENV_ALL) != 0 ||
	    (with_setup && dt_environ_merge(e, a->setup_env,
	    a->nsetup_env) != 0) ||
	    dt_environ_merge(e, a->if_env, a->nif_env) != 0 ||
	    dt_environ_merge(e, a->job.env, a->job.nenv) != 0 ||
	    dt_environ_defaults(e, a->job.defaults, a->job.ndefaults) != 0 ||
	    dt_environ_envp(e) == NULL)
		return DT_ERR_NOMEM;
	return 0;
}

/*
 * JOB's errfile: the ranks' error files' directory, unless -x (JOB's env)
 * names a file of the user's, which is then left alone.
 */
static void
agent_errfiles(struct agent *a)
{
	struct dt_err	e;

	if (!a->job.errfile || a->errf != NULL ||
	    dt_env_find(a->job.env, a->job.nenv, ERRFILE_VAR) != NULL)
		return;
	/* Reaches dtrun through our stderr. */
	if (errfiles_new(a->job.job_id, &a->errf, &e) != 0)
		log_warn("%s: %s", a->host, e.msg);
}

/*
 * Builds every rank's environment: the base, its error file's variable
 * (over dtrun's environment, which may be torchrun's), and its RANK's
 * variables over both. Returns 0 or DT_ERR_NOMEM.
 */
static int
agent_build_env(struct agent *a)
{
	struct dt_environ	 e;
	char			*ev;
	size_t			 i;
	int			 rc;

	if (agent_base_env(a, 1) != 0)
		return DT_ERR_NOMEM;
	if ((rc = agent_relay(a)) != 0 || (rc = agent_progress(a)) != 0)
		return rc;
	agent_errfiles(a);
	for (i = 0; i < a->nranks; i++) {
		if (dt_environ_copy(&e, &a->base_env) != 0)
			return DT_ERR_NOMEM;
		rc = 0;
		if (a->errf != NULL &&
		    (ev = errfiles_var(a->errf, a->msgs[i].rank)) != NULL) {
			rc = dt_environ_put(&e, ev);
			free(ev);
		}
		if (rc != 0 || dt_environ_merge(&e, a->msgs[i].env,
		    a->msgs[i].nenv) != 0 ||
		    (a->ranks[i].env = dt_environ_take(&e, NULL)) == NULL) {
			dt_environ_free(&e);
			return DT_ERR_NOMEM;
		}
	}
	return 0;
}

/* A line of the setup's stdout that is no NAME=VALUE: shown as this host's. */
static void
agent_setup_line(void *arg, const char *line, size_t len)
{
	struct agent	*a = arg;

	log_notice("%s: setup: %.*s", a->host, (int)len, line);
}

/* A rank's rendezvous bytes (or its end): to dtrun, on its channel. */
static void
agent_relay_send(void *arg, uint32_t chan, const void *p, size_t n)
{
	struct agent	*a = arg;

	if (!shut_talking(a))
		return;
	ap_put_rdzv(&a->wb, chan, p, n);
	agent_flush_wb(a);
}

/* The same for a rank's connection to the store. */
static void
agent_store_send(void *arg, uint32_t chan, const void *p, size_t n)
{
	struct agent	*a = arg;

	if (!shut_talking(a))
		return;
	ap_put_store(&a->wb, chan, p, n);
	agent_flush_wb(a);
}

/* A relay is out of descriptors: the job cannot start; dtrun says why. */
static void
agent_relay_failed(void *arg, const char *msg)
{
	struct agent	*a = arg;

	agent_error(a, AP_NORANK, EXIT_RDZV, "%s: %s", a->host, msg);
}

/* A relay closed connections unheard: said here, with the count. */
static void
agent_relay_note(void *arg, const char *msg)
{
	struct agent	*a = arg;

	log_warn("%s: %s", a->host, msg);
}

/*
 * VAR=agent: dtrun wants its ranks' connections of this kind through us.
 * Listen for them; addr gets where the ranks find us. Returns 0 with
 * *rp set (or left NULL: not asked), or nonzero, said.
 */
static int
agent_listen(struct agent *a, const char *var, enum relay_kind kind,
    struct rdzvrelay **rp, char *addr, size_t addrlen)
{
	struct rdzvrelay_cbs	 cb = { kind == RELAY_STORE ?
				    agent_store_send : agent_relay_send,
				    agent_relay_failed, agent_relay_note, a };
	struct dt_err		 e;
	const char		*v;

	v = dt_environ_get(&a->base_env, var);
	if (v == NULL || strcmp(v, "agent") != 0 || *rp != NULL)
		return 0;
	if ((*rp = rdzvrelay_new(a->base, kind, a->job.job_id, &cb, addr,
	    addrlen, &e)) == NULL) {
		agent_error(a, AP_NORANK, kind == RELAY_STORE ? EXIT_RDZV :
		    EXIT_INTERNAL, "%s: %s", a->host, e.msg);
		return DT_ERR_SYS;	/* said */
	}
	return 0;
}

/*
 * DTRUN_RDZV_ADDR=agent: dtrun wants its ranks' rendezvous through us;
 * their DTRUN_RDZV_ADDR is our socket. DTRUN_STORE=agent: PyTorch's
 * TCPStore too; torch dials MASTER_ADDR:MASTER_PORT, so those are ours
 * (DTRUN_STORE says the same, for a person reading the environment).
 */
static int
agent_relay(struct agent *a)
{
	char	addr[160], *colon;
	int	rc;

	addr[0] = '\0';
	if ((rc = agent_listen(a, "DTRUN_RDZV_ADDR", RELAY_RDZV, &a->relay,
	    addr, sizeof(addr))) != 0)
		return rc;
	if (addr[0] != '\0' &&
	    (rc = dt_environ_set(&a->base_env, "DTRUN_RDZV_ADDR", addr)) != 0)
		return rc;
	addr[0] = '\0';
	if ((rc = agent_listen(a, "DTRUN_STORE", RELAY_STORE, &a->store,
	    addr, sizeof(addr))) != 0 || addr[0] == '\0')
		return rc;
	if ((rc = dt_environ_set(&a->base_env, "DTRUN_STORE", addr)) != 0)
		return rc;
	colon = strchr(addr, ':');
	*colon = '\0';
	if ((rc = dt_environ_set(&a->base_env, "MASTER_ADDR", addr)) != 0)
		return rc;
	return dt_environ_set(&a->base_env, "MASTER_PORT", colon + 1);
}

/* The ranks' arrivals at NCCL collectives of the last second, to dtrun. */
static void
agent_colls_send(void *arg, const struct ap_coll *v, uint32_t n)
{
	struct agent	*a = arg;

	if (!shut_talking(a))
		return;
	ap_put_colls(&a->wb, dt_clock_ns(CLOCK_REALTIME), v, n);
	agent_flush_wb(a);
}

/*
 * dtrun's NCCL profiler plugin, beside this agent (a build directory) or
 * in ../lib/dtrun (installed); 0 with its path in buf, or -1.
 */
static int
agent_ncclprof_path(char *buf, size_t len)
{
	static const char *const where[] = { "%s/libdtrun-ncclprof.so",
	    "%s/../lib/dtrun/libdtrun-ncclprof.so" };
	char	exe[4096], *slash;
	ssize_t	n;
	size_t	i;

	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) <= 0)
		return -1;
	exe[n] = '\0';
	if ((slash = strrchr(exe, '/')) == NULL)
		return -1;
	*slash = '\0';
	for (i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		n = snprintf(buf, len, where[i], exe);
		if (n > 0 && (size_t)n < len && access(buf, R_OK) == 0)
			return 0;
	}
	return -1;
}

/*
 * DTRUN_NCCL_PROFILER=agent (dtrun watches, and --no-nccl-profiler was
 * not given): NCCL loads our plugin in every rank that uses it, unless the
 * user named a plugin of his own.
 */
static int
agent_ncclprof(struct agent *a)
{
	const char	*v = dt_environ_get(&a->base_env, "DTRUN_NCCL_PROFILER");
	char		 path[4096];

	if (v == NULL || strcmp(v, "agent") != 0)
		return 0;
	if (dt_environ_get(&a->base_env, "NCCL_PROFILER_PLUGIN") != NULL ||
	    agent_ncclprof_path(path, sizeof(path)) != 0)
		return dt_environ_set(&a->base_env, "DTRUN_NCCL_PROFILER",
		    "off");
	if (dt_environ_set(&a->base_env, "DTRUN_NCCL_PROFILER", path) != 0)
		return DT_ERR_NOMEM;
	return dt_environ_set(&a->base_env, "NCCL_PROFILER_PLUGIN", path);
}

/* The ranks' steps of the last second, to dtrun. */
static void
agent_progress_send(void *arg, const struct ap_progress *v, uint32_t n)
{
	struct agent	*a = arg;

	if (!shut_talking(a))
		return;
	ap_put_progress(&a->wb, v, n);
	agent_flush_wb(a);
}

/* Where the ranks waited in the last second, to dtrun. */
static void
agent_waits_send(void *arg, const struct ap_wait *v, uint32_t n)
{
	struct agent	*a = arg;

	if (!shut_talking(a))
		return;
	ap_put_waits(&a->wb, v, n);
	agent_flush_wb(a);
}

/*
 * DTRUN_PROGRESS=agent: dtrun watches for stragglers. Listen for our
 * ranks' steps and point their DTRUN_PROGRESS at our socket.
 */
static int
agent_progress(struct agent *a)
{
	struct dt_err	 e;
	const char	*v;
	char		 addr[160];
	uint32_t	*ranks;
	size_t		 i;

	v = dt_environ_get(&a->base_env, "DTRUN_PROGRESS");
	if (v == NULL || strcmp(v, "agent") != 0 || a->progress != NULL)
		return 0;
	if ((ranks = calloc(a->nranks + 1, sizeof(*ranks))) == NULL)
		return DT_ERR_NOMEM;
	for (i = 0; i < a->nranks; i++)
		ranks[i] = a->ranks[i].rank;
	a->progress = progress_new(a->base, a->job.job_id, ranks, a->nranks,
	    agent_progress_send, a, addr, sizeof(addr), &e);
	/* No sampler (out of memory) only leaves the watch blind. */
	a->waits = waits_new(a->base, ranks, a->nranks, agent_waits_send, a);
	free(ranks);
	if (a->progress == NULL) {
		agent_error(a, AP_NORANK, EXIT_INTERNAL, "%s: %s", a->host,
		    e.msg);
		return DT_ERR_SYS;	/* said */
	}
	progress_on_colls(a->progress, agent_colls_send);
	if (agent_ncclprof(a) != 0)
		return DT_ERR_NOMEM;
	return dt_environ_set(&a->base_env, "DTRUN_PROGRESS", addr);
}

/*
 * The ERROR for a failed setup: why, then each stderr line under the
 * host's name, as many of the last as fit in one ERROR. Malloc'd.
 */
static char *
agent_setup_msg(struct agent *a, const char *why, const char *p, size_t n)
{
	const char	*nl, *end = p + n, *q, *b, *start = end;
	char		*msg = NULL;
	size_t		 len = 0, room, line;
	FILE		*f;

	if ((f = open_memstream(&msg, &len)) == NULL)
		return NULL;
	fprintf(f, "%s: --setup %s, so no rank was started on any host%s",
	    a->host, why, n > 0 ? "; its stderr ends:" :
	    " (it wrote nothing on stderr)");
	fflush(f);
	/* Many short lines grow by their prefixes: keep the last that fit. */
	room = len < AP_ERRMSG_MAX ? AP_ERRMSG_MAX - len : 0;
	q = end > p && end[-1] == '\n' ? end - 1 : end;
	while (q > p) {
		for (b = q; b > p && b[-1] != '\n'; b--)
			;
		/* "\nHOST: setup: LINE" */
		line = (size_t)(q - b) + strlen(a->host) + 10;
		if (line > room)
			break;
		room -= line;
		start = b;
		q = b > p ? b - 1 : b;
	}
	for (p = start; p < end; p = nl + 1) {
		if ((nl = memchr(p, '\n', end - p)) == NULL)
			nl = end;
		fprintf(f, "\n%s: setup: %.*s", a->host, (int)(nl - p), p);
	}
	if (fclose(f) != 0) {
		free(msg);
		return NULL;
	}
	return msg;
}

/*
 * The setup ended: on failure say so, with its stderr's last lines, and
 * stay unprepared (the launcher stops everything); else take its variables
 * and go on preparing.
 */
static void
agent_setup_done(void *arg)
{
	struct agent	*a = arg;
	struct ap_error	 e;
	struct dt_err	 err;
	const char	*p;
	char		*msg;
	size_t		 n;

	if (a->shut != SHUT_NONE)
		return;		/* killed by us: shut_check follows */
	p = setup_stderr(a->setup, &n);
	if (setup_result(a->setup, &err) != 0) {
		/* Its last 2 KiB, whole lines: a message, not a log. */
		p = envfile_tail(p, n, DT_SETUP_TAIL, SIZE_MAX, &n);
		msg = agent_setup_msg(a, err.msg, p, n);
		e.rank = AP_NORANK;
		e.code = EXIT_CONFIG;
		e.msg = msg != NULL ? msg : "--setup failed";
		ap_put_error(&a->wb, &e);
		agent_flush_wb(a);
		free(msg);
		return;
	}
	/* A setup's warnings are worth seeing even when it worked. */
	envfile_setup_output(p, n, NULL, NULL, agent_setup_line, a);
	p = setup_stdout(a->setup, &n);
	if (envfile_setup_output(p, n, &a->setup_env, &a->nsetup_env,
	    agent_setup_line, a) != 0) {
		agent_error(a, AP_NORANK, EXIT_INTERNAL, "%s: out of memory", a->host);
		return;
	}
	agent_resolve(a);
}

/* Starts the job's setup command with the job's variables; PREPARED waits for it. */
static void
agent_setup(struct agent *a)
{
	struct dt_err	e;

	if (agent_base_env(a, 0) != 0) {
		agent_error(a, AP_NORANK, EXIT_INTERNAL, "%s: out of memory", a->host);
		return;
	}
	a->setup = setup_start(a->base, a->job.setup, a->base_env.v, a->devnull,
	    agent_setup_done, a, &e);
	if (a->setup == NULL)
		agent_error(a, AP_NORANK, EXIT_CONFIG, "%s: cannot run --setup: %s",
		    a->host, e.msg);
}

/* Adds "name=value" to the variables our interface choice sets. */
static int
agent_if_var(struct agent *a, const char *name, const char *value)
{
	if (asprintf(&a->if_env[a->nif_env], "%s=%s", name, value) == -1) {
		a->if_env[a->nif_env] = NULL;
		return -1;
	}
	a->nif_env++;
	return 0;
}

/*
 * Chooses this host's own interface, when the launcher asks (JOB's iface
 * and rank0), and tells it with IFACE. Returns 0, or -1 when there is none
 * to use: the launcher then stops the job, and no rank is started.
 */
static int
agent_iface(struct agent *a)
{
	static const struct {
		uint8_t		 bit;
		const char	*name;
	} vars[] = {
		{ AP_IF_NCCL, "NCCL_SOCKET_IFNAME" },
		{ AP_IF_GLOO, "GLOO_SOCKET_IFNAME" },
		{ AP_IF_DMLC, "DMLC_INTERFACE" },
	};
	struct iface		*list;
	struct iface_choice	 ch;
	struct ap_iface		 f;
	struct dt_err		 e;
	size_t			 n, i;
	int			 rc;

	if (a->job.iface[0] == '\0' && a->job.rank0[0] == '\0')
		return 0;
	memset(&e, 0, sizeof(e));
	if ((rc = iface_list(&list, &n, &e)) == 0) {
		rc = iface_pick(list, n, a->job.iface, a->job.rank0, &ch, &e);
		free(list);
	}
	memset(&f, 0, sizeof(f));
	f.ok = rc == 0;
	f.name = rc == 0 ? ch.name : "";
	f.addr = rc == 0 ? ch.addr : "";
	f.why = rc == 0 ? ch.why : e.msg;
	for (i = 0; rc == 0 && i < sizeof(vars) / sizeof(vars[0]); i++) {
		if ((a->job.ifvars & vars[i].bit) == 0 ||
		    agent_if_var(a, vars[i].name, ch.name) == 0)
			continue;
		agent_error(a, AP_NORANK, 70, "%s: out of memory", a->host);
		return -1;
	}
	ap_put_iface(&a->wb, &f);
	agent_flush_wb(a);
	return rc == 0 ? 0 : -1;
}

/* PREPARE: check the directory and every command; start nothing. */
void
prepare_start(struct agent *a)
{
	if (a->nranks != a->job.nranks) {
		agent_error(a, AP_NORANK, EXIT_INTERNAL, "%s: protocol: PREPARE after %zu "
		    "of %u ranks", a->host, a->nranks, a->job.nranks);
		shut_finish(a);
		return;
	}
	/* First: a setup may want NCCL_SOCKET_IFNAME too. */
	if (agent_iface(a) != 0)
		return;
	if (a->job.cwd[0] != '\0' && chdir(a->job.cwd) == -1) {
		agent_error(a, AP_NORANK, EXIT_CONFIG, "%s: cannot use working directory "
		    "\"%s\": %s", a->host, a->job.cwd, strerror(errno));
		return;
	}
	if (a->job.setup[0] != '\0') {
		agent_setup(a);
		return;
	}
	agent_resolve(a);
}

/* The rest of PREPARE, once any setup is done: variables, then every command. */
static void
agent_resolve(struct agent *a)
{
	struct rank	*r;
	struct dt_err	 e;
	size_t		 i;
	int		 rc;

	if ((rc = agent_build_env(a)) != 0) {
		if (rc == DT_ERR_NOMEM)
			agent_error(a, AP_NORANK, EXIT_INTERNAL, "%s: out of "
			    "memory", a->host);
		return;
	}
	for (i = 0; i < a->nranks; i++) {
		r = &a->ranks[i];
		r->argv = a->msgs[i].argv;
		/* "@dtrun-agent": this agent's own binary (dtrun-kill -H). */
		if (strcmp(r->argv[0], AGENT_SELF) == 0) {
			r->path = strdup("/proc/self/exe");
			continue;
		}
		/* Ranks almost always share a command: resolve it once. */
		if (i > 0 && strcmp(r->argv[0], a->ranks[i - 1].argv[0]) == 0 &&
		    a->ranks[i - 1].path != NULL) {
			r->path = strdup(a->ranks[i - 1].path);
			continue;
		}
		rc = spawn_resolve(r->argv[0], dt_env_find(r->env, DT_ENV_ALL,
		    "PATH"), &r->path, &e);
		if (rc == 0)
			continue;
		agent_error(a, r->rank, rc == DT_ERR_NOMEM ? EXIT_INTERNAL :
		    EXIT_CONFIG, "%s: %s (on %s)", r->argv[0], e.msg, a->host);
		return;
	}
	agent_to(a, AGP_PREPARED);
	ap_put_empty(&a->wb, AP_PREPARED);
	/* START came with PREPARE: its STARTED frames follow in this write. */
	if (a->start_asked && a->shut == SHUT_NONE) {
		agent_start(a);
		return;
	}
	agent_flush_wb(a);
}
