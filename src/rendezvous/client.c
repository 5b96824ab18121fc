/*
 * client.c -- the blocking rendezvous client: one request, one answer,
 * with poll() bounding every wait by the call's deadline.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/dtlimits.h"
#include "common/err.h"
#include "common/wire.h"
#include "rendezvous/proto.h"
#include "rendezvous/auth.h"
#include "rendezvous/client.h"
#include "common/sock.h"
#include "common/sys.h"

struct rdzv_client {
	int		 fd;
	char		 addr[RDZV_MAX_HOST + 16];
	double		 timeout;
	double		 deadline;		/* of the call under way; 0: none */
	uint8_t		*in;
	size_t		 inlen, incap, inused;
	struct dt_wbuf	 out;
	int		 aborted;
	char		 why[RDZV_MAX_TEXT];
};

int
rdzv_addr_split(const char *addr, char *host, size_t hostcap, int *port)
{
	const char	*colon, *h = addr;
	size_t		 hl;
	char		*end;
	long		 p;

	if (addr[0] == '[') {
		if ((colon = strstr(addr, "]:")) == NULL)
			return DT_ERR_PARSE;
		h = addr + 1;
		hl = (size_t)(colon - h);
		colon++;
	} else {
		if ((colon = strrchr(addr, ':')) == NULL)
			return DT_ERR_PARSE;
		hl = (size_t)(colon - addr);
	}
	if (hl == 0 || hl >= hostcap)
		return DT_ERR_PARSE;
	errno = 0;
	p = strtol(colon + 1, &end, 10);
	if (colon[1] == '\0' || *end != '\0' || errno != 0 || p < 1 ||
	    p > DT_PORT_MAX)
		return DT_ERR_PARSE;
	memcpy(host, h, hl);
	host[hl] = '\0';
	*port = (int)p;
	return 0;
}

/* Waits until fd is ready for ev. Returns 0, DT_ERR_TIMEOUT or DT_ERR_SYS. */
static int
client_poll(struct rdzv_client *c, int fd, short ev, struct dt_err *e)
{
	int	rc;

	if ((rc = dt_poll_until(fd, ev, c->deadline)) == DT_ERR_TIMEOUT)
		return dt_errf(e, NULL, 0, 0, rc, "rendezvous server %s did "
		    "not answer within %g s", c->addr, c->timeout);
	if (rc != 0)
		return dt_errf(e, NULL, 0, 0, rc, "poll: %s", strerror(errno));
	return 0;
}

/* Tries each address of host:port once. Returns the fd or a negative error. */
static int
client_dial(struct rdzv_client *c, const char *host, int port, int *refused,
    struct dt_err *e)
{
	struct addrinfo	 hints, *res, *ai;
	char		 ps[16];
	int		 fd = -1, rc = 0, err = 0, inprogress;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(ps, sizeof(ps), "%d", port);
	if ((rc = getaddrinfo(host, ps, &hints, &res)) != 0)
		return dt_errf(e, NULL, 0, 0, DT_ERR_NOTFOUND, "rendezvous "
		    "server %s: %s", c->addr, gai_strerror(rc));
	*refused = 0;
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		if ((fd = sock_connect(ai, &inprogress)) < 0) {
			err = errno;
			continue;
		}
		if (!inprogress)
			break;
		if ((rc = client_poll(c, fd, POLLOUT, e)) == 0 &&
		    (err = sock_connect_error(fd)) == 0)
			break;
		close(fd);
		fd = -1;
		if (rc == DT_ERR_TIMEOUT)
			break;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		*refused = err == ECONNREFUSED;
		return dt_errf(e, NULL, 0, 0, rc == DT_ERR_TIMEOUT ?
		    DT_ERR_TIMEOUT : DT_ERR_SYS, "cannot connect to the "
		    "rendezvous server %s: %s", c->addr, rc == DT_ERR_TIMEOUT ?
		    "timed out" : strerror(err));
	}
	sock_nodelay(fd);
	sock_keepalive(fd);
	return fd;
}

/*
 * Connects to the agent's abstract Unix socket @name. Returns the fd or a
 * negative error; *refused when nothing listens (yet).
 */
static int
client_dial_agent(struct rdzv_client *c, const char *name, int *refused,
    struct dt_err *e)
{
	struct sockaddr_un	sa;
	socklen_t		len = sock_abstract(&sa, name);
	int			fd;

