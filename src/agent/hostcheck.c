/*
 * hostcheck.c -- dtrun --check on one host. GATHER chooses the interface
 * exactly as a run's agent does (iface_pick of the --iface candidates,
 * else the route to rank 0's address), finds the command in PATH, tests
 * NCCL_SOCKET_IFNAME/GLOO_SOCKET_IFNAME against the interfaces here, and,
 * unless the check is the fast one, runs a small shell probe for the GPUs,
 * libnccl and a python command's interpreter and torch, killed after
 * HOSTCHECK_SUB_S. A GATHER with the job's --setup runs it first, as a
 * run's agent does before any rank, and answers with the variables it
 * printed (a venv's PATH, say) laid under dtrun's, as the ranks would get
 * them. Rank 0's host also listens on its chosen address; a
 * PROBE then connects there, so "reachable" means a real TCP connection
 * from this host to that address. With --deep every host listens there
 * for the others' PAIRs too, and a PAIR measures the path to one of them
 * (deeppair.c). The event loop never blocks: heartbeats
 * go on while a slow `import torch` runs.
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <sys/utsname.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/strs.h"
#include "common/dtlimits.h"
#include "common/envfile.h"
#include "common/evfd.h"
#include "common/environ.h"
#include "common/pyname.h"
#include "common/err.h"
#include "agent/deeppair.h"
#include "agent/hostcheck.h"
#include "common/iface.h"
#include "common/mac.h"
#include "host/procs.h"
#include "agent/setup.h"
#include "common/sys.h"
#include "common/wire.h"

extern char **environ;

/*
 * The slow part: GPUs, the driver's version and the GPUs' health (a GPU
 * with uncorrected ECC errors since its driver loaded; with --deep, DCGM's
 * quick diagnostic where dcgmi exists), libnccl (its version is in the
 * name its links resolve to: libnccl.so.2.21.5), and a python command's
 * versions, as key=value lines. The interpreter and its code come in the
 * environment, never spliced into the script.
 */
static const char probe_sh[] =
"if command -v nvidia-smi >/dev/null 2>&1; then\n"
"	if o=$(nvidia-smi -L 2>&1); then\n"
"		printf '%s\\n' \"$o\" | sed -n 's/^GPU /gpu=GPU /p'\n"
"		v=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1)\n"
"		case $v in [0-9]*.*) echo \"driver=$v\" ;; esac\n"
"		nvidia-smi --query-gpu=index,ecc.errors.uncorrected.volatile.total "
"--format=csv,noheader,nounits 2>/dev/null | while IFS=', ' read -r i n; do\n"
"			case $i$n in *[!0-9]*|'') ;; *) [ \"$n\" -gt 0 ] && echo \"gpu_ecc=$i:$n\" ;; esac\n"
"		done\n"
"		if [ -n \"${DTRUN_CHECK_DEEP:-}\" ] && command -v dcgmi >/dev/null 2>&1; then\n"
"			if d=$(dcgmi diag -r 1 2>&1); then echo dcgm=pass\n"
"			else echo \"dcgm_err=dcgmi diag -r 1 failed: $(printf '%s\\n' \"$d\" | grep -i -m 1 fail || printf '%s' \"$d\" | head -n 1)\"; fi\n"
"		fi\n"
"	else\n"
"		echo \"gpu_err=nvidia-smi -L failed: $(printf '%s' \"$o\" | head -n 1)\"\n"
"	fi\n"
"fi\n"
"IFS=:; for d in ${LD_LIBRARY_PATH:-} /usr/local/cuda/lib64 "
"/usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib64 /usr/lib; do\n"
"	for f in \"$d\"/libnccl.so*; do\n"
"		[ -e \"$f\" ] && { echo \"nccl=$f\"; nf=$f; break 2; }\n"
"	done\n"
"done; unset IFS\n"
"if [ -n \"${nf:-}\" ] && r=$(readlink -f \"$nf\" 2>/dev/null || realpath \"$nf\" 2>/dev/null); then\n"
"	case ${r##*/} in libnccl.so.[0-9]*.[0-9]*.[0-9]*) echo \"nccl_version=${r##*/libnccl.so.}\" ;; esac\n"
"fi\n"
"if [ -n \"${DTRUN_CHECK_PY:-}\" ]; then\n"
"	\"$DTRUN_CHECK_PY\" -c \"$DTRUN_CHECK_PYCODE\" 2>/dev/null ||\n"
"	    echo \"python_err=$DTRUN_CHECK_PY -c ... exited with $?\"\n"
"fi\n";

