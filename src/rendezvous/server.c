/*
 * server.c -- the rendezvous server on the launcher's event loop.
 *
 * A connection reads frames into a bounded buffer and handles them one at
 * a time, in order. A request that must wait (GET with wait, BARRIER, a
 * JOIN without a plan) blocks its connection: later frames stay buffered
 * until a SET, the last barrier arrival or the last join wakes it, which
 * puts it on the run queue. Connections are only marked dead where they
 * fail and freed by server_settle once the current callback is done, so
 * no list walk ever meets a freed connection.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/dtlimits.h"
#include "common/err.h"
#include "common/wire.h"
#include "rendezvous/proto.h"
#include "rendezvous/auth.h"
#include "rendezvous/store.h"
#include "rendezvous/server.h"
#include "common/sock.h"
#include "common/sys.h"

#define IN_FIRST	512			/* first input buffer size */
#define OUT_HIGH	(64 * 1024)		/* stop handling input above this */
#define VIN_MAX		(16 * RDZV_MAX_FRAME)	/* a virtual connection's input */
#define MAX_LISTED	8			/* missing ranks named in a timeout */
#define STORE_KEYS	(1024 * 1024)
#define STORE_BYTES	((size_t)256 * 1024 * 1024)

enum conn_wait {
	W_NONE,
	W_KEY,		/* GET with wait */
	W_BARRIER,
	W_JOIN,		/* JOIN without a plan, until all have come */
};

struct rdzv_conn {
	struct rdzv_server	 *s;
	struct rdzv_conn	 *prev, *next;		/* s->conns */
	struct rdzv_conn	 *wprev, *wnext;	/* the list it waits on */
	struct rdzv_conn	**whead;
	struct rdzv_conn	 *rnext;		/* s->runq */
	int			  fd;
	struct event		 *rev;
	struct event		 *wev;
	int			  rd_on;
	int			  authed;
	int			  dead;
	int			  inrunq;
	enum conn_wait		  wait;
	int			  rank;			/* -1 until joined */
	char			 *host;			/* W_JOIN: as sent */
	int			  local_rank;
	uint8_t			  snonce[RDZV_NONCE_LEN];
	uint8_t			 *in;
	size_t			  inlen, incap;
	struct dt_wbuf		  out;
	size_t			  outoff;
	double			  t_accept;		/* until authed */
	double			  t_in;			/* a frame is partial since */
	double			  t_out;		/* output stuck since */
	int			  virt;			/* fd-less: rdzv_server_vopen */
	struct rdzv_vconn_cbs	  v;
};

struct slot {
	struct rdzv_conn	*c;
	int			 joined;
};

struct rdzv_server {
	struct event_base	*base;
	struct rdzv_server_cfg	 cfg;
	uint8_t			 secret[RDZV_SECRET_MAX];
	struct rdzv_rank_info	*plan;		/* NULL until known */
	struct rdzv_store	*index;		/* (host, local rank) -> rank */
	struct slot		*slots;
	int			 world;
	int			 nnodes;
	int			 njoined;
	int			 lfd;
	int			 port;
	struct event		*lev;
	struct event		*sweep;
	struct event		*startev;
	struct event		*notify;
	struct event		*relisten;
	struct rdzv_conn	*conns;
	struct rdzv_conn	*runq;
	struct rdzv_store	*store;
	struct rdzv_conn	*barrier;
	int			 nbarrier;
	struct rdzv_conn	*pending;	/* joins waiting for a rank */
	int			 npending;
	struct rdzv_store	*pendix;	/* (host, local rank) of pending */
	int			 aborted;
	int			 spoken;	/* a worker made a request */
	char			*abort_why;
	int			 settling;
	int			 notify_joined;
	char			*notify_timeout;
	char			*notify_error;	/* on_error's message */
	struct rdzv_server_stats st;
	struct rdzv_conn	*dead;		/* to free in server_settle */
};

static void	conn_process(struct rdzv_conn *);
static void	conn_flush(struct rdzv_conn *);
static void	server_settle(struct rdzv_server *);

/* A timeval of d seconds. */
static struct timeval
tv_of(double d)
{
	struct timeval	tv;

	tv.tv_sec = (time_t)d;
	tv.tv_usec = (suseconds_t)((d - (double)tv.tv_sec) * 1e6);
	return tv;
}

/* Builds the index key for (host, local rank) in buf; returns its length. */
static size_t
plan_key(uint8_t *buf, const char *host, size_t hostlen, int local_rank)
{
	memcpy(buf, host, hostlen);
	buf[hostlen] = '\0';
	buf[hostlen + 1] = (uint8_t)((uint32_t)local_rank >> 24);
	buf[hostlen + 2] = (uint8_t)((uint32_t)local_rank >> 16);
	buf[hostlen + 3] = (uint8_t)((uint32_t)local_rank >> 8);
	buf[hostlen + 4] = (uint8_t)local_rank;
	return hostlen + 5;
}

/* Records in s->index that (host, local rank) is rank r. Returns 0 or DT_ERR_*. */
static int
plan_index(struct rdzv_server *s, const char *host, int local_rank, int r)
{
	struct rdzv_item	*it;
	uint8_t			 key[RDZV_MAX_HOST + 5], rb[4];

	rb[0] = (uint8_t)((uint32_t)r >> 24);
	rb[1] = (uint8_t)((uint32_t)r >> 16);
	rb[2] = (uint8_t)((uint32_t)r >> 8);
	rb[3] = (uint8_t)r;
	return rdzv_store_set(s->index, key, plan_key(key, host, strlen(host),
	    local_rank), rb, 4, &it);
}

/* Puts c on a wait list. */
static void
wait_push(struct rdzv_conn **head, struct rdzv_conn *c, enum conn_wait w)
{
	c->wait = w;
	c->whead = head;
	c->wprev = NULL;
	c->wnext = *head;
	if (*head != NULL)
		(*head)->wprev = c;
	*head = c;
}

