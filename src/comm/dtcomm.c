/*
 * dtcomm.c -- libdtcomm: a worker's side of the dtrun rendezvous. Reads
 * DTRUN_RDZV_* (dtcomm.h), joins, and shares NCCL unique ids through the
 * key-value store under "dtrun/nccl-id/<i>".
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "common/sock.h"
#include "rendezvous/proto.h"
#include "rendezvous/auth.h"
#include "rendezvous/client.h"
#include "comm/dtcomm.h"
#include "comm/dtnccl.h"

#define DEFAULT_TIMEOUT		1800.0		/* seconds, as TCPStore's */
#define MAX_NCCL_IDS		1024
#define ID_KEY			"dtrun/nccl-id/%d"

_Static_assert(DTCOMM_ERR_AUTH == DT_ERR_AUTH &&
    DTCOMM_ERR_ABORTED == DT_ERR_ABORTED && DTCOMM_ERR_CLOSED == DT_ERR_CLOSED &&
    DTCOMM_ERR_TIMEOUT == DT_ERR_TIMEOUT && DTCOMM_ERR_RANGE == DT_ERR_RANGE &&
    DTCOMM_ERR_INVAL == DT_ERR_INVAL && DTCOMM_ERR_PROTO == DT_ERR_PROTO &&
    DTCOMM_ERR_NOTFOUND == DT_ERR_NOTFOUND, "dtcomm.h codes match err.h");
_Static_assert(DTCOMM_ID_BYTES == DTNCCL_ID_BYTES, "one id size");

struct dtcomm {
	struct rdzv_client	*cl;
	struct rdzv_join_info	 ji;
	int			 nids;
	uint8_t			*ids;		/* nids ids, once fetched */
	int			 prog_fd;	/* DTRUN_PROGRESS; -1: not yet,
						   -2: none */
};

static __thread char	last_error[sizeof(((struct dt_err *)0)->msg)];

/* Records e as this thread's last error and returns its code. */
static int
comm_fail(const struct dt_err *e, int rc)
{
	snprintf(last_error, sizeof(last_error), "%s", e->msg);
	return rc;
}

