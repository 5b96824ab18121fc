/*
 * backend_slurm.c -- agents on the nodes of a Slurm allocation, started by
 * Slurm itself.
 *
 * On the first host's start we listen on a TCP port, make a fresh agent
 * secret, and run one job step for every host at once:
 *
 *	srun --nodes=N --ntasks=N --ntasks-per-node=1 --nodelist=HOSTS
 *	     --kill-on-bad-exit=1 --mpi=none --export=ALL
 *	     dtrun-agent --connect ADDR:PORT
 *
 * The secret travels in srun's environment (AC_TOKEN_ENV), which srun
 * hands to each agent, never on a command line. Each agent dials back,
 * proves it knows the secret and says which node it is (connect.h); that
 * maps the connection to its host, and from then on it is the normal agent
 * protocol. Connections from unknown or already-connected nodes, or with a
 * wrong MAC, are dropped. Those that have not authenticated are bounded
 * per address and in all; at a bound the oldest goes, never the newcomer,
 * so idle connections cannot lock the agents out. A host whose agent has
 * not connected and said HELLO within --start-timeout, or when srun exits,
 * fails the job with its name; so does one srun reports ("srun: error:
 * NODE: task 1: Exited ...") before --kill-on-bad-exit's SIGTERM to the
 * other agents is taken for the cause.
 *
 * srun's own output (and the agents' complaints, which srun forwards) is
 * logged line by line. At the end srun is waited for and reaped: it exits
 * once every agent has; if some agent never connected, srun gets SIGTERM,
 * which makes it end the step on every node, no scancel needed.
 */
#include <sys/wait.h>

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "launcher/backend/agentbin.h"
#include "proto/agentproto.h"
#include "launcher/backend/child.h"
#include "launcher/cli/cli.h"
#include "host/procs.h"
#include "common/err.h"
#include "launcher/job/job.h"
#include "common/link.h"
#include "common/log.h"
#include "common/mac.h"
#include "common/sock.h"
#include "util/strv.h"
#include "common/sys.h"
#include "util/xmalloc.h"

#define HANDSHAKE_SECS	10	/* for one connection to prove itself */
#define SRUN_EXIT_SECS	5	/* for srun to end by itself after the job */
#define SRUN_TERM_SECS	10	/* then after SIGTERM, before SIGKILL */
#define ADDR_PROBE_MAX	16	/* hosts looked up to choose our address */
#define PENDING_PER_ADDR 32	/* handshaking connections from one address */
#define PENDING_SPARE	64	/* and in all, beyond one per host */

extern char **environ;

#include "launcher/backend/slurmint.h"

static void	slurm_fail_tasks(struct slurm *);
static void	slurm_kill(struct job_host *);
static void	slurm_end(struct slurm *);

/* Takes c off the list of handshaking connections. */
static void
sconn_unlist(struct sconn *c)
{
	struct slurm	*s = c->s;
	struct sconn	**pp;

	for (pp = &s->conns; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			s->nconns--;
			break;
		}
	}
}

/* Drops a connection that is not (or no longer) a host's. */
static void
sconn_drop(struct sconn *c)
{
	sconn_unlist(c);
	if (c->timer != NULL)
		event_free(c->timer);
	link_free(c->link);	/* closes fd; safe inside its callbacks */
	free(c);
}

/*
 * Says why a connection that has not authenticated was dropped: a warning,
 * unless a crowd of them is already known (then only with -vv, so a flood
 * cannot flood the terminal too).
 */
static void __attribute__((format(printf, 2, 3)))
sconn_log(struct slurm *s, const char *fmt, ...)
{
	va_list	ap;
	char	msg[1024];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (s->crowded)
		log_debug("%s", msg);
	else
		log_warn("%s", msg);
}

/*
 * Makes room for a connection from peer. Agents come once per host and
 * answer the challenge at once, so a crowd of handshaking connections is
 * not theirs: the oldest goes, from peer itself once it holds
 * PENDING_PER_ADDR, else from all (as the rendezvous server does). So a
 * new agent is never refused, and no one address pushes out another's.
 */