/* Takes c off whatever it waits on. */
static void
wait_remove(struct rdzv_conn *c)
{
	struct rdzv_server	*s = c->s;
	uint8_t			 key[RDZV_MAX_HOST + 5];

	if (c->wait == W_NONE)
		return;
	if (c->wprev != NULL)
		c->wprev->wnext = c->wnext;
	else
		*c->whead = c->wnext;
	if (c->wnext != NULL)
		c->wnext->wprev = c->wprev;
	if (c->wait == W_BARRIER)
		s->nbarrier--;
	if (c->wait == W_JOIN) {
		s->npending--;
		rdzv_store_del(s->pendix, key, plan_key(key, c->host,
		    strlen(c->host), c->local_rank));
		free(c->host);
		c->host = NULL;
	}
	c->wait = W_NONE;
	c->wprev = c->wnext = NULL;
	c->whead = NULL;
}

/* Queues c to handle its buffered input from server_settle. */
static void
conn_schedule(struct rdzv_conn *c)
{
	if (c->inrunq || c->dead)
		return;
	c->inrunq = 1;
	c->rnext = c->s->runq;
	c->s->runq = c;
}

/* Ends c's wait and queues it to go on with its input. */
static void
conn_wake(struct rdzv_conn *c)
{
	wait_remove(c);
	conn_schedule(c);
}

/* Closes c now and frees it later; it leaves every list but s->conns. */
static void
conn_drop(struct rdzv_conn *c, int bad)
{
	struct rdzv_server	*s = c->s;

	if (c->dead)
		return;
	if (bad)
		s->st.dropped++;
	wait_remove(c);
	if (c->rank >= 0 && s->slots[c->rank].c == c)
		s->slots[c->rank].c = NULL;
	if (c->rev != NULL)
		event_del(c->rev);
	if (c->wev != NULL)
		event_del(c->wev);
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->dead = 1;
	/* Its owner hears of it (not when the owner closed it). */
	if (c->virt && c->v.closed != NULL)
		c->v.closed(c->v.arg);
	s->st.conns--;
	/* Move from s->conns to s->dead. */
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		s->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	c->prev = NULL;
	c->next = s->dead;
	s->dead = c;
}

/* Frees a dropped connection. */
static void
conn_free(struct rdzv_conn *c)
{
	if (c->rev != NULL)
		event_free(c->rev);
	if (c->wev != NULL)
		event_free(c->wev);
	dt_wbuf_free(&c->out);
	free(c->in);
	free(c->host);
	free(c);
}

/* Appends m to c's output; a failure to encode drops c. */
static void
conn_send(struct rdzv_conn *c, const struct rdzv_msg *m)
{
	if (rdzv_msg_encode(&c->out, m) != 0)
		conn_drop(c, 1);
}