static const char probe_py[] =
"import sys\n"
"print('python=' + sys.version.split()[0])\n"
"try:\n"
"    import torch\n"
"except BaseException as e:\n"
"    print('torch_err=' + (type(e).__name__ + ': ' + str(e)).replace('\\n', ' '))\n"
"else:\n"
"    print('torch=' + str(torch.__version__))\n"
"    print('torch_cuda=' + str(torch.version.cuda))\n";

struct hostcheck {
	struct event_base	*base;
	int			 devnull;
	hostcheck_done_fn	 done;
	void			*arg;
	int			 busy;		/* a step is under way */
	uint32_t		 step;
	uint64_t		 t0_real;	/* the CHECK came (wall clock) */
	uint64_t		 t0_mono;
	char			**kv;		/* the answers so far */
	size_t			 nkv;
	int			 oom;
	int			 lfd;		/* rank 0's listener, or -1 */
	struct event		*lev;
	struct event		*relisten;	/* lev paused: out of fds */
	int			 reserve;	/* a spare fd (dt_accept_shed) */
	struct deep_srv		*deep;		/* --deep: the others' PAIRs */
	struct deep_pair	*pair;		/* a PAIR under way */
	int			 cfd;		/* a PROBE's connection, or -1 */
	struct event		*cev;
	char			 target[300];
	struct setup		*sub;		/* the slow probe */
	struct event		*sub_timer;
	int			 sub_killed;	/* by sub_timer */
	char			**env;		/* the probe's environment */
	struct ap_check		 ck;		/* a GATHER waiting for its setup */
};