/* Records a message as this thread's last error and returns code. */
static int
comm_failf(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
comm_failf(int code, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return code;
}

/*
 * Reads an integer environment variable into *v (unchanged when unset).
 * Returns 1 if set, 0 if not, or DT_ERR_PARSE.
 */
static int
env_int(const char *name, long lo, long hi, long *v)
{
	const char	*s = getenv(name);
	char		*end;
	long		 n;

	if (s == NULL || *s == '\0')
		return 0;
	errno = 0;
	n = strtol(s, &end, 10);
	if (*end != '\0' || errno != 0 || n < lo || n > hi)
		return comm_failf(DT_ERR_PARSE, "%s=\"%s\" is not a number "
		    "from %ld to %ld", name, s, lo, hi);
	*v = n;
	return 1;
}

/* The local rank from the first of the usual variables that is set. */
static int
env_local_rank(long *lr)
{
	static const char *const names[] = { "DTRUN_LOCAL_RANK", "LOCAL_RANK",
	    "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK" };
	size_t	i;
	int	rc;

	*lr = -1;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if ((rc = env_int(names[i], 0, INT_MAX, lr)) != 0)
			return rc < 0 ? rc : 0;
	return 0;
}

/*
 * Connects to DTRUN_RDZV_ADDR: through this host's agent, or to dtrun's
 * server, authenticated with DTRUN_RDZV_TOKEN.
 */
static int
comm_connect(struct dtcomm *c)
{
	const char	*addr = getenv("DTRUN_RDZV_ADDR");
	const char	*tok = getenv("DTRUN_RDZV_TOKEN");
	uint8_t		 secret[RDZV_SECRET_MAX];
	size_t		 slen;
	struct dt_err	 e;
	double		 timeout = DEFAULT_TIMEOUT;
	long		 t;
	int		 rc, agent;

	/* Through this host's agent ("unix:@..."): no secret here. */
	agent = addr != NULL && strncmp(addr, "unix:@", 6) == 0;
	if (addr == NULL || *addr == '\0' || (!agent && (tok == NULL ||
	    *tok == '\0')))
		return comm_failf(DTCOMM_ERR_NOENV, "%s is not set: start this "
		    "program with dtrun", addr == NULL || *addr == '\0' ?
		    "DTRUN_RDZV_ADDR" : "DTRUN_RDZV_TOKEN");
	if ((rc = env_int("DTRUN_RDZV_TIMEOUT", 0, INT_MAX, &t)) < 0)
		return rc;
	if (rc > 0)
		timeout = (double)t;
	slen = 0;
	if (!agent && (rc = rdzv_token_decode(tok, secret, sizeof(secret),
	    &slen, &e)) != 0)
		return comm_failf(rc, "DTRUN_RDZV_TOKEN: %s", e.msg);
	rc = rdzv_client_connect(addr, secret, slen, timeout, &c->cl, &e);
	explicit_bzero(secret, sizeof(secret));
	return rc != 0 ? comm_fail(&e, rc) : 0;
}

int
dtcomm_init(struct dtcomm **cp)
{
	struct dtcomm	*c;
	struct dt_err	 e;
	char		 hostbuf[RDZV_MAX_HOST + 1];
	const char	*host = getenv("DTRUN_HOST");
	long		 rank = -1, lr, nids = 1;
	int		 rc;

	last_error[0] = '\0';
	*cp = NULL;
	if ((rc = env_int("DTRUN_RANK", 0, INT_MAX, &rank)) < 0 ||
	    (rc = env_local_rank(&lr)) < 0 ||
	    (rc = env_int("DTRUN_NCCL_IDS", 1, MAX_NCCL_IDS, &nids)) < 0)
		return rc;
	if (host == NULL || *host == '\0') {
		if (gethostname(hostbuf, sizeof(hostbuf)) != 0)
			return comm_failf(DT_ERR_SYS, "gethostname: %s",
			    strerror(errno));
		hostbuf[sizeof(hostbuf) - 1] = '\0';
		host = hostbuf;
	}
	if (rank < 0 && lr < 0)
		return comm_failf(DT_ERR_INVAL, "neither DTRUN_RANK nor a local "
		    "rank (DTRUN_LOCAL_RANK, LOCAL_RANK, SLURM_LOCALID) is set");
	if ((c = calloc(1, sizeof(*c))) != NULL)
		c->prog_fd = -1;
	if (c == NULL)
		return comm_failf(DT_ERR_NOMEM, "out of memory");
	if ((rc = comm_connect(c)) != 0) {
		free(c);
		return rc;
	}
	if ((rc = rdzv_client_join(c->cl, (int)rank, host, (int)lr, &c->ji,
	    &e)) != 0) {
		dtcomm_free(c);
		return comm_fail(&e, rc);
	}
	c->nids = nids > c->ji.world ? c->ji.world : (int)nids;
	*cp = c;
	return 0;
}

int
dtcomm_rank(const struct dtcomm *c)
{
	return c->ji.rank;
}

int
dtcomm_size(const struct dtcomm *c)
{
	return c->ji.world;
}

int
dtcomm_local_rank(const struct dtcomm *c)
{
	return c->ji.local_rank;
}

int
dtcomm_local_size(const struct dtcomm *c)
{
	return c->ji.local_world;
}

int
dtcomm_node_rank(const struct dtcomm *c)
{
	return c->ji.node_rank;
}

int
dtcomm_num_nodes(const struct dtcomm *c)
{
	return c->ji.nnodes;
}

/* The rank that makes id i of k: the first of the i-th of k groups. */
static int
id_root(int i, int k, int world)
{
	int	per = world / k, extra = world % k;

	return i * per + (i < extra ? i : extra);
}

/*
 * Makes id i with NCCL and publishes it. If NCCL fails, publishes "!" and
 * the reason instead (never 128 bytes long), so the ranks waiting for the
 * id fail with that reason rather than wait for ever.
 */
static int
comm_make_id(struct dtcomm *c, int i, uint8_t *id, struct dt_err *e)
{
	struct dt_err	ignore;
	char		key[32], why[DTCOMM_ID_BYTES - 1];
	int		rc;

	snprintf(key, sizeof(key), ID_KEY, i);
	if ((rc = dtnccl_unique_id(id, e)) != 0) {
		snprintf(why, sizeof(why), "!%.*s", (int)sizeof(why) - 2, e->msg);
		rdzv_client_set(c->cl, key, why, strlen(why), &ignore);
		return rc;
	}
	return rdzv_client_set(c->cl, key, id, DTCOMM_ID_BYTES, e);
}

/* Makes (if ours) and fetches every id once; they are cached in c. */
static int
comm_fetch_ids(struct dtcomm *c)
{
	struct dt_err	 e;
	char		 key[32];
	uint8_t		*ids;
	size_t		 n;
	int		 i, rc, mine = -1;

	if (c->ids != NULL)
		return 0;
	if ((ids = calloc(c->nids, DTCOMM_ID_BYTES)) == NULL)
		return comm_failf(DT_ERR_NOMEM, "out of memory");
	for (i = 0; i < c->nids; i++)
		if (id_root(i, c->nids, c->ji.world) == c->ji.rank)
			mine = i;
	if (mine >= 0 && (rc = comm_make_id(c, mine, ids + (size_t)mine *
	    DTCOMM_ID_BYTES, &e)) != 0)
		goto fail;
	for (i = 0; i < c->nids; i++) {
		if (i == mine)
			continue;
		snprintf(key, sizeof(key), ID_KEY, i);
		if ((rc = rdzv_client_get(c->cl, key, 1, ids + (size_t)i *
		    DTCOMM_ID_BYTES, DTCOMM_ID_BYTES, &n, &e)) != 0)
			goto fail;
		if (n != DTCOMM_ID_BYTES) {
			/* The maker failed and left its reason instead. */
			ids[n < DTCOMM_ID_BYTES ? n : DTCOMM_ID_BYTES - 1] = 0;
			rc = comm_failf(DTCOMM_ERR_NCCL, "rank %d could not make "
			    "NCCL id %d: %s", id_root(i, c->nids, c->ji.world),
			    i, n > 1 && ids[0] == '!' ? (char *)ids + 1 :
			    "no reason given");
			free(ids);
			return rc;
		}
	}
	c->ids = ids;
	return 0;
fail:
	free(ids);
	return comm_fail(&e, rc);
}

int
dtcomm_nccl_id(struct dtcomm *c, void *id)
{
	int	rc;

	if ((rc = comm_fetch_ids(c)) != 0)
		return rc;
	memcpy(id, c->ids, DTCOMM_ID_BYTES);
	return 0;
}

int
dtcomm_nccl_ids(struct dtcomm *c, void *ids, int max)
{
	int	rc;

	if ((rc = comm_fetch_ids(c)) != 0)
		return rc;
	if (max > 0)
		memcpy(ids, c->ids, (size_t)(max < c->nids ? max : c->nids) *
		    DTCOMM_ID_BYTES);
	return c->nids;
}

int
dtcomm_nccl_comm(struct dtcomm *c, void *comm_out)
{
	struct dt_err	e;
	int		rc;

	/* Fail early and clearly where NCCL is missing, before any wait. */
	if ((rc = dtnccl_load(&e)) != 0)
		return comm_fail(&e, rc);
	if ((rc = comm_fetch_ids(c)) != 0)
		return rc;
	if ((rc = dtnccl_comm_init(comm_out, c->ji.world, c->ji.rank, c->ids,
	    c->nids, &e)) != 0)
		return comm_fail(&e, rc);
	return 0;
}

int
dtcomm_barrier(struct dtcomm *c)
{
	struct dt_err	e;
	int		rc;

	if ((rc = rdzv_client_barrier(c->cl, &e)) != 0)
		return comm_fail(&e, rc);
	return 0;
}

/* Checks a key from the user: a C string of 1 to RDZV_MAX_KEY bytes. */
static int
comm_key(const char *key)
{
	size_t	n = key == NULL ? 0 : strlen(key);

	if (n == 0 || n > RDZV_MAX_KEY)
		return comm_failf(DT_ERR_INVAL, "a key has 1 to %d bytes",
		    RDZV_MAX_KEY);
	return 0;
}

int
dtcomm_kv_set(struct dtcomm *c, const char *key, const void *val, size_t len)
{
	struct dt_err	e;
	int		rc;

	if ((rc = comm_key(key)) != 0)
		return rc;
	if (len > RDZV_MAX_VALUE)
		return comm_failf(DT_ERR_INVAL, "a value has at most %d bytes",
		    RDZV_MAX_VALUE);
	if ((rc = rdzv_client_set(c->cl, key, val, len, &e)) != 0)
		return comm_fail(&e, rc);
	return 0;
}

int
dtcomm_kv_get(struct dtcomm *c, const char *key, void *buf, size_t cap,
    size_t *len)
{
	struct dt_err	e;
	int		rc;

	if ((rc = comm_key(key)) != 0)
		return rc;
	if ((rc = rdzv_client_get(c->cl, key, 1, buf, cap, len, &e)) != 0)
		return comm_fail(&e, rc);
	return 0;
}

int
dtcomm_kv_add(struct dtcomm *c, const char *key, long long delta,
    long long *out)
{
	struct dt_err	e;
	int64_t		v;
	int		rc;

	if ((rc = comm_key(key)) != 0)
		return rc;
	if ((rc = rdzv_client_add(c->cl, key, delta, &v, &e)) != 0)
		return comm_fail(&e, rc);
	*out = v;
	return 0;
}

int
dtcomm_heartbeat(struct dtcomm *c)
{
	struct dt_err	e;
	int		rc;

	if ((rc = rdzv_client_ping(c->cl, &e)) != 0)
		return comm_fail(&e, rc);
	return 0;
}

/*
 * The agent's progress socket (DTRUN_PROGRESS=unix:@NAME), connected;
 * -2 when there is none: dtrun does not watch for stragglers. -1 when the
 * agent's queue of new connections is full for now: the next step tries
 * again.
 */
static int
comm_progress_fd(struct dtcomm *c)
{
	struct sockaddr_un	 sa;
	const char		*v = getenv("DTRUN_PROGRESS");
	socklen_t		 len;
	int			 fd;

	if (c->prog_fd != -1)
		return c->prog_fd;
	c->prog_fd = -2;
	if (v == NULL || strncmp(v, "unix:@", 6) != 0 ||
	    (len = sock_abstract(&sa, v + 6)) == 0)
		return -2;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		return -2;
	if (connect(fd, (struct sockaddr *)&sa, len) == -1) {
		if (errno == EAGAIN)
			c->prog_fd = -1;
		close(fd);
		return -2;
	}
	return c->prog_fd = fd;
}

int
dtcomm_step(struct dtcomm *c, unsigned long long step)
{
	struct timespec	ts;
	char		msg[96];
	ssize_t		sent;
	int		fd, n;

	if ((fd = comm_progress_fd(c)) < 0)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	/* The step's own time: the agent reads its socket now and then. */
	n = snprintf(msg, sizeof(msg), "%d %llu %llu\n", c->ji.rank, step,
	    (unsigned long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
	/*
	 * One line per step on our own connection. Best effort: a full
	 * buffer drops this step, and the next one says as much; training
	 * never waits on it. A gone agent (or a line cut short, which
	 * would garble the next) ends the reports.
	 */
	sent = send(fd, msg, n, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (sent != n && !(sent == -1 && errno == EAGAIN)) {
		close(fd);
		c->prog_fd = -2;
	}
	return 0;
}

void
dtcomm_free(struct dtcomm *c)
{
	if (c == NULL)
		return;
	if (c->prog_fd >= 0)
		close(c->prog_fd);
	rdzv_client_free(c->cl);
	free(c->ids);
	free(c);
}

const char *
dtcomm_strerror(int err)
{
	switch (err) {
	case DTCOMM_ERR_NOENV:
		return "not started by dtrun (no DTRUN_RDZV_ADDR/TOKEN)";
	case DTCOMM_ERR_NONCCL:
		return "NCCL cannot be loaded";
	case DTCOMM_ERR_NCCL:
		return "NCCL call failed";
	default:
		return dt_strerror(err);
	}
}

const char *
dtcomm_last_error(void)
{
	return last_error;
}