/* Sends ERROR code text, which leaves the connection usable. */
static void
conn_error(struct rdzv_conn *c, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
conn_error(struct rdzv_conn *c, int code, const char *fmt, ...)
{
	struct rdzv_msg	m;
	char		buf[RDZV_MAX_TEXT];
	va_list		ap;
	int		n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	memset(&m, 0, sizeof(m));
	m.type = RDZV_ERROR;
	m.code = code;
	m.text = (const uint8_t *)buf;
	m.textlen = n < 0 ? 0 : (size_t)n >= sizeof(buf) ? sizeof(buf) - 1 :
	    (size_t)n;
	conn_send(c, &m);
}

/* Sends what c has so far, then drops it: for a peer that broke the rules. */
static void
conn_fail(struct rdzv_conn *c)
{
	if (!c->dead)
		c->s->st.dropped++;
	conn_flush(c);
	conn_drop(c, 0);
}

/* Sends ABORT with the server's reason. */
static void
conn_abort(struct rdzv_conn *c)
{
	struct rdzv_msg	m;

	memset(&m, 0, sizeof(m));
	m.type = RDZV_ABORT;
	m.text = (const uint8_t *)c->s->abort_why;
	m.textlen = strlen(c->s->abort_why);
	conn_send(c, &m);
}

/* Sends a reply that carries nothing but its type. */
static void
conn_reply(struct rdzv_conn *c, uint8_t type)
{
	struct rdzv_msg	m;

	memset(&m, 0, sizeof(m));
	m.type = type;
	conn_send(c, &m);
}

/* Sends VALUE with an item's value. */
static void
conn_value(struct rdzv_conn *c, const struct rdzv_item *it)
{
	struct rdzv_msg	m;

	memset(&m, 0, sizeof(m));
	m.type = RDZV_VALUE;
	m.val = it->val;
	m.vallen = it->vallen;
	conn_send(c, &m);
}

/* Sends JOIN_OK for the rank c now holds. */
static void
conn_joined(struct rdzv_conn *c)
{
	struct rdzv_server		*s = c->s;
	const struct rdzv_rank_info	*ri = &s->plan[c->rank];
	struct rdzv_msg			 m;

	memset(&m, 0, sizeof(m));
	m.type = RDZV_JOIN_OK;
	m.rank = c->rank;
	m.world = s->world;
	m.local_rank = ri->local_rank;
	m.local_world = ri->local_world;
	m.node_rank = ri->node_rank;
	m.nnodes = s->nnodes;
	conn_send(c, &m);
}

/* Arranges for a callback to run from the loop, outside any API call. */
static void
server_notify(struct rdzv_server *s)
{
	event_active(s->notify, EV_TIMEOUT, 1);
}

/* Writes as much of c's output as the socket takes. */
static void
conn_flush(struct rdzv_conn *c)
{
	ssize_t	n;

	if (c->virt) {
		/*
		 * Its owner queues whatever it is given. Taken out first: the
		 * owner may hand us the worker's next bytes from inside send
		 * (an ssh link reads as it writes), and their answers must
		 * not find these still queued.
		 */
		struct dt_wbuf	o = c->out;
		size_t		off = c->outoff;

		if (c->dead || off >= o.len)
			return;
		dt_wbuf_init(&c->out);
		c->outoff = 0;
		c->v.send(c->v.arg, o.p + off, o.len - off);
		dt_wbuf_free(&o);
		return;
	}
	while (!c->dead && c->outoff < c->out.len) {
		n = write(c->fd, c->out.p + c->outoff, c->out.len - c->outoff);
		if (n > 0) {
			c->outoff += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (c->t_out == 0)
				c->t_out = dt_clock_s(CLOCK_MONOTONIC_COARSE);
			event_add(c->wev, NULL);
			return;
		}
		conn_drop(c, 0);
		return;
	}
	if (c->dead)
		return;
	dt_wbuf_reset(&c->out);
	c->outoff = 0;
	c->t_out = 0;
	if (event_pending(c->wev, EV_WRITE, NULL))
		event_del(c->wev);
}

/* Binds c to rank r; counts a first join and notices when all are in. */
static void
server_bind(struct rdzv_server *s, struct rdzv_conn *c, int r)
{
	c->rank = r;
	s->slots[r].c = c;
	if (!s->slots[r].joined) {
		s->slots[r].joined = 1;
		s->njoined++;
		if (s->cfg.on_join != NULL)
			s->cfg.on_join(s->cfg.arg, r, s->njoined);
		if (s->njoined == s->world) {
			if (s->startev != NULL)
				event_del(s->startev);
			s->notify_joined = 1;
			server_notify(s);
		}
	}
	conn_joined(c);
}

/* Orders pending joins by host name, then local rank. */
static int
cmp_pending(const void *a, const void *b)
{
	const struct rdzv_conn	*x = *(const struct rdzv_conn *const *)a;
	const struct rdzv_conn	*y = *(const struct rdzv_conn *const *)b;
	int			 c = strcmp(x->host, y->host);

	if (c != 0)
		return c;
	return (x->local_rank > y->local_rank) - (x->local_rank < y->local_rank);
}

/*
 * With no plan, once all world have joined: ranks in order of (host, local
 * rank), which makes the plan; everyone waiting gets JOIN_OK.
 */
static void
server_assign(struct rdzv_server *s)
{
	struct rdzv_conn	**v, *c;
	int			  i, j, n = 0, node = -1;

	if ((v = calloc(s->world, sizeof(*v))) == NULL ||
	    (s->plan = calloc(s->world, sizeof(*s->plan))) == NULL) {
		free(v);
		return;			/* retried at the next join */
	}
	for (c = s->pending; c != NULL; c = c->wnext)
		v[n++] = c;
	qsort(v, n, sizeof(*v), cmp_pending);
	for (i = 0; i < n; i = j) {
		node++;
		for (j = i; j < n && strcmp(v[j]->host, v[i]->host) == 0; j++)
			;
		for (int k = i; k < j; k++) {
			s->plan[k].rank = k;
			s->plan[k].local_rank = k - i;
			s->plan[k].local_world = j - i;
			s->plan[k].node_rank = node;
			s->plan[k].host = strdup(v[k]->host);
			/* A rejoin finds its rank here; failure only stops that. */
			plan_index(s, v[k]->host, v[k]->local_rank, k);
		}
	}
	s->nnodes = node + 1;
	for (i = 0; i < n; i++) {
		conn_wake(v[i]);
		server_bind(s, v[i], i);
	}
	free(v);
}

/* The rank the plan gives (host, local rank), or -1. */
static int
plan_lookup(struct rdzv_server *s, const uint8_t *host, size_t hostlen,
    int local_rank)
{
	uint8_t			 key[RDZV_MAX_HOST + 5];
	struct rdzv_item	*it;

	it = rdzv_store_find(s->index, key, plan_key(key, (const char *)host,
	    hostlen, local_rank));
	if (it == NULL || !it->isset || it->vallen != 4)
		return -1;
	return (int)dt_be32(it->val);
}

/* JOIN: a rank from the plan, or a wait until all have come without one. */
static void
handle_join(struct rdzv_conn *c, const struct rdzv_msg *m)
{
	struct rdzv_server	*s = c->s;
	struct rdzv_item	*it;
	uint8_t			 key[RDZV_MAX_HOST + 5];
	int			 r = m->rank;
	size_t			 kl;

	if (c->rank >= 0) {
		conn_error(c, DT_ERR_INVAL, "already joined as rank %d",
		    c->rank);
		return;
	}
	if (r < -1 || r >= s->world) {
		conn_error(c, DT_ERR_RANGE, "rank %d is outside this job of "
		    "%d ranks", r, s->world);
		return;
	}
	if (r < 0 && (m->hostlen == 0 || m->local_rank < 0 ||
	    memchr(m->host, '\0', m->hostlen) != NULL)) {
		conn_error(c, DT_ERR_INVAL, "a join without a rank needs a "
		    "host name and a local rank");
		return;
	}
	if (r < 0 && s->plan != NULL &&
	    (r = plan_lookup(s, m->host, m->hostlen, m->local_rank)) < 0) {
		conn_error(c, DT_ERR_NOTFOUND, "no rank of this job runs on "
		    "host %.*s with local rank %d", (int)m->hostlen,
		    (const char *)m->host, m->local_rank);
		return;
	}
	if (r >= 0 && s->plan == NULL) {
		conn_error(c, DT_ERR_INVAL, "this job has no rank plan: join "
		    "by host and local rank, not by rank");
		return;
	}
	if (r >= 0) {
		if (s->slots[r].c != NULL) {
			conn_error(c, DT_ERR_INVAL, "rank %d has already "
			    "joined from another connection", r);
			return;
		}
		server_bind(s, c, r);
		return;
	}
	/* No plan yet: wait for the others. */
	kl = plan_key(key, (const char *)m->host, m->hostlen, m->local_rank);
	if (rdzv_store_find(s->pendix, key, kl) != NULL) {
		conn_error(c, DT_ERR_INVAL, "host %.*s local rank %d has "
		    "already joined", (int)m->hostlen, (const char *)m->host,
		    m->local_rank);
		return;
	}
	if (s->npending >= s->world ||
	    (c->host = strndup((const char *)m->host, m->hostlen)) == NULL ||
	    rdzv_store_set(s->pendix, key, kl, NULL, 0, &it) != 0) {
		free(c->host);
		c->host = NULL;
		conn_error(c, DT_ERR_RANGE, "more joins than the %d ranks of "
		    "this job", s->world);
		return;
	}
	c->local_rank = m->local_rank;
	wait_push(&s->pending, c, W_JOIN);
	s->npending++;
	if (s->npending == s->world)
		server_assign(s);
}

/* Gives every waiter of it the value. */
static void
server_wake_key(struct rdzv_item *it)
{
	struct rdzv_conn	*c;

	while ((c = it->waiters) != NULL) {
		conn_value(c, it);
		conn_wake(c);
	}
}

/* Explains a store error to the worker. */
static void
conn_store_error(struct rdzv_conn *c, int rc)
{
	if (rc == DT_ERR_PARSE)
		conn_error(c, rc, "the key holds a value that is not a counter");
	else if (rc == DT_ERR_RANGE)
		conn_error(c, rc, "the store is full or the counter overflows");
	else
		conn_error(c, rc, "the server is out of memory");
}

/*
 * A worker's first request: with start_on_first_use, the start timeout
 * counts from now unless rdzv_server_start_clock's deadline still runs.
 */
static void
server_first_use(struct rdzv_server *s)
{
	struct timeval	tv;

	if (s->startev == NULL || !s->cfg.start_on_first_use ||
	    evtimer_pending(s->startev, NULL))
		return;
	tv = tv_of(s->cfg.start_timeout);
	event_add(s->startev, &tv);
}

/* A request from an authenticated worker. */
static void
handle_request(struct rdzv_conn *c, const struct rdzv_msg *m)
{
	struct rdzv_server	*s = c->s;
	struct rdzv_item	*it;
	struct rdzv_msg		 r;
	int			 rc;

	if (s->aborted) {
		conn_abort(c);
		return;
	}
	if (!s->spoken) {
		s->spoken = 1;
		server_first_use(s);
	}
	memset(&r, 0, sizeof(r));
	switch (m->type) {
	case RDZV_JOIN:
		handle_join(c, m);
		break;
	case RDZV_SET:
		rc = rdzv_store_set(s->store, m->key, m->keylen, m->val,
		    m->vallen, &it);
		if (rc != 0) {
			conn_store_error(c, rc);
			break;
		}
		conn_reply(c, RDZV_OK);
		server_wake_key(it);
		break;
	case RDZV_GET:
		it = rdzv_store_find(s->store, m->key, m->keylen);
		if (it != NULL && it->isset)
			conn_value(c, it);
		else if (!(m->flags & RDZV_GET_WAIT))
			conn_error(c, DT_ERR_NOTFOUND, "no such key");
		else if ((rc = rdzv_store_reserve(s->store, m->key,
		    m->keylen, &it)) != 0)
			conn_store_error(c, rc);
		else
			wait_push(&it->waiters, c, W_KEY);
		break;
	case RDZV_ADD:
		r.type = RDZV_INT;
		rc = rdzv_store_add(s->store, m->key, m->keylen, m->num,
		    &r.num, &it);
		if (rc != 0) {
			conn_store_error(c, rc);
			break;
		}
		conn_send(c, &r);
		server_wake_key(it);
		break;
	case RDZV_BARRIER:
		if (c->rank < 0) {
			conn_error(c, DT_ERR_INVAL, "barrier before join");
			break;
		}
		wait_push(&s->barrier, c, W_BARRIER);
		if (++s->nbarrier < s->world)
			break;
		while (s->barrier != NULL) {
			conn_reply(s->barrier, RDZV_OK);
			conn_wake(s->barrier);
		}
		break;
	case RDZV_PING:
		if (c->rank >= 0 && s->cfg.on_alive != NULL)
			s->cfg.on_alive(s->cfg.arg, c->rank);
		r.type = RDZV_PONG;
		r.seq = m->seq;
		conn_send(c, &r);
		break;
	default:
		conn_error(c, DT_ERR_PROTO, "unexpected %s message",
		    rdzv_msg_name(m->type));
		conn_fail(c);
		break;
	}
}

/* The first frame must be AUTH with the right version and a valid MAC. */
static void
handle_auth(struct rdzv_conn *c, const struct rdzv_msg *m)
{
	struct rdzv_server	*s = c->s;
	struct rdzv_msg		 r;

	if (m->type != RDZV_AUTH) {
		conn_error(c, DT_ERR_PROTO, "expected AUTH, got %s",
		    rdzv_msg_name(m->type));
		conn_fail(c);
		return;
	}
	if (m->magic != RDZV_MAGIC || m->version != RDZV_VERSION) {
		s->st.auth_failed++;
		conn_error(c, DT_ERR_PROTO, "rendezvous protocol version %u "
		    "is not supported (server speaks %d)", m->version,
		    RDZV_VERSION);
		conn_fail(c);
		return;
	}
	if (rdzv_auth_check(s->secret, s->cfg.secret_len, RDZV_ROLE_WORKER,
	    c->snonce, m->nonce, m->mac) != 0) {
		s->st.auth_failed++;
		conn_error(c, DT_ERR_AUTH, "authentication failed: the worker's "
		    "DTRUN_RDZV_TOKEN is not this job's secret");
		conn_fail(c);
		return;
	}
	memset(&r, 0, sizeof(r));
	r.type = RDZV_AUTH_OK;
	if (rdzv_auth_mac(s->secret, s->cfg.secret_len, RDZV_ROLE_SERVER,
	    c->snonce, m->nonce, r.mac) != 0) {
		conn_drop(c, 1);
		return;
	}
	c->authed = 1;
	c->t_accept = 0;
	conn_send(c, &r);
}

/* Handles the complete frames in c's buffer until it must wait. */
static void
conn_process(struct rdzv_conn *c)
{
	struct rdzv_msg	m;
	size_t		off = 0, used;
	int		rc;

	while (!c->dead && c->wait == W_NONE && off < c->inlen &&
	    c->out.len - c->outoff < OUT_HIGH) {
		rc = rdzv_msg_parse(c->in + off, c->inlen - off, &m, &used);
		if (rc == DT_ERR_AGAIN)
			break;
		if (rc != 0) {
			conn_error(c, rc, "%s frame", rc == DT_ERR_TOOBIG ?
			    "oversized" : "malformed");
			conn_fail(c);
			return;
		}
		c->s->st.requests++;
		if (c->authed)
			handle_request(c, &m);
		else
			handle_auth(c, &m);
		off += used;
	}
	if (c->dead)
		return;
	if (off > 0) {
		memmove(c->in, c->in + off, c->inlen - off);
		c->inlen -= off;
		c->t_in = 0;
	}
	if (c->inlen > 0 && c->wait == W_NONE && c->t_in == 0)
		c->t_in = dt_clock_s(CLOCK_MONOTONIC_COARSE);
	else if (c->wait != W_NONE)
		c->t_in = 0;
	if (!c->virt && !c->rd_on && c->wait == W_NONE && c->inlen < c->incap) {
		event_add(c->rev, NULL);	/* paused while full */
		c->rd_on = 1;
	}
	conn_flush(c);
}

/* A connection's socket is readable. */
static void
conn_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rdzv_conn	*c = arg;
	struct rdzv_server	*s = c->s;
	size_t			 cap;
	uint8_t			*p;
	ssize_t			 n;

	if (c->inlen == c->incap) {
		if (c->incap >= RDZV_MAX_FRAME) {
			/* Full of pipelined requests behind a wait: pause. */
			event_del(c->rev);
			c->rd_on = 0;
			return;
		}
		cap = c->incap == 0 ? IN_FIRST : c->incap * 2;
		if (cap > RDZV_MAX_FRAME)
			cap = RDZV_MAX_FRAME;
		if ((p = realloc(c->in, cap)) == NULL) {
			conn_drop(c, 1);
			server_settle(s);
			return;
		}
		c->in = p;
		c->incap = cap;
	}
	n = read(fd, c->in + c->inlen, c->incap - c->inlen);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK ||
	    errno == EINTR))
		return;
	if (n <= 0)
		conn_drop(c, 0);
	else {
		c->inlen += (size_t)n;
		conn_process(c);
	}
	server_settle(s);
}