/* Adds one "key=value" answer. */
static void
hc_add(struct hostcheck *hc, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void
hc_add(struct hostcheck *hc, const char *key, const char *fmt, ...)
{
	char	*val = NULL, *kv = NULL;
	va_list	  ap;
	int	  rc;

	va_start(ap, fmt);
	rc = vasprintf(&val, fmt, ap);
	va_end(ap);
	/* An answer is a line for a person: a long one is cut, not refused. */
	if (rc > HOSTCHECK_VAL_MAX)
		val[HOSTCHECK_VAL_MAX] = '\0';
	if (rc < 0 || asprintf(&kv, "%s=%s", key, val) < 0 ||
	    hc->nkv >= AP_CHK_KV_MAX) {
		if (rc >= 0)
			free(val);
		free(kv);
		hc->oom = 1;
		return;
	}
	free(val);
	if (dt_strs_push(&hc->kv, &hc->nkv, kv) != 0)
		hc->oom = 1;
}

/* Sends the step's answers and makes ready for the next step. */
static void
hc_finish(struct hostcheck *hc)
{
	struct ap_checked	c;

	if (hc->oom)
		hc_add(hc, "probe_err", "out of memory: answers left out");
	c.step = hc->step;
	c.now_ms = hc->t0_real;
	c.took_ms = dt_clock_ms(CLOCK_MONOTONIC) - hc->t0_mono;
	c.kv = hc->kv;
	c.nkv = hc->nkv;
	hc->busy = 0;
	hc->done(hc->arg, &c);
	dt_strv_free(hc->kv);
	hc->kv = NULL;
	hc->nkv = 0;
	hc->oom = 0;
}

int
hostcheck_ifname_match(const char *spec, const char *name, int nccl)
{
	const char	*p, *end;
	size_t		 l;
	int		 not = 0, exact = !nccl, hit = 0;

	if (nccl && *spec == '^') {
		not = 1;
		spec++;
	}
	if (nccl && *spec == '=') {
		exact = 1;
		spec++;
	}
	for (p = spec; *p != '\0' && !hit; p = *end == ',' ? end + 1 : end) {
		end = p + strcspn(p, ",");
		l = (size_t)(end - p);
		if (l == 0)
			continue;
		hit = exact ? strlen(name) == l && strncmp(name, p, l) == 0 :
		    strncmp(name, p, l) == 0;
	}
	return not ? !hit : hit;
}

int
hostcheck_ifname(const char *var, const char *spec, const struct iface *list,
    size_t n, struct dt_err *e)
{
	char	have[sizeof(e->msg)];
	size_t	i, off = 0;
	int	nccl = strncmp(var, "NCCL", 4) == 0;

	have[0] = '\0';
	for (i = 0; i < n; i++)
		if (list[i].up && hostcheck_ifname_match(spec, list[i].name,
		    nccl))
			return 0;
	for (i = 0; i < n && off < sizeof(have); i++)
		if (list[i].up && (i == 0 || strcmp(list[i].name,
		    list[i - 1].name) != 0))
			off += snprintf(have + off, sizeof(have) - off, " %s",
			    list[i].name);
	return dt_errf(e, NULL, 0, 0, DT_ERR_NOTFOUND, "%s=%s selects no "
	    "interface that is up here (%s; up with IPv4:%s)", var, spec,
	    nccl ? "NCCL's syntax: prefixes, ^ excludes, = exact" :
	    "Gloo's syntax: exact names", have);
}

/* The value of name in the CHECK's variables, else (own) in our environment. */
static const char *
hc_getenv(const struct ap_check *c, const char *name, int own)
{
	const char	*v = dt_env_find(c->env, c->nenv, name);

	return v != NULL || !own ? v : getenv(name);
}

/* ARGSUSED */
static void
hc_relisten_cb(evutil_socket_t fd, short what, void *arg)
{
	struct hostcheck	*hc = arg;

	if (hc->lev != NULL)
		event_add(hc->lev, NULL);
}

/* A PROBE connected: the connection is the answer, nothing is said on it. */
static void
hc_take(void *arg, int c)
{
	close(c);
}

/* ARGSUSED */
static void
hc_accept_cb(evutil_socket_t fd, short what, void *arg)
{
	struct hostcheck	*hc = arg;
	struct timeval		 tv = { 0, HOSTCHECK_PAUSE_MS * 1000 };

	/* Out of descriptors, with none to spare: rest, never spin. */
	if (dt_accept_some(fd, SOCK_CLOEXEC, HOSTCHECK_ACCEPTS, &hc->reserve,
	    hc_take, NULL, hc) != 0 && hc->relisten != NULL) {
		event_del(hc->lev);
		evtimer_add(hc->relisten, &tv);
	}
}

/* Rank 0's host: listens on addr, any port, for the others' PROBEs. */
static void
hc_listen(struct hostcheck *hc, const char *addr)
{
	struct sockaddr_in	sin;
	socklen_t		sl = sizeof(sin);
	int			fd, e;

	hostcheck_close(hc);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1) {
		hc_add(hc, "listen_err", "%s: not an IPv4 address", addr);
		return;
	}
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1 || bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(fd, DT_BACKLOG_HOSTS) == -1 ||
	    getsockname(fd, (struct sockaddr *)&sin, &sl) == -1) {
		e = errno;
		if (fd >= 0)
			close(fd);
		hc_add(hc, "listen_err", "cannot listen on %s: %s", addr,
		    strerror(e));
		return;
	}
	hc->lfd = fd;
	hc->reserve = dt_reserve_open();
	hc->relisten = evtimer_new(hc->base, hc_relisten_cb, hc);
	hc->lev = event_new(hc->base, fd, EV_READ | EV_PERSIST, hc_accept_cb,
	    hc);
	if (hc->lev != NULL)
		event_add(hc->lev, NULL);
	hc_add(hc, "listen", "%s:%d", addr, ntohs(sin.sin_port));
}

/* The check's key for the pair test into key; 0, or -1 if it sent none. */
static int
hc_key(const struct ap_check *c, uint8_t key[DEEP_KEY_LEN])
{
	size_t	n;

	return c->key != NULL && dt_hex_decode(c->key, key, DEEP_KEY_LEN,
	    &n) == 0 && n == DEEP_KEY_LEN ? 0 : -1;
}

/* --deep: listens on addr, any port, for the other hosts' PAIRs. */
static void
hc_deep_listen(struct hostcheck *hc, const struct ap_check *c,
    const char *addr)
{
	struct dt_err	e;
	uint8_t		key[DEEP_KEY_LEN];
	char		where[96];

	deep_srv_free(hc->deep);
	hc->deep = NULL;
	if (hc_key(c, key) != 0) {
		hc_add(hc, "deep_err", "the check sent no key for the pair "
		    "test: use the same dtrun version on every host");
		return;
	}
	dt_err_clear(&e);
	hc->deep = deep_srv_new(hc->base, addr, key, where, sizeof(where), &e);
	explicit_bzero(key, sizeof(key));
	if (hc->deep == NULL)
		hc_add(hc, "deep_err", "%s", e.msg);
	else
		hc_add(hc, "deep_listen", "%s", where);
}