	*refused = 0;
	if (len == 0)
		return dt_errf(e, NULL, 0, 0, DT_ERR_PARSE, "rendezvous "
		    "address %s: no name, or too long", c->addr);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return dt_errf(e, NULL, 0, 0, DT_ERR_SYS, "socket: %s",
		    strerror(errno));
	if (connect(fd, (struct sockaddr *)&sa, len) == -1) {
		*refused = errno == ECONNREFUSED;
		dt_errf(e, NULL, 0, 0, DT_ERR_SYS, "cannot connect to this "
		    "host's dtrun agent at %s: %s", c->addr, strerror(errno));
		close(fd);
		return DT_ERR_SYS;
	}
	return fd;
}

/* Sends c->out whole. */
static int
client_write(struct rdzv_client *c, struct dt_err *e)
{
	size_t	off = 0;
	ssize_t	n;
	int	rc;

	while (off < c->out.len) {
		n = send(c->fd, c->out.p + off, c->out.len - off, MSG_NOSIGNAL);
		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if ((rc = client_poll(c, c->fd, POLLOUT, e)) != 0)
				return rc;
			continue;
		}
		return dt_errf(e, NULL, 0, 0, DT_ERR_CLOSED, "rendezvous "
		    "server %s: connection lost: %s", c->addr, strerror(errno));
	}
	dt_wbuf_reset(&c->out);
	return 0;
}

/* Reads until one whole message is buffered, and decodes it into m. */
static int
client_read(struct rdzv_client *c, struct rdzv_msg *m, struct dt_err *e)
{
	size_t	 used, cap;
	ssize_t	 n;
	uint8_t	*p;
	int	 rc;

	if (c->inused > 0) {
		memmove(c->in, c->in + c->inused, c->inlen - c->inused);
		c->inlen -= c->inused;
		c->inused = 0;
	}
	for (;;) {
		rc = rdzv_msg_parse(c->in, c->inlen, m, &used);
		if (rc == 0) {
			c->inused = used;
			return 0;
		}
		if (rc != DT_ERR_AGAIN)
			return dt_errf(e, NULL, 0, 0, DT_ERR_PROTO, "rendezvous "
			    "server %s sent a %s frame", c->addr,
			    rc == DT_ERR_TOOBIG ? "oversized" : "malformed");
		if (c->inlen == c->incap) {
			cap = c->incap == 0 ? 1024 : c->incap * 2;
			if (cap > RDZV_MAX_FRAME)
				cap = RDZV_MAX_FRAME;
			if ((p = realloc(c->in, cap)) == NULL)
				return dt_errf(e, NULL, 0, 0, DT_ERR_NOMEM,
				    "out of memory");
			c->in = p;
			c->incap = cap;
		}
		n = recv(c->fd, c->in + c->inlen, c->incap - c->inlen, 0);
		if (n > 0) {
			c->inlen += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if ((rc = client_poll(c, c->fd, POLLIN, e)) != 0)
				return rc;
			continue;
		}
		return dt_errf(e, NULL, 0, 0, DT_ERR_CLOSED, "rendezvous "
		    "server %s closed the connection%s%s", c->addr,
		    n < 0 ? ": " : "", n < 0 ? strerror(errno) : "");
	}
}

/* Turns an ERROR or ABORT answer into an error; 0 for anything else. */
static int
client_check(struct rdzv_client *c, const struct rdzv_msg *m, struct dt_err *e)
{
	int	code;

	if (m->type == RDZV_ABORT) {
		c->aborted = 1;
		snprintf(c->why, sizeof(c->why), "%.*s", (int)m->textlen,
		    (const char *)m->text);
		return dt_errf(e, NULL, 0, 0, DT_ERR_ABORTED, "the job is "
		    "aborting: %s", c->why);
	}
	if (m->type != RDZV_ERROR)
		return 0;
	code = m->code;
	if (code >= 0 || code < -DT_ERR_MAX)
		code = DT_ERR_PROTO;
	return dt_errf(e, NULL, 0, 0, code, "rendezvous server: %.*s",
	    (int)m->textlen, (const char *)m->text);
}

/*
 * Sends req (unless NULL) and reads the answer into rep, which must be of
 * type want. rep points into c's buffer until the next call.
 */
static int
client_call(struct rdzv_client *c, const struct rdzv_msg *req, uint8_t want,
    struct rdzv_msg *rep, struct dt_err *e)
{
	int	rc;