/* A connection's socket has room for its pending output. */
static void
conn_write_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rdzv_conn	*c = arg;

	c->t_out = 0;
	conn_flush(c);
	if (!c->dead && c->outoff == 0)
		conn_schedule(c);	/* it may have paused above OUT_HIGH */
	server_settle(c->s);
}

/* Drops the oldest connection that has not authenticated; 0, or -1: none. */
static int
server_shed(struct rdzv_server *s)
{
	struct rdzv_conn	*c, *oldest = NULL;

	/* s->conns is newest first. */
	for (c = s->conns; c != NULL; c = c->next)
		if (!c->authed)
			oldest = c;
	if (oldest == NULL)
		return -1;
	conn_drop(oldest, 1);
	s->st.shed++;
	return 0;
}

/* Makes room for one more connection; returns 0 or -1 if there is none. */
static int
server_make_room(struct rdzv_server *s)
{
	if (s->st.conns < (size_t)s->cfg.max_conns)
		return 0;
	return server_shed(s);
}

/* Links c into s->conns and counts it. */
static void
server_link_conn(struct rdzv_server *s, struct rdzv_conn *c)
{
	c->next = s->conns;
	if (s->conns != NULL)
		s->conns->prev = c;
	s->conns = c;
	s->st.conns++;
	s->st.accepted++;
}