/* The interface a run would choose here, and the interfaces there are. */
static void
hc_iface(struct hostcheck *hc, const struct ap_check *c, struct iface *list,
    size_t n)
{
	struct iface_choice	ch;
	struct dt_err		e;
	char			have[1024];
	size_t			i, off = 0;

	have[0] = '\0';
	for (i = 0; i < n && off < sizeof(have); i++)
		off += snprintf(have + off, sizeof(have) - off, "%s%s %s%s",
		    i ? ", " : "", list[i].name, list[i].addr, list[i].up ? "" :
		    " (down)");
	hc_add(hc, "ifaces", "%s", have);
	dt_err_clear(&e);
	if (iface_pick(list, n, c->iface, c->target, &ch, &e) != 0) {
		hc_add(hc, "iface_err", "%s", e.msg);
		if (c->flags & AP_CHK_LISTEN)
			hc_add(hc, "listen_err", "no interface chosen");
		if (c->flags & AP_CHK_DEEP)
			hc_add(hc, "deep_err", "no interface chosen");
		return;
	}
	hc_add(hc, "iface", "%s", ch.name);
	hc_add(hc, "addr", "%s", ch.addr);
	hc_add(hc, "iface_why", "%s", ch.why);
	if (c->flags & AP_CHK_LISTEN)
		hc_listen(hc, ch.addr);
	if (c->flags & AP_CHK_DEEP)
		hc_deep_listen(hc, c, ch.addr);
}

/*
 * environ with the CHECK's variables laid over it, plus the probe's own,
 * into hc->env. Returns 0 or DT_ERR_NOMEM.
 */
static int
hc_env(struct hostcheck *hc, const struct ap_check *c, const char *py)
{
	struct dt_environ	e;

	dt_environ_init(&e);
	if (dt_environ_merge(&e, environ, DT_ENV_ALL) != 0 ||
	    dt_environ_merge(&e, c->env, c->nenv) != 0 ||
	    (py != NULL && (dt_environ_set(&e, "DTRUN_CHECK_PY", py) != 0 ||
	    dt_environ_set(&e, "DTRUN_CHECK_PYCODE", probe_py) != 0)) ||
	    ((c->flags & AP_CHK_DEEP) &&
	    dt_environ_set(&e, "DTRUN_CHECK_DEEP", "1") != 0) ||
	    (hc->env = dt_environ_take(&e, NULL)) == NULL) {
		dt_environ_free(&e);
		return DT_ERR_NOMEM;
	}
	return 0;
}

/* The probe's stdout: its key=value lines are answers. */
static void
hc_sub_line(void *arg, const char *line, size_t len)
{
	/* Anything else it printed is noise (nvidia-smi's banners). */
}

/* The slow probe ended (or was killed): take its answers and reply. */
static void
hc_sub_done(void *arg)
{
	struct hostcheck	*hc = arg;
	const char		*p;
	char			**v = NULL;
	size_t			 n, nv = 0, i;

	if (hc->sub_timer != NULL)
		event_del(hc->sub_timer);
	p = setup_stdout(hc->sub, &n);
	if (envfile_setup_output(p, n, &v, &nv, hc_sub_line, hc) != 0)
		hc->oom = 1;
	for (i = 0; i < nv; i++) {
		char *eq = strchr(v[i], '=');

		*eq = '\0';
		hc_add(hc, v[i], "%s", eq + 1);
	}
	dt_strv_free(v);
	if (hc->sub_killed)
		hc_add(hc, "probe_err", "the GPU, NCCL and interpreter probe "
		    "did not end within %d s, and was killed", HOSTCHECK_SUB_S);
	hc_finish(hc);
}

/* ARGSUSED */
static void
hc_sub_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct hostcheck	*hc = arg;

	hc->sub_killed = 1;
	setup_kill(hc->sub);		/* its reaping calls hc_sub_done */
}

/*
 * Starts cmd as the check's one shell at a time (the setup, then the
 * probe), in c's environment (py: the probe's interpreter), done called
 * when it ends, killed after HOSTCHECK_SUB_S. The last one's shell and
 * environment are freed first. 0, or DT_ERR_* with e's message the reason.
 */
static int
hc_sub_run(struct hostcheck *hc, const struct ap_check *c, const char *py,
    const char *cmd, setup_done_fn done, struct dt_err *e)
{
	struct timeval	tv = { HOSTCHECK_SUB_S, 0 };

	setup_free(hc->sub);
	hc->sub = NULL;
	dt_strv_free(hc->env);
	hc->env = NULL;
	hc->sub_killed = 0;
	if (hc_env(hc, c, py) != 0)
		return dt_errf(e, NULL, 0, 0, DT_ERR_NOMEM, "%s",
		    strerror(ENOMEM));
	if ((hc->sub = setup_start(hc->base, cmd, hc->env, hc->devnull, done,
	    hc, e)) == NULL)
		return e->code;
	if (hc->sub_timer == NULL)
		hc->sub_timer = evtimer_new(hc->base, hc_sub_timer_cb, hc);
	if (hc->sub_timer != NULL)
		event_add(hc->sub_timer, &tv);
	return 0;
}