	if (c->aborted)
		return dt_errf(e, NULL, 0, 0, DT_ERR_ABORTED, "the job is "
		    "aborting: %s", c->why);
	c->deadline = c->timeout > 0 ?
	    dt_clock_s(CLOCK_MONOTONIC) + c->timeout : 0;
	if (req != NULL) {
		if (rdzv_msg_encode(&c->out, req) != 0) {
			dt_wbuf_reset(&c->out);
			return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "%s request "
			    "over the protocol's limits", rdzv_msg_name(req->type));
		}
		if ((rc = client_write(c, e)) != 0)
			return rc;
	}
	if ((rc = client_read(c, rep, e)) != 0 ||
	    (rc = client_check(c, rep, e)) != 0)
		return rc;
	if (rep->type != want)
		return dt_errf(e, NULL, 0, 0, DT_ERR_PROTO, "rendezvous server "
		    "%s answered %s with %s", c->addr, req == NULL ? "connect" :
		    rdzv_msg_name(req->type), rdzv_msg_name(rep->type));
	return 0;
}

/* Reads the challenge, answers it and checks the server's proof. */
static int
client_auth(struct rdzv_client *c, const uint8_t *secret, size_t slen,
    struct dt_err *e)
{
	struct rdzv_msg	m, rep;
	uint8_t		snonce[RDZV_NONCE_LEN];
	int		rc;

	if ((rc = client_call(c, NULL, RDZV_CHALLENGE, &m, e)) != 0)
		return rc;
	if (m.magic != RDZV_MAGIC || m.version != RDZV_VERSION)
		return dt_errf(e, NULL, 0, 0, DT_ERR_PROTO, "rendezvous server "
		    "%s speaks protocol version %u, this worker %d", c->addr,
		    m.version, RDZV_VERSION);
	memcpy(snonce, m.nonce, sizeof(snonce));
	memset(&m, 0, sizeof(m));
	m.type = RDZV_AUTH;
	m.magic = RDZV_MAGIC;
	m.version = RDZV_VERSION;
	if ((rc = rdzv_auth_random(m.nonce, sizeof(m.nonce), e)) != 0 ||
	    (rc = rdzv_auth_mac(secret, slen, RDZV_ROLE_WORKER, snonce,
	    m.nonce, m.mac)) != 0)
		return rc == DT_ERR_INVAL ? dt_errf(e, NULL, 0, 0, DT_ERR_AUTH,
		    "the job secret must have %d to %d bytes", RDZV_SECRET_MIN,
		    RDZV_SECRET_MAX) : rc;
	if ((rc = client_call(c, &m, RDZV_AUTH_OK, &rep, e)) != 0)
		return rc;
	if (rdzv_auth_check(secret, slen, RDZV_ROLE_SERVER, snonce, m.nonce,
	    rep.mac) != 0)
		return dt_errf(e, NULL, 0, 0, DT_ERR_AUTH, "rendezvous server "
		    "%s could not prove it knows the job secret", c->addr);
	return 0;
}

int
rdzv_client_connect(const char *addr, const uint8_t *secret, size_t slen,
    double timeout, struct rdzv_client **cp, struct dt_err *e)
{
	struct rdzv_client	*c;
	char			 host[RDZV_MAX_HOST + 1];
	int			 port = 0, rc, refused, agent;
	double			 wait = 0.01;

	*cp = NULL;
	agent = strncmp(addr, "unix:@", 6) == 0;
	if (!agent && rdzv_addr_split(addr, host, sizeof(host), &port) != 0)
		return dt_errf(e, NULL, 0, 0, DT_ERR_PARSE, "rendezvous address "
		    "\"%s\" is not host:port", addr);
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return dt_errf(e, NULL, 0, 0, DT_ERR_NOMEM, "out of memory");
	c->fd = -1;
	snprintf(c->addr, sizeof(c->addr), "%s", addr);
	c->timeout = timeout;
	c->deadline = timeout > 0 ? dt_clock_s(CLOCK_MONOTONIC) + timeout : 0;
	dt_wbuf_init(&c->out);
	/* The server may still be starting: retry a refusal until the deadline. */
	while ((rc = agent ? client_dial_agent(c, addr + 6, &refused, e) :
	    client_dial(c, host, port, &refused, e)) < 0 && refused &&
	    dt_ms_left(c->deadline) != 0) {
		struct timespec	ts = { 0, (long)(wait * 1e9) };

		nanosleep(&ts, NULL);
		if (wait < 0.5)
			wait *= 2;
	}
	if (rc < 0) {
		rdzv_client_free(c);
		return rc;
	}
	c->fd = rc;
	if (!agent && (rc = client_auth(c, secret, slen, e)) != 0) {
		rdzv_client_free(c);
		return rc;
	}
	*cp = c;
	return 0;
}