static void
slurm_make_room(struct slurm *s, const char *peer)
{
	struct sconn	*c, *oldest = NULL, *mine = NULL;
	size_t		 nmine = 0;

	for (c = s->conns; c != NULL; c = c->next) {
		oldest = c;
		if (strcmp(c->peer, peer) == 0) {
			mine = c;
			nmine++;
		}
	}
	if (nmine >= PENDING_PER_ADDR)
		c = mine;
	else if (s->nconns >= s->nhosts + PENDING_SPARE)
		c = oldest;
	else
		return;
	if (!s->crowded)
		log_warn("agent listener at %s: %zu connections that have not "
		    "authenticated, %zu from %s: dropping the oldest (not "
		    "dtrun's agents; drops are logged with -vv)", s->addr,
		    s->nconns, nmine, peer);
	s->crowded = 1;
	log_debug("agent connection from %s: never authenticated, dropped to "
	    "make room", c->peer);
	sconn_drop(c);
}

/* Finds the host named node that still waits for its agent. */
static struct job_host *
slurm_host(struct slurm *s, const char *node, const char **why)
{
	struct shost	*sh;
	size_t		 i;

	for (i = 0; i < s->nhosts; i++) {
		if (strcmp(s->hosts[i]->name, node) != 0)
			continue;
		sh = s->hosts[i]->priv;
		if (sh == NULL || host_done(s->hosts[i]))
			*why = "has no agent in this job any more";
		else if (sh->connected)
			*why = "already has its agent connected";
		else
			return s->hosts[i];
		return NULL;
	}
	*why = "is not a host of this job";
	return NULL;
}

/* ANSWER from a handshaking connection: check it, and give it its host. */
static void
sconn_answer(struct sconn *c, const uint8_t *p, size_t n)
{
	struct slurm		*s = c->s;
	struct ac_answer	 a;
	struct job_host		*h;
	struct shost		*sh;
	struct dt_wbuf		 b;
	const char		*why;
	uint8_t			 mac[AC_MAC_LEN];

	if (ac_get_answer(p, n, &a) != 0) {
		sconn_log(s, "agent connection from %s: bad handshake: dropped",
		    c->peer);
		sconn_drop(c);
		return;
	}
	if (!ac_mac_ok(s->secret, sizeof(s->secret), AC_ROLE_AGENT, c->snonce,
	    a.cnonce, a.node, a.mac)) {
		sconn_log(s, "agent connection from %s (node \"%s\") does not "
		    "know the job's agent secret: dropped", c->peer, a.node);
		free(a.node);
		sconn_drop(c);
		return;
	}
	if ((h = slurm_host(s, a.node, &why)) == NULL) {
		sconn_log(s, "agent connection from %s: node \"%s\" %s: "
		    "dropped", c->peer, a.node, why);
		free(a.node);
		sconn_drop(c);
		return;
	}
	ac_mac(s->secret, sizeof(s->secret), AC_ROLE_LAUNCHER, c->snonce,
	    a.cnonce, a.node, mac);
	free(a.node);
	dt_wbuf_init(&b);
	ac_put_welcome(&b, mac);
	link_send(c->link, b.p, b.len);
	dt_wbuf_free(&b);
	/* A fresh socket takes a WELCOME whole; one that does not is broken. */
	if (link_closed(c->link) || link_queued(c->link) > 0) {
		sconn_log(s, "agent connection from %s: cannot answer it: "
		    "dropped", c->peer);
		sconn_drop(c);
		return;
	}
	/* From here on it is the host's link: the job's frames that waited go first. */
	sh = h->priv;
	sh->fd = link_take_fd(c->link);
	c->link = NULL;
	log_debug("%s: agent connected from %s", h->name, c->peer);
	sconn_drop(c);
	sh->connected = 1;
	s->nconnected++;
	if (link_attach(sh->link, sh->fd, sh->fd) != 0)
		job_host_closed(h, DT_ERR_NOMEM, "out of memory");
}