/* Starts the slow probe; 0, or -1 when it could not start (said in kv). */
static int
hc_sub_start(struct hostcheck *hc, const struct ap_check *c, const char *py)
{
	struct dt_err	e;

	if (hc_sub_run(hc, c, py, probe_sh, hc_sub_done, &e) != 0) {
		hc_add(hc, "probe_err", "cannot run the GPU, NCCL and "
		    "interpreter probe: %s", e.msg);
		return -1;
	}
	return 0;
}

/* A copy of what c points to in hc->ck, kept while its setup runs; 0 or -1. */
static int
hc_keep(struct hostcheck *hc, const struct ap_check *c)
{
	struct ap_check	*k = &hc->ck;
	size_t		 i;

	ap_check_free(k);
	*k = *c;
	k->iface = strdup(c->iface);
	k->target = strdup(c->target);
	k->cmd = strdup(c->cmd);
	k->cwd = strdup(c->cwd);
	k->key = c->key != NULL ? strdup(c->key) : NULL;
	k->setup = NULL;
	k->nenv = 0;
	if ((k->env = calloc(c->nenv + 1, sizeof(char *))) != NULL)
		for (i = 0; i < c->nenv; i++)
			if ((k->env[k->nenv] = strdup(c->env[i])) != NULL)
				k->nenv++;
	if (k->iface == NULL || k->target == NULL || k->cmd == NULL ||
	    k->cwd == NULL || k->env == NULL || k->nenv != c->nenv ||
	    (c->key != NULL && k->key == NULL)) {
		ap_check_free(k);
		return -1;
	}
	return 0;
}

/*
 * Lays the setup's NAME=VALUE lines under the kept CHECK's variables: as
 * in a run, dtrun's and -x win over a setup's. Returns 0 or DT_ERR_NOMEM.
 */
static int
hc_setup_env(struct hostcheck *hc, char **v, size_t nv)
{
	struct ap_check		*k = &hc->ck;
	struct dt_environ	 e;
	char			**env;

	dt_environ_init(&e);
	if (dt_environ_merge(&e, k->env, k->nenv) != 0 ||
	    dt_environ_defaults(&e, v, nv) != 0 ||
	    (env = dt_environ_take(&e, &k->nenv)) == NULL) {
		dt_environ_free(&e);
		return DT_ERR_NOMEM;
	}
	dt_strv_free(k->env);
	k->env = env;
	return 0;
}

static void	hc_gather(struct hostcheck *, const struct ap_check *);

/* The setup ended (or was killed): gather with what it printed. */
static void
hc_setup_done(void *arg)
{
	struct hostcheck	*hc = arg;
	const char		*p;
	char			**v = NULL;
	struct dt_err		 e;
	size_t			 n, nv = 0;

	if (hc->sub_timer != NULL)
		event_del(hc->sub_timer);
	if (hc->sub_killed)
		hc_add(hc, "setup_err", "did not end within %d s, and was "
		    "killed", HOSTCHECK_SUB_S);
	else if (setup_result(hc->sub, &e) != 0) {
		p = setup_stderr(hc->sub, &n);
		/* Its last line: an answer is one line. */
		p = envfile_tail(p, n, SIZE_MAX, 1, &n);
		hc_add(hc, "setup_err", "%s%s%.*s", e.msg, n > 0 ? ": " : "",
		    (int)n, p);
	} else {
		p = setup_stdout(hc->sub, &n);
		if (envfile_setup_output(p, n, &v, &nv, hc_sub_line, hc) != 0 ||
		    hc_setup_env(hc, v, nv) != 0)
			hc->oom = 1;
		dt_strv_free(v);
	}
	hc_gather(hc, &hc->ck);
	ap_check_free(&hc->ck);
}

/*
 * GATHER with a setup: runs it first, in the job's directory, with the
 * environment a run's setup gets; 0, or -1 when it could not start (said
 * in kv: the gathering goes on without it).
 */