/* Takes a new connection and sends it the challenge. */
static void
server_add_conn(struct rdzv_server *s, int fd)
{
	struct rdzv_conn	*c;
	struct rdzv_msg		 m;

	if (server_make_room(s) != 0 || (c = calloc(1, sizeof(*c))) == NULL) {
		close(fd);
		return;
	}
	c->s = s;
	c->fd = fd;
	c->rank = -1;
	c->local_rank = -1;
	dt_wbuf_init(&c->out);
	c->rev = event_new(s->base, fd, EV_READ | EV_PERSIST, conn_read_cb, c);
	c->wev = event_new(s->base, fd, EV_WRITE, conn_write_cb, c);
	if (c->rev == NULL || c->wev == NULL ||
	    rdzv_auth_random(c->snonce, sizeof(c->snonce), NULL) != 0 ||
	    event_add(c->rev, NULL) != 0) {
		conn_free(c);
		close(fd);
		return;
	}
	c->rd_on = 1;
	c->t_accept = dt_clock_s(CLOCK_MONOTONIC_COARSE);
	server_link_conn(s, c);
	sock_nodelay(fd);
	sock_keepalive(fd);
	memset(&m, 0, sizeof(m));
	m.type = RDZV_CHALLENGE;
	m.magic = RDZV_MAGIC;
	m.version = RDZV_VERSION;
	memcpy(m.nonce, c->snonce, sizeof(m.nonce));
	conn_send(c, &m);
	conn_flush(c);
}