/* A frame on a connection still proving itself: only its ANSWER. */
static void
sconn_frame(void *arg, uint8_t type, const uint8_t *p, size_t n)
{
	struct sconn	*c = arg;

	if (type != AC_ANSWER) {
		sconn_log(c->s, "agent connection from %s: %s before the "
		    "handshake: dropped", c->peer, ap_type_name(type));
		sconn_drop(c);
		return;
	}
	sconn_answer(c, p, n);
}

/* An agent connection ended. */
static void
sconn_close(void *arg, int err, const char *why)
{
	sconn_drop(arg);
}

/* A frame from h's agent. */
static void
shost_frame(void *arg, uint8_t type, const uint8_t *p, size_t n)
{
	job_host_frame(arg, type, p, n);
}

/* h's agent connection ended. */
static void
shost_close(void *arg, int err, const char *why)
{
	struct job_host	*h = arg;
	struct shost	*sh = h->priv;

	/* Slurm ending the step after another agent failed: that one first. */
	if (event_pending(sh->s->task_timer, EV_TIMEOUT, NULL))
		slurm_fail_tasks(sh->s);
	job_host_closed(h, err, why);
}

/* ARGSUSED */
static void
sconn_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sconn	*c = arg;

	sconn_log(c->s, "agent connection from %s: no handshake within %d s: "
	    "dropped", c->peer, HANDSHAKE_SECS);
	sconn_drop(c);
}

/* Takes one new connection: challenges it. */
static void
sconn_new(struct slurm *s, int fd, const struct sockaddr_storage *ss)
{
	struct sconn	*c;
	struct link_cbs	 cbs;
	struct dt_wbuf	 b;
	struct timeval	 tv = { HANDSHAKE_SECS, 0 };
	char		 host[INET6_ADDRSTRLEN];

	if (getnameinfo((const struct sockaddr *)ss, sizeof(*ss), host,
	    sizeof(host), NULL, 0, NI_NUMERICHOST) != 0)
		snprintf(host, sizeof(host), "?");
	slurm_make_room(s, host);
	sock_nodelay(fd);
	c = xcalloc(1, sizeof(*c));
	c->s = s;
	c->fd = fd;
	snprintf(c->peer, sizeof(c->peer), "%s", host);
	cbs.frame = sconn_frame;
	cbs.close = sconn_close;
	cbs.drain = NULL;
	cbs.arg = c;
	if (dt_random(c->snonce, sizeof(c->snonce)) != 0 ||
	    (c->link = link_new(s->base, fd, fd, AP_FRAME_MAX, &cbs)) == NULL) {
		close(fd);
		free(c);
		return;
	}
	c->timer = evtimer_new(s->base, sconn_timeout_cb, c);
	event_add(c->timer, &tv);
	c->next = s->conns;
	s->conns = c;
	s->nconns++;
	dt_wbuf_init(&b);
	ac_put_challenge(&b, c->snonce);
	link_send(c->link, b.p, b.len);
	dt_wbuf_free(&b);
}

static void	slurm_fail_waiting(struct slurm *, const char *);

/*
 * The agents' listener is readable. Out of descriptors, an agent that
 * cannot be accepted would wait until --start-timeout (and the listener
 * spin meanwhile): fail the hosts still to connect now, saying why.
 */
/* ARGSUSED */
static void
slurm_accept_cb(evutil_socket_t lfd, short what, void *arg)
{
	struct slurm		*s = arg;
	struct sockaddr_storage	 ss;
	socklen_t		 sl;
	char			 msg[512];
	int			 fd;

	for (;;) {
		sl = sizeof(ss);
		fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK |
		    SOCK_CLOEXEC);
		if (fd >= 0) {
			sconn_new(s, fd, &ss);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (dt_nofile(errno)) {
			event_del(s->lev);
			slurm_fail_waiting(s, dt_nofile_msg(msg, sizeof(msg),
			    "accepting the agents' connections", errno));
		}
		return;
	}
}