static int
hc_setup_start(struct hostcheck *hc, const struct ap_check *c)
{
	struct dt_err	e;
	int		rc, here = -1;

	if (hc_keep(hc, c) != 0) {
		hc->oom = 1;
		return -1;
	}
	if (c->cwd[0] != '\0' && ((here = open(".", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1 || chdir(c->cwd) == -1)) {
		hc_add(hc, "setup_err", "cannot run it in %s: %s", c->cwd,
		    strerror(errno));
		if (here != -1)
			close(here);
		return -1;
	}
	rc = hc_sub_run(hc, c, NULL, c->setup, hc_setup_done, &e);
	if (here != -1) {
		if (fchdir(here) == -1)
			hc->oom = 1;	/* cannot happen: we were there */
		close(here);
	}
	if (rc != 0) {
		hc_add(hc, "setup_err", "cannot run it: %s", e.msg);
		return -1;
	}
	return 0;
}

/*
 * key: the MiB of the file system at path, its size (total) or what is
 * free; nothing where it cannot be read.
 */
static void
hc_space(struct hostcheck *hc, const char *key, const char *path, int total)
{
	struct statvfs	st;

	if (statvfs(path, &st) != 0)
		return;
	hc_add(hc, key, "%llu", (unsigned long long)(total ? st.f_blocks :
	    st.f_bavail) * st.f_frsize >> 20);
}

/* The first line of path, without its newline; 0, or -1 when unreadable. */
static int
hc_read_line(const char *path, char *buf, size_t size)
{
	FILE	*f;
	int	 rc = -1;

	if ((f = fopen(path, "re")) == NULL)
		return -1;
	if (fgets(buf, (int)size, f) != NULL) {
		buf[strcspn(buf, "\n")] = '\0';
		rc = 0;
	}
	fclose(f);
	return rc;
}

/*
 * rdma: the RDMA devices (InfiniBand, RoCE) the kernel has. No directory
 * is none: it appears with the first device's driver.
 */
static void
hc_rdma(struct hostcheck *hc)
{
	DIR		*d;
	struct dirent	*de;
	unsigned	 n = 0;

	if ((d = opendir("/sys/class/infiniband")) == NULL) {
		if (errno == ENOENT)
			hc_add(hc, "rdma", "0");
		return;
	}
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.';
	closedir(d);
	hc_add(hc, "rdma", "%u", n);
}

/* hugepages: HugePages_Total of /proc/meminfo (reserved, not in use). */
static void
hc_hugepages(struct hostcheck *hc)
{
	FILE		*f;
	char		 line[256];
	unsigned long	 n;

	if ((f = fopen("/proc/meminfo", "re")) == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "HugePages_Total: %lu", &n) == 1) {
			hc_add(hc, "hugepages", "%lu", n);
			break;
		}
	fclose(f);
}

/*
 * What the ranks inherit from the system here: kernel, C library, the
 * locked-memory limit RDMA registration counts against, memory
 * overcommit, huge pages. Cheap reads, answered in the fast check too;
 * what cannot be read is not answered.
 */
static void
hc_system(struct hostcheck *hc)
{
	struct utsname	 u;
	struct rlimit	 rl;
	char		 line[256], *b, *e;

	if (uname(&u) == 0)
		hc_add(hc, "kernel", "%s", u.release);
#ifdef __GLIBC__
	hc_add(hc, "glibc", "%s", gnu_get_libc_version());
#endif
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0) {
		if (rl.rlim_cur == RLIM_INFINITY)
			hc_add(hc, "memlock", "unlimited");
		else
			hc_add(hc, "memlock", "%llu",
			    (unsigned long long)rl.rlim_cur >> 10);
	}
	hc_rdma(hc);
	if (hc_read_line("/proc/sys/vm/overcommit_memory", line,
	    sizeof(line)) == 0)
		hc_add(hc, "overcommit", "%s", line);
	hc_hugepages(hc);
	/* "always [madvise] never": the one in brackets is in force. */
	if (hc_read_line("/sys/kernel/mm/transparent_hugepage/enabled", line,
	    sizeof(line)) == 0 && (b = strchr(line, '[')) != NULL &&
	    (e = strchr(b, ']')) != NULL)
		hc_add(hc, "thp", "%.*s", (int)(e - b - 1), b + 1);
}