void
rdzv_client_set_timeout(struct rdzv_client *c, double timeout)
{
	c->timeout = timeout;
}

int
rdzv_client_join(struct rdzv_client *c, int rank, const char *host,
    int local_rank, struct rdzv_join_info *ji, struct dt_err *e)
{
	struct rdzv_msg	m, rep;
	int		rc;

	memset(&m, 0, sizeof(m));
	m.type = RDZV_JOIN;
	m.rank = rank;
	m.local_rank = local_rank;
	m.host = (const uint8_t *)host;
	m.hostlen = host == NULL ? 0 : strlen(host);
	if ((rc = client_call(c, &m, RDZV_JOIN_OK, &rep, e)) != 0)
		return rc;
	if (rep.world < 1 || rep.rank < 0 || rep.rank >= rep.world ||
	    rep.local_rank < 0 || rep.local_rank >= rep.local_world ||
	    rep.node_rank < 0 || rep.node_rank >= rep.nnodes)
		return dt_errf(e, NULL, 0, 0, DT_ERR_PROTO, "rendezvous server "
		    "%s gave an impossible rank", c->addr);
	ji->rank = rep.rank;
	ji->world = rep.world;
	ji->local_rank = rep.local_rank;
	ji->local_world = rep.local_world;
	ji->node_rank = rep.node_rank;
	ji->nnodes = rep.nnodes;
	return 0;
}

/* Fills m's key from a C string. */
static void
msg_key(struct rdzv_msg *m, uint8_t type, const char *key)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	m->key = (const uint8_t *)key;
	m->keylen = strlen(key);
}

int
rdzv_client_set(struct rdzv_client *c, const char *key, const void *val,
    size_t len, struct dt_err *e)
{
	struct rdzv_msg	m, rep;

	msg_key(&m, RDZV_SET, key);
	m.val = val;
	m.vallen = len;
	return client_call(c, &m, RDZV_OK, &rep, e);
}

int
rdzv_client_get(struct rdzv_client *c, const char *key, int wait, void *buf,
    size_t cap, size_t *len, struct dt_err *e)
{
	struct rdzv_msg	m, rep;
	int		rc;

	msg_key(&m, RDZV_GET, key);
	m.flags = wait ? RDZV_GET_WAIT : 0;
	if ((rc = client_call(c, &m, RDZV_VALUE, &rep, e)) != 0)
		return rc;
	*len = rep.vallen;
	if (rep.vallen > cap)
		return dt_errf(e, NULL, 0, 0, DT_ERR_RANGE, "the value of %s "
		    "has %zu bytes, more than the %zu given", key, rep.vallen,
		    cap);
	if (rep.vallen > 0)
		memcpy(buf, rep.val, rep.vallen);
	return 0;
}

int
rdzv_client_add(struct rdzv_client *c, const char *key, int64_t delta,
    int64_t *out, struct dt_err *e)
{
	struct rdzv_msg	m, rep;
	int		rc;

	msg_key(&m, RDZV_ADD, key);
	m.num = delta;
	if ((rc = client_call(c, &m, RDZV_INT, &rep, e)) != 0)
		return rc;
	*out = rep.num;
	return 0;
}

int
rdzv_client_barrier(struct rdzv_client *c, struct dt_err *e)
{
	struct rdzv_msg	m, rep;

	memset(&m, 0, sizeof(m));
	m.type = RDZV_BARRIER;
	return client_call(c, &m, RDZV_OK, &rep, e);
}

int
rdzv_client_ping(struct rdzv_client *c, struct dt_err *e)
{
	struct rdzv_msg	m, rep;
	int		rc;

	memset(&m, 0, sizeof(m));
	m.type = RDZV_PING;
	m.seq = (uint64_t)dt_clock_s(CLOCK_MONOTONIC);
	if ((rc = client_call(c, &m, RDZV_PONG, &rep, e)) != 0)
		return rc;
	if (rep.seq != m.seq)
		return dt_errf(e, NULL, 0, 0, DT_ERR_PROTO, "rendezvous server "
		    "%s answered another heartbeat", c->addr);
	return 0;
}

int
rdzv_client_fd(const struct rdzv_client *c)
{
	return c->fd;
}

void
rdzv_client_free(struct rdzv_client *c)
{
	if (c == NULL)
		return;
	if (c->fd >= 0)
		close(c->fd);
	dt_wbuf_free(&c->out);
	free(c->in);
	free(c);
}