/* Fails the doomed hosts whose agent has not connected, each named with msg. */
static void
slurm_fail_doomed(struct slurm *s, const char *msg)
{
	struct job_host	*h;
	struct shost	*sh;
	size_t		 i;

	/* The first failure stops the job: its STOPs must not pre-empt msg. */
	s->failing = 1;
	for (i = 0; i < s->nhosts; i++) {
		h = s->hosts[i];
		sh = h->priv;
		if (!host_done(h) && sh != NULL && !sh->connected && sh->doomed)
			job_host_closed(h, DT_ERR_CLOSED, msg);
	}
	s->failing = 0;
}

/* Fails every host whose agent has not connected, each named with msg. */
static void
slurm_fail_waiting(struct slurm *s, const char *msg)
{
	struct shost	*sh;
	size_t		 i;

	for (i = 0; i < s->nhosts; i++)
		if ((sh = s->hosts[i]->priv) != NULL && !sh->connected)
			sh->doomed = 1;
	slurm_fail_doomed(s, msg);
}

/*
 * srun said agents ended before connecting: fail their hosts, quoting
 * srun. The reason (slurmstepd's execve error, the agent's complaint)
 * trails srun's own line: give it a moment if it has not come yet.
 */
static void
slurm_fail_tasks(struct slurm *s)
{
	struct pollfd	pfd;
	char		msg[1280];
	int		i;

	event_del(s->task_timer);
	srun_read(s);
	for (i = 0; i < TASK_FAIL_MS / 10 && s->last_worth < 2 &&
	    s->ofd >= 0; i++) {
		pfd.fd = s->ofd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 10) > 0)
			srun_read(s);
	}
	snprintf(msg, sizeof(msg), "its dtrun-agent ended before connecting "
	    "to dtrun: %s", s->last);
	slurm_fail_doomed(s, msg);
}

/* ARGSUSED */
static void
slurm_task_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	slurm_fail_tasks(arg);
}

/* ARGSUSED */
static void
slurm_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct slurm	*s = arg;
	char		 msg[1280];

	struct job_host	*h;
	struct shost	*sh;
	size_t		 i;

	snprintf(msg, sizeof(msg), "its dtrun-agent did not connect to dtrun "
	    "at %s within %g s (--start-timeout)%s%s", s->addr,
	    s->hosts[0]->o->start_timeout, s->last[0] ? "; srun said: " : "",
	    s->last);
	slurm_fail_waiting(s, msg);
	/* Connected, but silent or saying something else: as bad. */
	snprintf(msg, sizeof(msg), "its dtrun-agent connected but did not say "
	    "HELLO within %g s (--start-timeout)",
	    s->hosts[0]->o->start_timeout);
	for (i = 0; i < s->nhosts; i++) {
		h = s->hosts[i];
		if (host_done(h) || host_hello(h) || (sh = h->priv) == NULL ||
		    !sh->connected)
			continue;
		slurm_kill(h);
		job_host_closed(h, DT_ERR_TIMEOUT, msg);
	}
}

/* True if sa is a loopback address. */
static int
is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr)
		    >> 24) == 127;
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(
		    &((const struct sockaddr_in6 *)sa)->sin6_addr);
	return 0;
}

/*
 * Chooses the address agents dial: $DTRUN_CONNECT_ADDR; else our source
 * address on the route to the first host that is not loopback; else
 * loopback if every host is (a one-machine cluster); else our hostname.
 * Sets *family for the listener and *local when loopback will do.
 */