/* GATHER: everything but the reachability. */
static void
hc_gather(struct hostcheck *hc, const struct ap_check *c)
{
	static const char *const vars[] = { "NCCL_SOCKET_IFNAME",
	    "GLOO_SOCKET_IFNAME" };
	struct iface	*list = NULL;
	struct dt_err	 e;
	const char	*v;
	char		*path = NULL, *rel = NULL, key[64];
	size_t		 n = 0, i;

	hc_add(hc, "version", "%s", DT_VERSION);
	hc_add(hc, "proto", "%d", AP_VERSION);
	hc_space(hc, "shm_mb", "/dev/shm", 1);
	hc_space(hc, "disk_free_mb", c->cwd[0] != '\0' ? c->cwd : ".", 0);
	/* The agent raised it to the hard limit: what its ranks get too. */
	if (dt_nofile_limit() != UINT64_MAX)
		hc_add(hc, "nofile", "%llu",
		    (unsigned long long)dt_nofile_limit());
	hc_system(hc);
	dt_err_clear(&e);
	if (iface_list(&list, &n, &e) != 0)
		hc_add(hc, "iface_err", "%s", e.msg);
	else
		hc_iface(hc, c, list, n);
	for (i = 0; list != NULL && i < 2; i++) {
		if ((v = hc_getenv(c, vars[i], 0)) == NULL)
			continue;
		snprintf(key, sizeof(key), "%s_ifname", i == 0 ? "nccl" : "gloo");
		if (hostcheck_ifname(vars[i], v, list, n, &e) == 0)
			hc_add(hc, key, "%s", v);
		else
			hc_add(hc, strcat(key, "_err"), "%s", e.msg);
	}
	free(list);
	if (c->cmd[0] != '\0') {
		/* "./train" is where the job runs, as the run's agent finds it. */
		if (c->cmd[0] != '/' && strchr(c->cmd, '/') != NULL &&
		    c->cwd[0] != '\0') {
			if (asprintf(&rel, "%s/%s", c->cwd, c->cmd +
			    (strncmp(c->cmd, "./", 2) == 0 ? 2 : 0)) < 0)
				rel = NULL;
		}
		if (spawn_resolve(rel != NULL ? rel : c->cmd,
		    hc_getenv(c, "PATH", 1), &path, &e) == 0)
			hc_add(hc, "cmd", "%s", path);
		else
			hc_add(hc, "cmd_err", "%s: %s", c->cmd, e.msg);
		free(rel);
	}
	if ((c->flags & AP_CHK_FAST) || hc_sub_start(hc, c, path != NULL &&
	    dt_is_python(path) ? path : NULL) != 0)
		hc_finish(hc);
	free(path);
}

/* The PROBE's connection ended, one way or the other. */
static void
hc_probe_end(struct hostcheck *hc, int err)
{
	dt_event_close(&hc->cev, &hc->cfd);
	if (err == 0) {
		hc_add(hc, "reach", "%s", hc->target);
		hc_add(hc, "reach_ms", "%llu", (unsigned long long)
		    (dt_clock_ms(CLOCK_MONOTONIC) - hc->t0_mono));
	} else if (err == ETIMEDOUT)
		hc_add(hc, "reach_err", "no answer from %s within %d s",
		    hc->target, HOSTCHECK_CONNECT_S);
	else
		hc_add(hc, "reach_err", "%s: %s", hc->target, strerror(err));
	hc_finish(hc);
}

/* ARGSUSED */
static void
hc_connect_cb(evutil_socket_t fd, short what, void *arg)
{
	struct hostcheck	*hc = arg;
	socklen_t		 l = sizeof(int);
	int			 err = 0;

	if (what & EV_TIMEOUT)
		err = ETIMEDOUT;
	else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l) == -1)
		err = errno;
	hc_probe_end(hc, err);
}

/* PROBE: connect to rank 0's listener at c->target (ADDR:PORT). */
static void
hc_probe(struct hostcheck *hc, const struct ap_check *c)
{
	struct sockaddr_in	 sin;
	struct timeval		 tv = { HOSTCHECK_CONNECT_S, 0 };
	const char		*colon = strrchr(c->target, ':');
	char			 addr[64];
	int			 port;

	snprintf(hc->target, sizeof(hc->target), "%s", c->target);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	if (colon == NULL || (size_t)(colon - c->target) >= sizeof(addr) ||
	    (port = atoi(colon + 1)) <= 0 || port > 65535) {
		hc_probe_end(hc, EINVAL);
		return;
	}
	snprintf(addr, sizeof(addr), "%.*s", (int)(colon - c->target),
	    c->target);
	sin.sin_port = htons(port);
	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1) {
		hc_probe_end(hc, EINVAL);
		return;
	}
	if ((hc->cfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1) {
		hc_probe_end(hc, errno);
		return;
	}
	if (connect(hc->cfd, (struct sockaddr *)&sin, sizeof(sin)) == 0) {
		hc_probe_end(hc, 0);
		return;
	}
	if (errno != EINPROGRESS) {
		hc_probe_end(hc, errno);
		return;
	}
	if ((hc->cev = event_new(hc->base, hc->cfd, EV_WRITE, hc_connect_cb,
	    hc)) == NULL) {
		hc_probe_end(hc, ENOMEM);
		return;
	}
	event_add(hc->cev, &tv);
}