struct rdzv_conn *
rdzv_server_vopen(struct rdzv_server *s, const struct rdzv_vconn_cbs *cbs)
{
	struct rdzv_conn	*c;

	if (server_make_room(s) != 0 || (c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->s = s;
	c->fd = -1;
	c->virt = 1;
	c->v = *cbs;
	c->authed = 1;		/* vouched for by whoever carries it */
	c->rank = -1;
	c->local_rank = -1;
	dt_wbuf_init(&c->out);
	server_link_conn(s, c);
	/* No settle here: the caller keeps the handle before anything runs. */
	return c;
}

void
rdzv_server_vinput(struct rdzv_conn *c, const void *p, size_t n)
{
	struct rdzv_server	*s = c->s;
	size_t			 cap;
	uint8_t			*in;

	if (c->dead || n == 0)
		return;
	if (c->inlen + n > VIN_MAX) {
		conn_error(c, DT_ERR_TOOBIG, "over %d bytes sent ahead of the "
		    "answers", VIN_MAX);
		conn_fail(c);
		server_settle(s);
		return;
	}
	if (c->inlen + n > c->incap) {
		for (cap = c->incap ? c->incap : IN_FIRST; cap < c->inlen + n;)
			cap *= 2;
		if ((in = realloc(c->in, cap)) == NULL) {
			conn_drop(c, 1);
			server_settle(s);
			return;
		}
		c->in = in;
		c->incap = cap;
	}
	memcpy(c->in + c->inlen, p, n);
	c->inlen += n;
	/*
	 * Handled from server_settle, never here: this may be a call from
	 * inside our own send callback, in the middle of handling c or
	 * another connection. Behind a wait, when the wait ends.
	 */
	if (c->wait == W_NONE)
		conn_schedule(c);
	server_settle(s);
}

void
rdzv_server_vclose(struct rdzv_conn *c)
{
	c->v.closed = NULL;
	conn_drop(c, 0);
	server_settle(c->s);
}

/* Re-enables accepting after running out of descriptors. */
static void
server_relisten_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rdzv_server	*s = arg;

	event_add(s->lev, NULL);
}

/*
 * Out of descriptors at accept: a rank that cannot connect never joins,
 * and waiting for --start-timeout only hides why. Said once: the job
 * aborts, and the launcher hears it through on_error.
 */
static void
server_nofile(struct rdzv_server *s, int err)
{
	char	buf[512];

	if (s->notify_error != NULL || s->aborted)
		return;
	dt_nofile_msg(buf, sizeof(buf), "rendezvous", err);
	if ((s->notify_error = strdup(buf)) == NULL)
		return;
	rdzv_server_abort(s, buf);
	server_notify(s);
}

/* The listener is readable: accept a batch of connections. */
static void
server_accept_cb(evutil_socket_t lfd, short what, void *arg)
{
	struct rdzv_server	*s = arg;
	struct timeval		 tv = { 0, 100000 };
	int			 fd, i;

	for (i = 0; i < 512; i++) {
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0) {
			server_add_conn(s, fd);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		/*
		 * At the descriptor limit a stranger's idle connections
		 * must not keep a rank out, nor end the job: the oldest
		 * one that has not authenticated makes room.
		 */
		if (dt_nofile(errno) && server_shed(s) == 0)
			continue;
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		    errno == ENOMEM) {
			/* Out of descriptors: back off instead of spinning. */
			event_del(s->lev);
			evtimer_add(s->relisten, &tv);
			if (dt_nofile(errno))
				server_nofile(s, errno);
		}
		break;
	}
	server_settle(s);
}

/* Drops connections that stalled in the handshake, mid-frame or on output. */
static void
server_sweep_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rdzv_server	*s = arg;
	struct rdzv_conn	*c, *next;
	double			 now, lim = s->cfg.io_timeout;

	now = dt_clock_s(CLOCK_MONOTONIC_COARSE);
	/* A virtual connection's closed callback may feed us: hold it. */
	s->settling = 1;
	for (c = s->conns; c != NULL; c = next) {
		next = c->next;
		if ((c->t_accept != 0 && now - c->t_accept > lim) ||
		    (c->t_in != 0 && now - c->t_in > lim) ||
		    (c->t_out != 0 && now - c->t_out > lim))
			conn_drop(c, 1);
	}
	s->settling = 0;
	server_settle(s);
}

/* Appends to a bounded message; returns how much is left. */
static size_t
msg_cat(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static size_t
msg_cat(char *buf, size_t len, const char *fmt, ...)
{
	size_t	used = strlen(buf);
	va_list	ap;

	if (used + 1 >= len)
		return 0;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
	return len - strlen(buf) - 1;
}

/* Names the hosts of pending joins with their counts (no plan). */
static void
describe_pending(struct rdzv_server *s, char *buf, size_t len)
{
	struct rdzv_conn	**v, *c;
	int			  i, j, n = 0, hosts = 0;

	msg_cat(buf, len, " (no rank plan: ranks are given by host once "
	    "all have joined; ");
	if (s->npending == 0 ||
	    (v = calloc(s->npending, sizeof(*v))) == NULL) {
		msg_cat(buf, len, "none joined)");
		return;
	}
	for (c = s->pending; c != NULL; c = c->wnext)
		v[n++] = c;
	qsort(v, n, sizeof(*v), cmp_pending);
	msg_cat(buf, len, "joined so far:");
	for (i = 0; i < n; i = j) {
		for (j = i; j < n && strcmp(v[j]->host, v[i]->host) == 0; j++)
			;
		if (hosts++ == MAX_LISTED) {
			msg_cat(buf, len, " ...");
			break;
		}
		msg_cat(buf, len, "%s %s x%d", i > 0 ? "," : "", v[i]->host,
		    j - i);
	}
	msg_cat(buf, len, ")");
	free(v);
}

/* Builds the start-timeout message naming the missing ranks and hosts. */
static char *
server_missing(struct rdzv_server *s)
{
	char	buf[RDZV_MAX_TEXT];
	int	r, listed = 0, missing = s->world - s->njoined - s->npending;

	buf[0] = '\0';
	msg_cat(buf, sizeof(buf), "rendezvous timed out after %g s: %d of "
	    "%d ranks never joined", s->cfg.start_timeout, missing, s->world);
	if (s->plan == NULL) {
		describe_pending(s, buf, sizeof(buf));
		return strdup(buf);
	}
	msg_cat(buf, sizeof(buf), ":");
	for (r = 0; r < s->world; r++) {
		if (s->slots[r].joined)
			continue;
		if (listed++ == MAX_LISTED) {
			msg_cat(buf, sizeof(buf), " and %d more",
			    missing - MAX_LISTED);
			break;
		}
		msg_cat(buf, sizeof(buf), "%s rank %d on %s (local rank %d)",
		    listed > 1 ? "," : "", r, s->plan[r].host,
		    s->plan[r].local_rank);
	}
	return strdup(buf);
}

/* The start timeout: abort everyone, then tell the launcher. */
static void
server_start_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rdzv_server	*s = arg;
	char			*msg;

	if (s->njoined == s->world)
		return;
	/*
	 * The clock ran from the ranks' start and no worker has said a word:
	 * they do not use us (env://), or not yet; a first request starts it
	 * afresh.
	 */
	if (s->cfg.start_on_first_use && !s->spoken)
		return;
	if ((msg = server_missing(s)) == NULL)
		msg = strdup("rendezvous timed out");
	rdzv_server_abort(s, msg);
	free(s->notify_timeout);
	s->notify_timeout = msg;
	server_notify(s);
}