static void
slurm_pick_addr(struct slurm *s, char *buf, size_t len, int *family,
    int *local)
{
	struct addrinfo		 hints, *ai;
	struct sockaddr_storage	 ss;
	socklen_t		 sl;
	const char		*env = getenv("DTRUN_CONNECT_ADDR");
	size_t			 i, nloop = 0;
	int			 fd, found = 0;

	*family = AF_INET;
	*local = 0;
	if (env != NULL && *env != '\0') {
		snprintf(buf, len, "%s", env);
		*family = strchr(env, ':') != NULL ? AF_INET6 : AF_INET;
		return;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_DGRAM;
	for (i = 0; i < s->nhosts && i < ADDR_PROBE_MAX && !found; i++) {
		if (getaddrinfo(s->hosts[i]->name, "9", &hints, &ai) != 0)
			continue;
		if (is_loopback(ai->ai_addr))
			nloop++;
		else if ((fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC,
		    0)) != -1) {
			/* A UDP "connect" sends nothing; it picks the route. */
			sl = sizeof(ss);
			if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
			    getsockname(fd, (struct sockaddr *)&ss, &sl) == 0 &&
			    getnameinfo((struct sockaddr *)&ss, sl, buf, len,
			    NULL, 0, NI_NUMERICHOST) == 0) {
				*family = ss.ss_family;
				found = 1;
			}
			close(fd);
		}
		freeaddrinfo(ai);
	}
	if (found)
		return;
	if (nloop > 0 && nloop == s->nhosts) {
		snprintf(buf, len, "127.0.0.1");
		*local = 1;
	} else if (gethostname(buf, len) != 0)
		snprintf(buf, len, "localhost");
}

/* Opens the listener agents dial and sets s->addr. Returns 0 or an error. */
static int
slurm_listen(struct slurm *s, struct dt_err *e)
{
	struct sockaddr_storage	 ss;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&ss;
	struct addrinfo		 ai;
	char			 host[256];
	int			 family, local, port;

	slurm_pick_addr(s, host, sizeof(host), &family, &local);
	memset(&ss, 0, sizeof(ss));
	memset(&ai, 0, sizeof(ai));
	ss.ss_family = family;
	if (family == AF_INET6) {
		sin6->sin6_addr = in6addr_any;
		ai.ai_addrlen = sizeof(*sin6);
	} else {
		sin->sin_addr.s_addr = htonl(local ? INADDR_LOOPBACK :
		    INADDR_ANY);
		ai.ai_addrlen = sizeof(*sin);
	}
	ai.ai_family = family;
	ai.ai_socktype = SOCK_STREAM;
	ai.ai_addr = (struct sockaddr *)&ss;
	if ((s->lfd = sock_listen(&ai, DT_BACKLOG_HOSTS)) == -1 ||
	    (port = sock_port(s->lfd)) < 0)
		return dt_errf(e, NULL, 0, 0, DT_ERR_SYS, "cannot listen for "
		    "agents: %s", strerror(errno));
	snprintf(s->addr, sizeof(s->addr), strchr(host, ':') != NULL ?
	    "[%s]:%d" : "%s:%d", host, port);
	s->lev = event_new(s->base, s->lfd, EV_READ | EV_PERSIST,
	    slurm_accept_cb, s);
	event_add(s->lev, NULL);
	log_debug("agents connect to %s", s->addr);
	return 0;
}

/* srun's command line: one agent on each of the job's hosts. */
static void
slurm_argv(struct slurm *s, const char *srun, const char *agent,
    struct strv *av)
{
	size_t	 i, len = 0;
	char	*list, *p;

	for (i = 0; i < s->nhosts; i++)
		len += strlen(s->hosts[i]->name) + 1;
	list = p = xmalloc(len + 1);
	for (i = 0; i < s->nhosts; i++)
		p += sprintf(p, "%s%s", i ? "," : "", s->hosts[i]->name);
	strv_addf(av, "%s", srun);
	strv_addf(av, "--nodes=%zu", s->nhosts);
	strv_addf(av, "--ntasks=%zu", s->nhosts);
	strv_addf(av, "--ntasks-per-node=1");
	strv_addf(av, "--nodelist=%s", list);
	strv_addf(av, "--kill-on-bad-exit=1");
	/* The agents are not MPI processes; their ranks bring their own. */
	strv_addf(av, "--mpi=none");
	/* The secret is in our environment: make sure srun passes it on. */
	strv_addf(av, "--export=ALL");
	strv_addf(av, "--job-name=dtrun-agent");
	strv_addf(av, "%s", agent);
	strv_addf(av, "--connect");
	strv_addf(av, "%s", s->addr);
	free(list);
}