/* The PAIR ended: its figures, or why there are none. */
static void
hc_pair_done(void *arg, const struct deep_result *r)
{
	struct hostcheck	*hc = arg;

	if (r->err != 0 && !r->capped)
		hc_add(hc, "pair_err", "%s", r->why);
	else if (r->bytes > 0 || r->us > 0) {
		hc_add(hc, "pair_bytes", "%llu", (unsigned long long)r->bytes);
		hc_add(hc, "pair_us", "%llu", (unsigned long long)r->us);
		if (r->capped)
			hc_add(hc, "pair_capped", "%d", DEEP_BULK_S);
	} else {
		hc_add(hc, "pair_rtt_us", "%llu", (unsigned long long)r->rtt_us);
		hc_add(hc, "pair_rtt_min_us", "%llu",
		    (unsigned long long)r->rtt_min_us);
		hc_add(hc, "pair_rtt_max_us", "%llu",
		    (unsigned long long)r->rtt_max_us);
	}
	deep_pair_free(hc->pair);
	hc->pair = NULL;
	hc_finish(hc);
}

/* PAIR: round trips, or bytes, to another host's pair listener. */
static void
hc_pair(struct hostcheck *hc, const struct ap_check *c)
{
	struct dt_err	e;
	uint8_t		key[DEEP_KEY_LEN];

	hc_add(hc, "pair_to", "%s", c->target);
	if (hc_key(c, key) != 0) {
		hc_add(hc, "pair_err", "the check sent no key for the pair "
		    "test: use the same dtrun version on every host");
		hc_finish(hc);
		return;
	}
	dt_err_clear(&e);
	hc->pair = deep_pair_start(hc->base, c->target, key, c->bytes,
	    c->streams, hc_pair_done, hc, &e);
	explicit_bzero(key, sizeof(key));
	if (hc->pair == NULL) {
		hc_add(hc, "pair_err", "%s", e.msg);
		hc_finish(hc);
	}
}

struct hostcheck *
hostcheck_new(struct event_base *base, int devnull, hostcheck_done_fn done,
    void *arg)
{
	struct hostcheck	*hc;

	if ((hc = calloc(1, sizeof(*hc))) == NULL)
		return NULL;
	hc->base = base;
	hc->devnull = devnull;
	hc->done = done;
	hc->arg = arg;
	hc->lfd = hc->cfd = hc->reserve = -1;
	return hc;
}

int
hostcheck_run(struct hostcheck *hc, const struct ap_check *c)
{
	if (hc->busy)
		return -1;
	hc->busy = 1;
	hc->step = c->step;
	hc->t0_real = dt_clock_ms(CLOCK_REALTIME);
	hc->t0_mono = dt_clock_ms(CLOCK_MONOTONIC);
	if (c->step == AP_CHK_PAIR)
		hc_pair(hc, c);
	else if (c->step == AP_CHK_PROBE)
		hc_probe(hc, c);
	else if (c->setup == NULL || c->setup[0] == '\0' ||
	    (c->flags & AP_CHK_FAST) || hc_setup_start(hc, c) != 0)
		hc_gather(hc, c);
	return 0;
}

int
hostcheck_reaped(struct hostcheck *hc, pid_t pid, int status)
{
	return hc != NULL && setup_reaped(hc->sub, pid, status);
}

void
hostcheck_close(struct hostcheck *hc)
{
	if (hc == NULL)
		return;
	if (hc->relisten != NULL) {
		event_free(hc->relisten);
		hc->relisten = NULL;
	}
	dt_event_close(&hc->lev, &hc->lfd);
	if (hc->reserve >= 0) {
		close(hc->reserve);
		hc->reserve = -1;
	}
	deep_srv_free(hc->deep);
	hc->deep = NULL;
}

void
hostcheck_free(struct hostcheck *hc)
{
	if (hc == NULL)
		return;
	hostcheck_close(hc);
	deep_pair_free(hc->pair);
	dt_event_close(&hc->cev, &hc->cfd);
	if (hc->sub_timer != NULL)
		event_free(hc->sub_timer);
	setup_free(hc->sub);
	dt_strv_free(hc->env);
	dt_strv_free(hc->kv);
	ap_check_free(&hc->ck);
	free(hc);
}