/* Runs the launcher's callbacks; touches nothing after them. */
static void
server_notify_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rdzv_server	*s = arg;
	void			(*on_joined)(void *) = NULL;
	void			(*on_timeout)(void *, const char *) = NULL;
	void			(*on_error)(void *, const char *) = NULL;
	void			*cbarg = s->cfg.arg;
	char			*msg = NULL, *emsg = NULL;

	if (s->notify_joined) {
		s->notify_joined = 0;
		on_joined = s->cfg.on_all_joined;
	}
	if (s->notify_timeout != NULL) {
		msg = s->notify_timeout;
		s->notify_timeout = NULL;
		on_timeout = s->cfg.on_timeout;
	}
	if (s->notify_error != NULL) {
		emsg = s->notify_error;
		s->notify_error = NULL;
		on_error = s->cfg.on_error;
	}
	/* A callback may free s; the others then still run, as they should. */
	if (on_joined != NULL)
		on_joined(cbarg);
	if (on_timeout != NULL)
		on_timeout(cbarg, msg);
	if (on_error != NULL)
		on_error(cbarg, emsg);
	free(msg);
	free(emsg);
}

/* Handles woken connections, then frees the dead. */
static void
server_settle(struct rdzv_server *s)
{
	struct rdzv_conn	*c;

	if (s->settling)
		return;
	s->settling = 1;
	while ((c = s->runq) != NULL) {
		s->runq = c->rnext;
		c->inrunq = 0;
		if (!c->dead)
			conn_process(c);
	}
	while ((c = s->dead) != NULL) {
		s->dead = c->next;
		conn_free(c);
	}
	s->settling = 0;
}

void
rdzv_server_abort(struct rdzv_server *s, const char *why)
{
	struct rdzv_conn	*c, *next;
	int			 held;

	if (s->aborted)
		return;
	s->aborted = 1;
	if ((s->abort_why = strdup(why == NULL ? "job aborted" : why)) == NULL)
		s->abort_why = strdup("");
	if (s->abort_why != NULL && strlen(s->abort_why) >= RDZV_MAX_TEXT)
		s->abort_why[RDZV_MAX_TEXT - 1] = '\0';
	if (s->startev != NULL)
		event_del(s->startev);
	/*
	 * A flush may drop c (a dead socket), or, for a virtual connection,
	 * feed us more input from inside its send: nothing is handled or
	 * freed until the walk is over.
	 */
	held = s->settling;
	s->settling = 1;
	for (c = s->conns; c != NULL; c = next) {
		next = c->next;
		if (!c->authed)
			continue;
		wait_remove(c);
		conn_abort(c);
		conn_flush(c);
		conn_wake(c);
	}
	s->settling = held;	/* called from inside a settle: it goes on */
	server_settle(s);
}

/* Checks cfg and copies the plan and the index of (host, local rank). */
static int
server_copy_plan(struct rdzv_server *s, const struct rdzv_server_cfg *cfg,
    struct dt_err *e)
{
	const struct rdzv_rank_info	*ri;
	uint8_t				 key[RDZV_MAX_HOST + 5];
	int				 r;
	size_t				 hl;

	s->nnodes = cfg->nnodes;
	if ((s->plan = calloc(s->world, sizeof(*s->plan))) == NULL)
		return dt_errf(e, NULL, 0, 0, DT_ERR_NOMEM, "out of memory");
	for (r = 0; r < s->world; r++) {
		ri = &cfg->ranks[r];
		if (ri->host == NULL || (hl = strlen(ri->host)) == 0 ||
		    hl > RDZV_MAX_HOST || ri->local_rank < 0 ||
		    ri->local_rank >= ri->local_world || ri->node_rank < 0 ||
		    ri->node_rank >= cfg->nnodes)
			return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "rendezvous "
			    "plan: rank %d has a bad host, local rank or node",
			    r);
		s->plan[r] = *ri;
		s->plan[r].rank = r;
		if ((s->plan[r].host = strdup(ri->host)) == NULL)
			return dt_errf(e, NULL, 0, 0, DT_ERR_NOMEM,
			    "out of memory");
		plan_key(key, ri->host, hl, ri->local_rank);
		if (rdzv_store_find(s->index, key, hl + 5) != NULL)
			return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "rendezvous "
			    "plan: host %s local rank %d appears twice",
			    ri->host, ri->local_rank);
		if (plan_index(s, ri->host, ri->local_rank, r) != 0)
			return dt_errf(e, NULL, 0, 0, DT_ERR_NOMEM,
			    "out of memory");
	}
	return 0;
}

/* Opens, binds and listens on cfg's address; returns the fd or an error. */
static int
server_listen(struct rdzv_server *s, const struct rdzv_server_cfg *cfg,
    struct dt_err *e)
{
	struct addrinfo		 hints, *res, *ai;
	char			 port[16];
	int			 fd = -1, rc, err = 0;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	snprintf(port, sizeof(port), "%d", cfg->port);
	if ((rc = getaddrinfo(cfg->bind_addr, port, &hints, &res)) != 0)
		return dt_errf(e, NULL, 0, 0, DT_ERR_NOTFOUND, "rendezvous: "
		    "cannot resolve %s: %s", cfg->bind_addr, gai_strerror(rc));
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		if ((fd = sock_listen(ai, DT_BACKLOG_RANKS)) >= 0)
			break;
		err = errno;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return dt_errf(e, NULL, 0, 0, DT_ERR_SYS, "rendezvous: cannot "
		    "listen on %s port %d: %s", cfg->bind_addr ?
		    cfg->bind_addr : "*", cfg->port, strerror(err));
	if ((rc = sock_port(fd)) > 0)
		s->port = rc;
	s->lfd = fd;
	return 0;
}