/* Starts srun with the secret in its environment and its output on a pipe. */
static int
slurm_spawn(struct slurm *s, struct dt_err *e)
{
	struct strv		 av = { 0 }, ev = { 0 };
	const char		*srun = getenv("DTRUN_SRUN");
	char			 agent[PATH_MAX];
	char			 tok[2 * AC_SECRET_LEN + 1];
	size_t			 i, n;
	int			 pfd[2], rc;

	if ((rc = agentbin_path(agent, sizeof(agent), e)) != 0)
		return rc;
	if (srun == NULL || *srun == '\0')
		srun = "srun";
	if (pipe2(pfd, O_CLOEXEC) == -1)
		return dt_errf(e, NULL, 0, 0, DT_ERR_SYS, "pipe: %s",
		    strerror(errno));
	slurm_argv(s, srun, agent, &av);
	n = strlen(AC_TOKEN_ENV);
	for (i = 0; environ[i] != NULL; i++)
		if (strncmp(environ[i], AC_TOKEN_ENV, n) != 0 ||
		    environ[i][n] != '=')
			strv_addf(&ev, "%s", environ[i]);
	dt_hex_encode(s->secret, sizeof(s->secret), tok, sizeof(tok));
	strv_setf(&ev, AC_TOKEN_ENV, "%s", tok);
	explicit_bzero(tok, sizeof(tok));

	rc = child_spawn(&s->srun, srun, av.v, ev.v, -1, pfd[1], pfd[1]);
	for (i = 0; i < ev.n; i++)
		if (strncmp(ev.v[i], AC_TOKEN_ENV "=", n + 1) == 0)
			explicit_bzero(ev.v[i], strlen(ev.v[i]));
	strv_free(&av);
	strv_free(&ev);
	close(pfd[1]);
	if (rc != 0) {
		close(pfd[0]);
		s->srun = 0;
		return dt_errf(e, NULL, 0, 0, DT_ERR_SYS, "cannot run %s: %s%s",
		    srun, strerror(rc), rc == ENOENT ? " (is Slurm installed "
		    "here? DTRUN_SRUN names another srun)" : "");
	}
	s->ofd = pfd[0];
	fcntl(s->ofd, F_SETFL, fcntl(s->ofd, F_GETFL) | O_NONBLOCK);
	s->obuf = evbuffer_new();
	s->oev = event_new(s->base, s->ofd, EV_READ | EV_PERSIST, srun_read_cb,
	    s);
	event_add(s->oev, NULL);
	log_debug("srun pid %d: %zu agent%s", (int)s->srun, s->nhosts,
	    s->nhosts == 1 ? "" : "s");
	return 0;
}

/* Frees what slurm_setup made; srun must be gone or never started. */
static void
slurm_free(struct slurm *s)
{
	while (s->conns != NULL)
		sconn_drop(s->conns);
	if (s->lev != NULL)
		event_free(s->lev);
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->timer != NULL)
		event_free(s->timer);
	if (s->task_timer != NULL)
		event_free(s->task_timer);
	if (s->oev != NULL)
		event_free(s->oev);
	if (s->ofd >= 0)
		close(s->ofd);
	if (s->obuf != NULL)
		evbuffer_free(s->obuf);
	explicit_bzero(s->secret, sizeof(s->secret));
	free(s->hosts);
	free(s);
}

