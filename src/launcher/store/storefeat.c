/*
 * storefeat.c -- PyTorch's TCPStore served by dtrun, on the job's hooks
 * (hooks.h). Each rank dials its own host's agent (MASTER_ADDR=127.0.0.1,
 * MASTER_PORT the agent's, src/agent/rdzvrelay.c); the agent carries each
 * connection here as a channel of STORE frames, and every channel is a
 * client of one store (src/store, libdtstore) per attempt: a restart
 * starts from an empty store, on top of the attempt prefix torch adds.
 *
 * Replies are queued per host and sent once the frame that caused them
 * is served: sending to an ssh host may handle other hosts' frames
 * before it returns, and the store must not be entered while it runs.
 */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/exitcodes.h"
#include "common/log.h"
#include "common/wire.h"
#include "launcher/cli/opts.h"
#include "launcher/job/agents.h"
#include "launcher/job/hooks.h"
#include "launcher/plan/envctx.h"
#include "launcher/plan/plan.h"
#include "launcher/store/storefeat.h"
#include "proto/agentproto.h"
#include "store/tcpstore.h"
#include "util/xmalloc.h"

/* Channels a host may number past those it used (as the rendezvous). */
#define STORE_CHAN_SKIP	1024

struct storefeat;

/* One rank's connection, through its agent. */
struct schan {
	struct storefeat	*f;
	size_t			 host;
	uint32_t		 id;
	struct dts_conn		*conn;		/* NULL once closed */
	struct schan		*nextdoomed;
	int			 doomed;
};

/* One host's channels, and what is queued for its agent. */
struct store_host {
	struct schan		**ch;		/* by id - 1; NULL: closed or never */
	size_t			 nch;
	struct dt_wbuf		 out;
	int			 dirty;		/* on the flush list */
};

struct storefeat {
	const struct job_view	*v;
	struct dts_store	*st;
	struct store_host		*hosts;
	size_t			 nhosts;
	size_t			*flush;		/* hosts with bytes queued */
	size_t			 nflush;
	struct schan		*doomed;	/* broke the protocol meanwhile */
	size_t			 cut;		/* channels closed for cause */
	int			 busy;		/* inside the store */
};

/* Queues bytes for c's rank (none: its connection ends). */
static void
store_queue(struct storefeat *f, size_t host, uint32_t id, const void *p,
    size_t n)
{
	struct store_host	*sh = &f->hosts[host];

	ap_put_store(&sh->out, id, p, n);
	if (!sh->dirty) {
		sh->dirty = 1;
		f->flush[f->nflush++] = host;
	}
}

/* The store's reply for a client: queued, sent after the frame is served. */
static int
store_reply(void *cookie, const void *buf, size_t len)
{
	struct schan	*c = cookie;

	if (len > 0)
		store_queue(c->f, c->host, c->id, buf, len);
	return 0;
}

/* Sends what is queued, host by host; a send may bring more frames in. */
static void
store_flush(struct storefeat *f)
{
	struct dt_wbuf	 wb;
	struct store_host	*sh;
	size_t		 host;

	while (f->nflush > 0) {
		host = f->flush[--f->nflush];
		sh = &f->hosts[host];
		sh->dirty = 0;
		wb = sh->out;
		dt_wbuf_init(&sh->out);
		if (!host_done(f->v->hosts[host]))
			agents_send(f->v->hosts[host], &wb);
		dt_wbuf_free(&wb);
	}
}

/* Ends c: its rank's connection is closed by its agent, with why if any. */
static void
store_close(struct schan *c, const char *why)
{
	struct storefeat	*f = c->f;

	if (c->conn == NULL)
		return;
	dts_conn_free(c->conn);
	c->conn = NULL;
	store_queue(f, c->host, c->id, NULL, 0);
	if (why == NULL)
		return;
	/* torch's client has no error reply: the rank sees the close. */
	if (f->cut++ < 8)
		log_warn("store: a rank's connection on %s (channel %u) "
		    "closed: %s", f->v->plan->hosts[c->host].name, c->id, why);
}

/* A waiting client broke the protocol while another was served. */
static void
store_fail(void *cookie, int code, const char *msg)
{
	struct schan	*c = cookie;

	(void)code;
	if (c->doomed)
		return;
	c->doomed = 1;
	c->nextdoomed = c->f->doomed;
	c->f->doomed = c;
	log_debug("store: channel %u: %s", c->id, msg);
}