/* Makes the server's events. */
static int
server_events(struct rdzv_server *s, struct dt_err *e)
{
	struct timeval	tv;
	double		iv;

	if (s->lfd >= 0)
		s->lev = event_new(s->base, s->lfd, EV_READ | EV_PERSIST,
		    server_accept_cb, s);
	s->sweep = event_new(s->base, -1, EV_PERSIST, server_sweep_cb, s);
	s->notify = event_new(s->base, -1, 0, server_notify_cb, s);
	s->relisten = evtimer_new(s->base, server_relisten_cb, s);
	if (s->cfg.start_timeout > 0)
		s->startev = evtimer_new(s->base, server_start_cb, s);
	if ((s->lfd >= 0 && s->lev == NULL) || s->sweep == NULL ||
	    s->notify == NULL ||
	    s->relisten == NULL ||
	    (s->cfg.start_timeout > 0 && s->startev == NULL))
		return dt_errf(e, NULL, 0, 0, DT_ERR_NOMEM, "out of memory");
	iv = s->cfg.io_timeout / 4;
	tv = tv_of(iv < 0.05 ? 0.05 : iv > 1 ? 1 : iv);
	if (s->lev != NULL)
		event_add(s->lev, NULL);
	event_add(s->sweep, &tv);
	if (s->startev != NULL && !s->cfg.start_on_first_use) {
		tv = tv_of(s->cfg.start_timeout);
		event_add(s->startev, &tv);
	}
	return 0;
}

int
rdzv_server_new(struct event_base *base, const struct rdzv_server_cfg *cfg,
    struct rdzv_server **sp, struct dt_err *e)
{
	struct rdzv_server	*s;
	int			 rc;

	*sp = NULL;
	if (cfg->world < 1 || cfg->world > (1 << 24))
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "rendezvous: a "
		    "job of %d ranks", cfg->world);
	if (cfg->secret == NULL || cfg->secret_len < RDZV_SECRET_MIN ||
	    cfg->secret_len > RDZV_SECRET_MAX)
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "rendezvous: the "
		    "job secret must have %d to %d bytes", RDZV_SECRET_MIN,
		    RDZV_SECRET_MAX);
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return dt_errf(e, NULL, 0, 0, DT_ERR_NOMEM, "out of memory");
	s->base = base;
	s->cfg = *cfg;
	s->cfg.ranks = NULL;
	s->cfg.secret = NULL;
	s->cfg.bind_addr = NULL;
	memcpy(s->secret, cfg->secret, cfg->secret_len);
	if (s->cfg.io_timeout <= 0)
		s->cfg.io_timeout = 10;
	if (s->cfg.max_conns <= 0)
		s->cfg.max_conns = cfg->world + 1024;
	s->world = cfg->world;
	s->lfd = -1;
	s->slots = calloc(s->world, sizeof(*s->slots));
	s->store = rdzv_store_new(STORE_KEYS, STORE_BYTES);
	s->index = rdzv_store_new((size_t)-1, (size_t)-1);
	s->pendix = rdzv_store_new((size_t)-1, (size_t)-1);
	if (s->slots == NULL || s->store == NULL || s->index == NULL ||
	    s->pendix == NULL) {
		rc = dt_errf(e, NULL, 0, 0, DT_ERR_NOMEM, "out of memory");
		goto fail;
	}
	if ((cfg->ranks != NULL && (rc = server_copy_plan(s, cfg, e)) != 0) ||
	    (!cfg->no_listen && (rc = server_listen(s, cfg, e)) != 0) ||
	    (rc = server_events(s, e)) != 0)
		goto fail;
	*sp = s;
	return 0;
fail:
	rdzv_server_free(s);
	return rc;
}

void
rdzv_server_start_clock(struct rdzv_server *s)
{
	struct timeval	tv;

	if (s->startev == NULL || s->njoined == s->world || s->aborted)
		return;
	tv = tv_of(s->cfg.start_timeout);
	event_add(s->startev, &tv);
}

int
rdzv_server_port(const struct rdzv_server *s)
{
	return s->port;
}

int
rdzv_server_joined(const struct rdzv_server *s, int rank)
{
	if (rank < 0 || rank >= s->world)
		return 0;
	return s->slots[rank].joined;
}

void
rdzv_server_stats(const struct rdzv_server *s, struct rdzv_server_stats *st)
{
	*st = s->st;
	st->joined = s->njoined;
	st->keys = rdzv_store_count(s->store);
}

void
rdzv_server_free(struct rdzv_server *s)
{
	struct event	**evs[5];
	size_t		  i;
	int		  r;

	if (s == NULL)
		return;
	evs[0] = &s->lev;
	evs[1] = &s->sweep;
	evs[2] = &s->startev;
	evs[3] = &s->notify;
	evs[4] = &s->relisten;
	while (s->conns != NULL)
		conn_drop(s->conns, 0);
	s->runq = NULL;
	server_settle(s);
	for (i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
		if (*evs[i] != NULL)
			event_free(*evs[i]);
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->plan != NULL)
		for (r = 0; r < s->world; r++)
			free((char *)s->plan[r].host);
	free(s->plan);
	free(s->slots);
	rdzv_store_free(s->store);
	rdzv_store_free(s->index);
	rdzv_store_free(s->pendix);
	free(s->abort_why);
	free(s->notify_timeout);
	free(s->notify_error);
	explicit_bzero(s->secret, sizeof(s->secret));
	free(s);
}