/* The shared part, made by the first host: secret, listener, srun, timer. */
static struct slurm *
slurm_setup(struct job_host *h, struct dt_err *e)
{
	struct job_host	**hosts;
	struct slurm	*s;
	struct timeval	 tv;
	double		 t = h->o->start_timeout;

	s = xcalloc(1, sizeof(*s));
	s->base = job_base(h);
	/* The hosts outlive the attempt (job.h): keep them, not its array. */
	hosts = job_hosts(h, &s->nhosts);
	s->hosts = xreallocarray(NULL, s->nhosts, sizeof(*s->hosts));
	memcpy(s->hosts, hosts, s->nhosts * sizeof(*s->hosts));
	s->lfd = s->ofd = -1;
	if (dt_random(s->secret, sizeof(s->secret)) != 0) {
		dt_errf(e, NULL, 0, 0, DT_ERR_SYS, "getrandom: %s",
		    strerror(errno));
		slurm_free(s);
		return NULL;
	}
	if (slurm_listen(s, e) != 0 || slurm_spawn(s, e) != 0) {
		slurm_free(s);
		return NULL;
	}
	s->timer = evtimer_new(s->base, slurm_timeout_cb, s);
	s->task_timer = evtimer_new(s->base, slurm_task_timer_cb, s);
	if (t > 0) {
		tv.tv_sec = (time_t)t;
		tv.tv_usec = (suseconds_t)((t - tv.tv_sec) * 1e6);
		event_add(s->timer, &tv);
	}
	return s;
}

static int
slurm_start(struct job_host *h, struct dt_err *e)
{
	struct job_host	**hosts;
	struct shost	*sh;
	struct slurm	*s;
	size_t		 n;

	/* The first host starts them all; the others share its srun. */
	hosts = job_hosts(h, &n);
	if (h == hosts[0]) {
		if ((s = slurm_setup(h, e)) == NULL)
			return e->code;
	} else if (hosts[0]->priv == NULL)
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "srun was not "
		    "started");
	else
		s = ((struct shost *)hosts[0]->priv)->s;
	sh = xcalloc(1, sizeof(*sh));
	sh->s = s;
	sh->fd = -1;
	if ((sh->link = link_new_later(s->base, AP_FRAME_MAX,
	    &(struct link_cbs){ shost_frame, shost_close, NULL, h })) == NULL) {
		free(sh);
		if (h == hosts[0])
			slurm_end(s);	/* ends the srun just started */
		return dt_errf(e, NULL, 0, 0, DT_ERR_NOMEM, "out of memory");
	}
	s->refs++;
	h->priv = sh;
	h->link = sh->link;
	return 0;
}

/*
 * The job stops before h's agent connected: nothing will run there, and
 * srun's step ends when we are done. A host srun said is failing is left
 * to slurm_fail_doomed, which names why.
 */
static int
slurm_unreached(struct job_host *h)
{
	struct shost	*sh = h->priv;

	return sh != NULL && !sh->connected && !(sh->s->failing && sh->doomed);
}

/* What the job heard from h's agent. */
static void
slurm_news(struct job_host *h, int what)
{
	struct shost	*sh = h->priv;
	struct slurm	*s = sh->s;

	/*
	 * With --kill-on-bad-exit, an agent that failed to start makes Slurm
	 * stop the others, which then report SIGTERM: name the cause first.
	 */
	if (what == JN_ERROR && event_pending(s->task_timer, EV_TIMEOUT, NULL))
		slurm_fail_tasks(s);
	/* --start-timeout waits for every agent's HELLO, not less. */
	if (what == JN_HELLO && ++s->nhello == s->nhosts)
		event_del(s->timer);
}

static void
slurm_kill(struct job_host *h)
{
	struct shost	*sh = h->priv;

	/* The agent sees its link close and stops its ranks itself. */
	if (sh != NULL && sh->connected)
		shutdown(sh->fd, SHUT_RDWR);
}