/* Closes those store_fail named, now that the store is not running. */
static void
store_reap(struct storefeat *f)
{
	struct schan	*c;

	while ((c = f->doomed) != NULL) {
		f->doomed = c->nextdoomed;
		store_close(c, "it broke the TCPStore protocol while it waited");
	}
}

/* h's channel id, made on its first bytes; NULL: refused (said) or gone. */
static struct schan *
store_chan(struct storefeat *f, size_t host, uint32_t id, size_t n)
{
	struct store_host	*sh = &f->hosts[host];
	struct schan	*c;
	size_t		 i;

	if (id == 0)
		return NULL;
	if (id > sh->nch) {
		if (n == 0)
			return NULL;
		if (id > sh->nch + STORE_CHAN_SKIP) {
			store_queue(f, host, id, NULL, 0);
			return NULL;
		}
		sh->ch = xreallocarray(sh->ch, id, sizeof(*sh->ch));
		for (i = sh->nch; i < id; i++)
			sh->ch[i] = NULL;
		sh->nch = id;
	}
	if ((c = sh->ch[id - 1]) != NULL || n == 0)
		return c;
	c = sh->ch[id - 1] = xcalloc(1, sizeof(*c));
	c->f = f;
	c->host = host;
	c->id = id;
	if ((c->conn = dts_conn_new(f->st, c)) == NULL) {
		log_error("store: out of memory");
		exit(EXIT_INTERNAL);
	}
	return c;
}

/* STORE: a rank's bytes for the store, or the end of its connection. */
static void
storefeat_input(void *arg, struct job_host *h, uint32_t id,
    const uint8_t *p, size_t n)
{
	struct storefeat	*f = arg;
	struct schan		*c;
	struct dt_err		 e;
	size_t			 host = (size_t)h->index;

	if (h->index < 0 || host >= f->nhosts || f->busy)
		return;
	if ((c = store_chan(f, host, id, n)) != NULL && c->conn != NULL) {
		f->busy = 1;
		if (n == 0) {
			dts_conn_free(c->conn);
			c->conn = NULL;
		} else if (dts_conn_feed(c->conn, p, n, &e) != 0) {
			f->busy = 0;
			store_close(c, e.msg);
		}
		f->busy = 0;
	}
	store_reap(f);
	store_flush(f);
}

/* Frees host's channels (its agent is gone, or the attempt is). */
static void
store_drop(struct storefeat *f, size_t host)
{
	struct store_host	*sh = &f->hosts[host];
	size_t		 i;

	for (i = 0; i < sh->nch; i++) {
		if (sh->ch[i] == NULL)
			continue;
		if (sh->ch[i]->conn != NULL)
			dts_conn_free(sh->ch[i]->conn);
		free(sh->ch[i]);
	}
	free(sh->ch);
	sh->ch = NULL;
	sh->nch = 0;
}

static int
storefeat_open(const struct job_view *v, void *kept, void **state,
    struct dt_err *e)
{
	struct dts_cfg		 cfg;
	struct storefeat	*f;

	(void)kept;
	if (!v->env->store || v->o->check)
		return 0;
	f = xcalloc(1, sizeof(*f));
	f->v = v;
	f->nhosts = v->plan->nhosts;
	f->hosts = xcalloc(f->nhosts ? f->nhosts : 1, sizeof(*f->hosts));
	f->flush = xcalloc(f->nhosts ? f->nhosts : 1, sizeof(*f->flush));
	memset(&cfg, 0, sizeof(cfg));
	cfg.reply = store_reply;
	cfg.fail = store_fail;
	*state = f;
	if ((f->st = dts_store_new(&cfg, e)) == NULL)
		return -1;
	return 0;
}

static void
storefeat_host_lost(void *arg, size_t host)
{
	struct storefeat	*f = arg;

	if (host < f->nhosts)
		store_drop(f, host);
}

static void
storefeat_close(void *arg)
{
	struct storefeat	*f = arg;
	struct dts_stats	 s;
	size_t			 i;

	if (f->st != NULL) {
		dts_store_stats(f->st, &s);
		log_info("store: %zu queries served, %zu keys of %zu bytes "
		    "at the end", s.queries, s.keys, s.bytes);
	}
	for (i = 0; i < f->nhosts; i++) {
		store_drop(f, i);
		dt_wbuf_free(&f->hosts[i].out);
	}
	dts_store_free(f->st);
	free(f->hosts);
	free(f->flush);
	free(f);
}

const struct job_feature store_feature = {
	.name = "store",
	.open = storefeat_open,
	.close = storefeat_close,
	.host_lost = storefeat_host_lost,
	.store = storefeat_input,
};