static void
slurm_reaped(struct job_host *h, pid_t pid, int status)
{
	struct shost	*sh = h->priv;
	struct slurm	*s;
	char		 how[64], msg[1280];

	if (sh == NULL || (s = sh->s)->srun != pid || pid <= 0)
		return;
	s->srun = 0;
	srun_read(s);		/* its last words, before we name them */
	if (WIFSIGNALED(status))
		snprintf(how, sizeof(how), "was killed by signal %d",
		    WTERMSIG(status));
	else
		snprintf(how, sizeof(how), "exited with code %d",
		    WEXITSTATUS(status));
	log_debug("srun %s", how);
	if (s->nconnected == s->nhosts)
		return;		/* the agents' links tell the rest */
	if (event_pending(s->task_timer, EV_TIMEOUT, NULL))
		slurm_fail_tasks(s);	/* srun named those nodes */
	snprintf(msg, sizeof(msg), "srun %s before this node's dtrun-agent "
	    "connected%s%s", how, s->last[0] ? ": " : "", s->last);
	slurm_fail_waiting(s, msg);
}

/*
 * Waits up to secs for srun to exit, logging its output; 1 if it has.
 * One poll on its pipe and its pidfd wakes at either; only a kernel
 * without pidfds (before 5.3) has it look at its exit every 10 ms.
 */
static int
srun_wait(struct slurm *s, int secs)
{
	struct pollfd	pfd[2];
	uint64_t	now, end = dt_clock_ms(CLOCK_MONOTONIC) +
			    (uint64_t)secs * 1000;
	int		pidfd = proc_pidfd(s->srun), n, ms, done = 0;

	for (;;) {
		/* ECHILD: reaped already, the pidfd would wake us forever. */
		if (waitpid(s->srun, NULL, WNOHANG) == s->srun ||
		    errno == ECHILD) {
			s->srun = 0;
			srun_read(s);
			done = 1;
			break;
		}
		if ((now = dt_clock_ms(CLOCK_MONOTONIC)) >= end)
			break;
		ms = end - now > INT_MAX ? INT_MAX : (int)(end - now);
		if (pidfd < 0 && ms > 10)
			ms = 10;
		n = 0;
		if (pidfd >= 0) {
			pfd[n].fd = pidfd;
			pfd[n++].events = POLLIN;
		}
		if (s->ofd >= 0) {
			pfd[n].fd = s->ofd;
			pfd[n++].events = POLLIN;
		}
		if (poll(pfd, n, ms) > 0 && s->ofd >= 0 &&
		    pfd[n - 1].revents != 0)
			srun_read(s);
	}
	if (pidfd >= 0)
		close(pidfd);
	return done;
}

/* The job is over: srun ends when its agents have; it must not outlive us. */
static void
slurm_end(struct slurm *s)
{
	if (s->srun > 0 && !srun_wait(s, s->nconnected == s->nhosts ?
	    SRUN_EXIT_SECS : 0)) {
		/* srun cancels its step on every node: no scancel needed. */
		log_debug("srun pid %d still running: SIGTERM", (int)s->srun);
		s->quiet = 1;
		kill(s->srun, SIGTERM);
		if (!srun_wait(s, SRUN_TERM_SECS)) {
			/* The step is cancelled; srun just awaits the news. */
			log_warn("srun pid %d still waiting for its step to "
			    "end %d s after SIGTERM: killing it", (int)s->srun,
			    SRUN_TERM_SECS);
			kill(s->srun, SIGKILL);
			waitpid(s->srun, NULL, 0);
			s->srun = 0;
		}
	}
	slurm_free(s);
}

static void
slurm_hfree(struct job_host *h)
{
	struct shost	*sh = h->priv;
	struct slurm	*s;

	if (sh == NULL)
		return;
	s = sh->s;
	link_free(sh->link);	/* closes the agent's connection */
	free(sh);
	h->priv = NULL;
	if (--s->refs == 0)
		slurm_end(s);
}

const struct backend backend_slurm = {
	.name = "slurm",
	.reuse = BE_REUSE_ALL,
	.start = slurm_start,
	.unreached = slurm_unreached,
	.news = slurm_news,
	.kill = slurm_kill,
	.reaped = slurm_reaped,
	.free = slurm_hfree,
};
