/* agentproto.c -- encode and decode the launcher <-> agent messages; no I/O. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "proto/agentproto.h"
#include "common/pack.h"

_Static_assert(AP_PACKED == PACK_TYPE, "PACKED is the link's frame type");

/* Closes the frame started at st; returns 0 or an error. */
static int
put_end(struct dt_wbuf *b, size_t st)
{
	return dt_frame_end(b, st, AP_FRAME_MAX);
}

/* Closes a JOB or RANK started at st: in parts if it is over a frame. */
static int
put_end_parts(struct dt_wbuf *b, size_t st)
{
	return dt_frame_end_parts(b, st, AP_FRAME_MAX, AP_CONT, AP_MSG_MAX);
}

/* Appends a vector of strings, checking the limits the decoder will. */
static int
put_strv(struct dt_wbuf *b, char *const *v, size_t n)
{
	size_t	i;

	if (n > AP_MAX_STRS)
		return DT_ERR_TOOBIG;
	for (i = 0; i < n; i++)
		if (strlen(v[i]) > AP_MAX_STR)
			return DT_ERR_TOOBIG;
	dt_wbuf_strv(b, v, n);
	return 0;
}

int
ap_put_hello(struct dt_wbuf *b, const struct ap_hello *h)
{
	size_t	st = dt_frame_begin(b, AP_HELLO);

	dt_wbuf_u32(b, h->version);
	dt_wbuf_str(b, h->hostname);
	dt_wbuf_u32(b, h->pid);
	dt_wbuf_u32(b, (uint32_t)h->free_port);
	return put_end(b, st);
}

int
ap_put_job(struct dt_wbuf *b, const struct ap_job *j)
{
	const char	*setup = j->setup != NULL ? j->setup : "";
	const char	*iface = j->iface != NULL ? j->iface : "";
	const char	*rank0 = j->rank0 != NULL ? j->rank0 : "";
	size_t		 st = b->len;

	if (j->nranks > AP_MAX_RANKS)
		return DT_ERR_TOOBIG;
	dt_frame_begin(b, AP_JOB);
	dt_wbuf_u32(b, j->version);
	dt_wbuf_str(b, j->job_id);
	dt_wbuf_str(b, j->cwd);
	dt_wbuf_u64(b, j->kill_grace_ms);
	dt_wbuf_u32(b, j->nranks);
	if (put_strv(b, j->env, j->nenv) != 0 ||
	    strlen(setup) > AP_MAX_STR || strlen(iface) > AP_IFACE_MAX ||
	    strlen(rank0) > AP_IFACE_MAX) {
		b->len = st;
		return DT_ERR_TOOBIG;
	}
	dt_wbuf_str(b, setup);
	dt_wbuf_str(b, iface);
	dt_wbuf_str(b, rank0);
	dt_wbuf_u8(b, j->ifvars);
	dt_wbuf_u8(b, j->pack);
	if (put_strv(b, j->defaults, j->ndefaults) != 0) {
		b->len = st;
		return DT_ERR_TOOBIG;
	}
	dt_wbuf_u8(b, j->errfile);
	return put_end_parts(b, st);
}

int
ap_put_rank(struct dt_wbuf *b, const struct ap_rank *r)
{
	size_t	st = dt_frame_begin(b, AP_RANK);

	dt_wbuf_u32(b, r->rank);
	dt_wbuf_u32(b, r->local_rank);
	if (put_strv(b, r->argv, r->argc) != 0 ||
	    put_strv(b, r->env, r->nenv) != 0) {
		b->len = st;
		return DT_ERR_TOOBIG;
	}
	return put_end_parts(b, st);
}

int
ap_put_empty(struct dt_wbuf *b, enum ap_type t)
{
	return put_end(b, dt_frame_begin(b, t));
}

int
ap_put_signal(struct dt_wbuf *b, uint32_t signo)
{
	size_t	st = dt_frame_begin(b, AP_SIGNAL);

	dt_wbuf_u32(b, signo);
	return put_end(b, st);
}

int
ap_put_stop(struct dt_wbuf *b, const struct ap_stop *s)
{
	size_t	st = dt_frame_begin(b, AP_STOP);

	dt_wbuf_u32(b, s->signo);
	dt_wbuf_u64(b, s->grace_ms);
	return put_end(b, st);
}

int
ap_put_ports(struct dt_wbuf *b, uint32_t n)
{
	size_t	st = dt_frame_begin(b, AP_PORTS);

	dt_wbuf_u32(b, n);
	return put_end(b, st);
}

int
ap_put_portlist(struct dt_wbuf *b, const int *ports, uint32_t n)
{
	size_t		st = dt_frame_begin(b, AP_PORTLIST);
	uint32_t	i;

	dt_wbuf_u32(b, n);
	for (i = 0; i < n; i++)
		dt_wbuf_u16(b, (uint16_t)ports[i]);
	return put_end(b, st);
}

int
ap_put_progress(struct dt_wbuf *b, const struct ap_progress *v, uint32_t n)
{
	size_t		st = dt_frame_begin(b, AP_PROGRESS);
	uint32_t	i;

	dt_wbuf_u32(b, n);
	for (i = 0; i < n; i++) {
		dt_wbuf_u32(b, v[i].rank);
		dt_wbuf_u8(b, v[i].flags);
		dt_wbuf_u64(b, v[i].step);
		dt_wbuf_u32(b, v[i].age_ms);
		dt_wbuf_u64(b, v[i].cpu_ms);
		dt_wbuf_u32(b, v[i].rss_kb);
	}
	return put_end(b, st);
}

int
ap_put_colls(struct dt_wbuf *b, uint64_t now_ns, const struct ap_coll *v,
    uint32_t n)
{
	size_t		st = dt_frame_begin(b, AP_COLLS);
	uint32_t	i;

	dt_wbuf_u64(b, now_ns);
	dt_wbuf_u32(b, n);
	for (i = 0; i < n; i++) {
		dt_wbuf_u32(b, v[i].rank);
		dt_wbuf_u32(b, v[i].nranks);
		dt_wbuf_u64(b, v[i].comm);
		dt_wbuf_u64(b, v[i].seq);
		dt_wbuf_u64(b, v[i].ns);
	}
	return put_end(b, st);
}

int
ap_put_waits(struct dt_wbuf *b, const struct ap_wait *v, uint32_t n)
{
	size_t		st = dt_frame_begin(b, AP_WAITS);
	uint32_t	i;

	dt_wbuf_u32(b, n);
	for (i = 0; i < n; i++) {
		dt_wbuf_u32(b, v[i].rank);
		dt_wbuf_u32(b, v[i].wall_ms);
		dt_wbuf_u16(b, v[i].samples);
		dt_wbuf_u16(b, v[i].work);
		dt_wbuf_u16(b, v[i].peer);
		dt_wbuf_u16(b, v[i].input);
		dt_wbuf_u32(b, v[i].cpu_ms);
		dt_wbuf_u32(b, v[i].delay_ms);
		dt_wbuf_str(b, v[i].what != NULL ? v[i].what : "");
	}
	return put_end(b, st);
}

int
ap_put_started(struct dt_wbuf *b, uint32_t rank, uint32_t pid)
{
	size_t	st = dt_frame_begin(b, AP_STARTED);

	dt_wbuf_u32(b, rank);
	dt_wbuf_u32(b, pid);
	return put_end(b, st);
}

/* OUTPUT's fields before its data: u32 rank, u8 stream. */
#define AP_OUTPUT_HDR	5

uint8_t *
ap_output_begin(struct dt_wbuf *b, uint32_t rank, uint8_t stream, size_t max,
    size_t *st)
{
	*st = dt_frame_begin(b, AP_OUTPUT);
	dt_wbuf_u32(b, rank);
	dt_wbuf_u8(b, stream);
	return dt_wbuf_reserve(b, max);	/* the rest of the payload */
}

int
ap_output_end(struct dt_wbuf *b, size_t st, size_t n)
{
	if (b->oom)
		return DT_ERR_NOMEM;
	b->len = st + DT_FRAME_HDR + AP_OUTPUT_HDR + n;
	return put_end(b, st);
}

int
ap_output_end_head(struct dt_wbuf *b, size_t st, size_t n)
{
	size_t	head = b->len;
	int	rc;

	if ((rc = ap_output_end(b, st, n)) == 0)
		b->len = head;
	return rc;
}

int
ap_put_output(struct dt_wbuf *b, uint32_t rank, uint8_t stream,
    const void *data, size_t len)
{
	size_t	 st;
	uint8_t	*p = ap_output_begin(b, rank, stream, len, &st);

	if (p == NULL)
		return DT_ERR_NOMEM;
	if (len > 0)
		memcpy(p, data, len);
	return ap_output_end(b, st, len);
}

int
ap_put_exit(struct dt_wbuf *b, const struct ap_exit *x)
{
	size_t	st = dt_frame_begin(b, AP_EXIT);

	dt_wbuf_u32(b, x->rank);
	dt_wbuf_u8(b, x->how);
	dt_wbuf_u32(b, x->code);
	return put_end(b, st);
}

int
ap_put_error(struct dt_wbuf *b, const struct ap_error *e)
{
	size_t	st = dt_frame_begin(b, AP_ERROR), len = strlen(e->msg);

	dt_wbuf_u32(b, e->rank);
	dt_wbuf_u32(b, e->code);
	/* Never what the decoder refuses: past AP_ERRMSG_MAX, cut. */
	dt_wbuf_blob(b, e->msg, len > AP_ERRMSG_MAX ? AP_ERRMSG_MAX : len);
	return put_end(b, st);
}

int
ap_put_errfile(struct dt_wbuf *b, const struct ap_errfile *f)
{
	size_t	st, len = f->len;

	if (strlen(f->path) > AP_CWD_MAX)
		return DT_ERR_TOOBIG;
	/* A person reads the first screenful; the size says what was left. */
	if (len > AP_ERRFILE_MAX)
		len = AP_ERRFILE_MAX;
	if (len > f->size)
		len = f->size;
	st = dt_frame_begin(b, AP_ERRFILE);
	dt_wbuf_u32(b, f->rank);
	dt_wbuf_str(b, f->path);
	dt_wbuf_u32(b, f->size);
	dt_wbuf_put(b, f->data, len);
	return put_end(b, st);
}

int
ap_put_heartbeat(struct dt_wbuf *b, uint64_t timeout_ms)
{
	size_t	st = dt_frame_begin(b, AP_HEARTBEAT);

	dt_wbuf_u64(b, timeout_ms);
	return put_end(b, st);
}

int
ap_put_stack(struct dt_wbuf *b, const struct ap_stack *k)
{
	static const char cut[] = "\n[cut: the stack was longer]\n";
	size_t	st = dt_frame_begin(b, AP_STACK), len = strlen(k->text);

	dt_wbuf_u32(b, k->rank);
	dt_wbuf_u32(b, k->pid);
	dt_wbuf_u8(b, k->status);
	dt_wbuf_str(b, k->tool);
	/* One frame is plenty for any stack a person reads: cut the rest. */
	if (len > AP_STACK_MAX) {
		dt_wbuf_u32(b, AP_STACK_MAX + sizeof(cut) - 1);
		dt_wbuf_put(b, k->text, AP_STACK_MAX);
		dt_wbuf_put(b, cut, sizeof(cut) - 1);
	} else
		dt_wbuf_str(b, k->text);
	return put_end(b, st);
}

int
ap_put_iface(struct dt_wbuf *b, const struct ap_iface *f)
{
	size_t	st = dt_frame_begin(b, AP_IFACE);

	if (strlen(f->name) > AP_IFACE_MAX || strlen(f->addr) > AP_IFACE_MAX ||
	    strlen(f->why) > AP_IFACE_MAX) {
		b->len = st;
		return DT_ERR_TOOBIG;
	}
	dt_wbuf_u8(b, f->ok);
	dt_wbuf_str(b, f->name);
	dt_wbuf_str(b, f->addr);
	dt_wbuf_str(b, f->why);
	return put_end(b, st);
}

int
ap_put_check(struct dt_wbuf *b, const struct ap_check *c)
{
	size_t		 st = dt_frame_begin(b, AP_CHECK);
	const char	*setup = c->setup != NULL ? c->setup : "";
	const char	*key = c->key != NULL ? c->key : "";

	if ((key[0] != '\0' && strlen(key) != AP_CHK_KEY_HEX) ||
	    strlen(c->iface) > AP_MAX_STR || strlen(c->target) > AP_MAX_STR ||
	    strlen(c->cmd) > AP_MAX_STR || strlen(c->cwd) > 4096 ||
	    strlen(setup) > AP_MAX_STR) {
		b->len = st;
		return DT_ERR_TOOBIG;
	}
	dt_wbuf_u32(b, c->step);
	dt_wbuf_u32(b, c->flags);
	dt_wbuf_u64(b, c->now_ms);
	dt_wbuf_str(b, c->iface);
	dt_wbuf_str(b, c->target);
	dt_wbuf_str(b, c->cmd);
	dt_wbuf_str(b, c->cwd);
	if (put_strv(b, c->env, c->nenv) != 0) {
		b->len = st;
		return DT_ERR_TOOBIG;
	}
	dt_wbuf_str(b, setup);
	dt_wbuf_u64(b, c->bytes);
	dt_wbuf_u32(b, c->streams);
	dt_wbuf_str(b, key);
	return put_end(b, st);		/* one frame, never in parts */
}

int
ap_put_checked(struct dt_wbuf *b, const struct ap_checked *c)
{
	size_t	st = dt_frame_begin(b, AP_CHECKED);

	if (c->nkv > AP_CHK_KV_MAX) {
		b->len = st;
		return DT_ERR_TOOBIG;
	}
	dt_wbuf_u32(b, c->step);
	dt_wbuf_u64(b, c->now_ms);
	dt_wbuf_u64(b, c->took_ms);
	if (put_strv(b, c->kv, c->nkv) != 0) {
		b->len = st;
		return DT_ERR_TOOBIG;
	}
	return put_end(b, st);
}

int
ap_get_hello(const uint8_t *p, size_t n, struct ap_hello *h)
{
	struct dt_rbuf	r;
	uint32_t	port;

	memset(h, 0, sizeof(*h));
	dt_rbuf_init(&r, p, n);
	h->version = dt_rbuf_u32(&r);
	h->hostname = dt_rbuf_strdup(&r, AP_HOST_MAX);
	h->pid = dt_rbuf_u32(&r);
	port = dt_rbuf_u32(&r);
	/* 0: the agent found none free. */
	if (dt_rbuf_end(&r) != 0 || port > DT_PORT_MAX) {
		ap_hello_free(h);
		return DT_ERR_PROTO;
	}
	h->free_port = (int)port;
	return 0;
}

int
ap_get_job(const uint8_t *p, size_t n, struct ap_job *j)
{
	struct dt_rbuf	r;

	memset(j, 0, sizeof(*j));
	dt_rbuf_init(&r, p, n);
	j->version = dt_rbuf_u32(&r);
	j->job_id = dt_rbuf_strdup(&r, AP_JOBID_MAX);
	j->cwd = dt_rbuf_strdup(&r, AP_CWD_MAX);
	j->kill_grace_ms = dt_rbuf_u64(&r);
	j->nranks = dt_rbuf_u32(&r);
	j->env = dt_rbuf_strv(&r, AP_MAX_STRS, AP_MAX_STR, &j->nenv);
	j->setup = dt_rbuf_strdup(&r, AP_MAX_STR);
	j->iface = dt_rbuf_strdup(&r, AP_IFACE_MAX);
	j->rank0 = dt_rbuf_strdup(&r, AP_IFACE_MAX);
	j->ifvars = dt_rbuf_u8(&r);
	j->pack = dt_rbuf_u8(&r);
	j->defaults = dt_rbuf_strv(&r, AP_MAX_STRS, AP_MAX_STR, &j->ndefaults);
	j->errfile = dt_rbuf_u8(&r);
	/* The agent keeps a slot for every rank announced: bound them. */
	if (dt_rbuf_end(&r) != 0 || j->nranks > AP_MAX_RANKS ||
	    (j->ifvars & ~AP_IF_ALL) != 0 || j->pack > 1 || j->errfile > 1) {
		ap_job_free(j);
		return DT_ERR_PROTO;
	}
	return 0;
}

int
ap_get_rank(const uint8_t *p, size_t n, struct ap_rank *x)
{
	struct dt_rbuf	r;

	memset(x, 0, sizeof(*x));
	dt_rbuf_init(&r, p, n);
	x->rank = dt_rbuf_u32(&r);
	x->local_rank = dt_rbuf_u32(&r);
	x->argv = dt_rbuf_strv(&r, AP_MAX_STRS, AP_MAX_STR, &x->argc);
	x->env = dt_rbuf_strv(&r, AP_MAX_STRS, AP_MAX_STR, &x->nenv);
	if (dt_rbuf_end(&r) != 0 || x->argc == 0) {
		ap_rank_free(x);
		return DT_ERR_PROTO;
	}
	return 0;
}

int
ap_get_u32(const uint8_t *p, size_t n, uint32_t *v)
{
	struct dt_rbuf	r;

	dt_rbuf_init(&r, p, n);
	*v = dt_rbuf_u32(&r);
	return dt_rbuf_end(&r);
}

int
ap_get_stop(const uint8_t *p, size_t n, struct ap_stop *s)
{
	struct dt_rbuf	r;

	dt_rbuf_init(&r, p, n);
	s->signo = dt_rbuf_u32(&r);
	s->grace_ms = dt_rbuf_u64(&r);
	return dt_rbuf_end(&r);
}

int
ap_get_portlist(const uint8_t *p, size_t n, int **ports, uint32_t *np)
{
	struct dt_rbuf	r;
	uint32_t	i, k;

	*ports = NULL;
	*np = 0;
	dt_rbuf_init(&r, p, n);
	k = dt_rbuf_u32(&r);
	/* Two bytes a port: the count must match what is there. */
	if (r.err || k > AP_MAX_PORTS || dt_rbuf_left(&r) != (size_t)k * 2)
		return DT_ERR_PROTO;
	if (k > 0 && (*ports = calloc(k, sizeof(**ports))) == NULL)
		return DT_ERR_NOMEM;
	for (i = 0; i < k; i++)
		(*ports)[i] = dt_rbuf_u16(&r);
	*np = k;
	return 0;
}

int
ap_get_progress(const uint8_t *p, size_t n, struct ap_progress **v,
    uint32_t *np)
{
	struct dt_rbuf	r;
	uint32_t	i, k;

	*v = NULL;
	*np = 0;
	dt_rbuf_init(&r, p, n);
	k = dt_rbuf_u32(&r);
	/* The count must match what is there. */
	if (r.err || k > AP_MAX_RANKS ||
	    dt_rbuf_left(&r) != (size_t)k * AP_PROGRESS_ITEM)
		return DT_ERR_PROTO;
	if (k > 0 && (*v = calloc(k, sizeof(**v))) == NULL)
		return DT_ERR_NOMEM;
	for (i = 0; i < k; i++) {
		(*v)[i].rank = dt_rbuf_u32(&r);
		(*v)[i].flags = dt_rbuf_u8(&r);
		(*v)[i].step = dt_rbuf_u64(&r);
		(*v)[i].age_ms = dt_rbuf_u32(&r);
		(*v)[i].cpu_ms = dt_rbuf_u64(&r);
		(*v)[i].rss_kb = dt_rbuf_u32(&r);
	}
	*np = k;
	return 0;
}

int
ap_get_colls(const uint8_t *p, size_t n, uint64_t *now_ns, struct ap_coll **v,
    uint32_t *np)
{
	struct dt_rbuf	r;
	uint32_t	i, k;

	*v = NULL;
	*np = 0;
	dt_rbuf_init(&r, p, n);
	*now_ns = dt_rbuf_u64(&r);
	k = dt_rbuf_u32(&r);
	if (r.err || k > AP_MAX_COLLS ||
	    dt_rbuf_left(&r) != (size_t)k * AP_COLL_ITEM)
		return DT_ERR_PROTO;
	if (k > 0 && (*v = calloc(k, sizeof(**v))) == NULL)
		return DT_ERR_NOMEM;
	for (i = 0; i < k; i++) {
		(*v)[i].rank = dt_rbuf_u32(&r);
		(*v)[i].nranks = dt_rbuf_u32(&r);
		(*v)[i].comm = dt_rbuf_u64(&r);
		(*v)[i].seq = dt_rbuf_u64(&r);
		(*v)[i].ns = dt_rbuf_u64(&r);
	}
	*np = k;
	return 0;
}

void
ap_waits_free(struct ap_wait *v, uint32_t n)
{
	uint32_t	i;

	for (i = 0; v != NULL && i < n; i++)
		free(v[i].what);
	free(v);
}

/* The classes cannot hold more samples than were taken. */
int
ap_get_waits(const uint8_t *p, size_t n, struct ap_wait **v, uint32_t *np)
{
	struct dt_rbuf	 r;
	struct ap_wait	*w;
	uint32_t	 i, k;

	*v = NULL;
	*np = 0;
	dt_rbuf_init(&r, p, n);
	k = dt_rbuf_u32(&r);
	/* An item is at least 28 bytes: a lying count allocates nothing. */
	if (r.err || k > AP_MAX_WAITS || dt_rbuf_left(&r) / 28 < k)
		return DT_ERR_PROTO;
	if (k > 0 && (*v = calloc(k, sizeof(**v))) == NULL)
		return DT_ERR_NOMEM;
	for (i = 0; i < k; i++) {
		w = &(*v)[i];
		w->rank = dt_rbuf_u32(&r);
		w->wall_ms = dt_rbuf_u32(&r);
		w->samples = dt_rbuf_u16(&r);
		w->work = dt_rbuf_u16(&r);
		w->peer = dt_rbuf_u16(&r);
		w->input = dt_rbuf_u16(&r);
		w->cpu_ms = dt_rbuf_u32(&r);
		w->delay_ms = dt_rbuf_u32(&r);
		w->what = dt_rbuf_strdup(&r, AP_WAIT_WHAT_MAX);
		if (r.err || (uint32_t)w->work + w->peer + w->input > w->samples) {
			ap_waits_free(*v, i + 1);
			*v = NULL;
			return DT_ERR_PROTO;
		}
	}
	if (dt_rbuf_end(&r) != 0) {
		ap_waits_free(*v, k);
		*v = NULL;
		return DT_ERR_PROTO;
	}
	*np = k;
	return 0;
}

int
ap_get_started(const uint8_t *p, size_t n, uint32_t *rank, uint32_t *pid)
{
	struct dt_rbuf	r;

	dt_rbuf_init(&r, p, n);
	*rank = dt_rbuf_u32(&r);
	*pid = dt_rbuf_u32(&r);
	return dt_rbuf_end(&r);
}

int
ap_get_output(const uint8_t *p, size_t n, struct ap_output *o)
{
	struct dt_rbuf	r;

	dt_rbuf_init(&r, p, n);
	o->rank = dt_rbuf_u32(&r);
	o->stream = dt_rbuf_u8(&r);
	if (r.err || (o->stream != AP_STDOUT && o->stream != AP_STDERR))
		return DT_ERR_PROTO;
	o->data = p + r.off;
	o->len = dt_rbuf_left(&r);
	return 0;
}

/* RDZV and STORE: a channel's bytes. */
static int
put_chan(struct dt_wbuf *b, int type, uint32_t chan, const void *p, size_t n)
{
	size_t	st = dt_frame_begin(b, type);

	dt_wbuf_u32(b, chan);
	dt_wbuf_put(b, p, n);		/* the rest of the payload */
	return put_end(b, st);
}

int
ap_put_rdzv(struct dt_wbuf *b, uint32_t chan, const void *p, size_t n)
{
	return put_chan(b, AP_RDZV, chan, p, n);
}

int
ap_put_store(struct dt_wbuf *b, uint32_t chan, const void *p, size_t n)
{
	return put_chan(b, AP_STORE, chan, p, n);
}

int
ap_get_rdzv(const uint8_t *p, size_t n, uint32_t *chan, const uint8_t **data,
    size_t *len)
{
	struct dt_rbuf	r;

	dt_rbuf_init(&r, p, n);
	*chan = dt_rbuf_u32(&r);
	if (r.err)
		return DT_ERR_PROTO;
	*data = p + r.off;
	*len = dt_rbuf_left(&r);
	return 0;
}

int
ap_get_exit(const uint8_t *p, size_t n, struct ap_exit *x)
{
	struct dt_rbuf	r;

	dt_rbuf_init(&r, p, n);
	x->rank = dt_rbuf_u32(&r);
	x->how = dt_rbuf_u8(&r);
	x->code = dt_rbuf_u32(&r);
	if (x->how > AP_NOSTART)
		return DT_ERR_PROTO;
	return dt_rbuf_end(&r);
}

int
ap_get_errfile(const uint8_t *p, size_t n, struct ap_errfile *f)
{
	struct dt_rbuf	r;

	memset(f, 0, sizeof(*f));
	dt_rbuf_init(&r, p, n);
	f->rank = dt_rbuf_u32(&r);
	f->path = dt_rbuf_strdup(&r, AP_CWD_MAX);
	f->size = dt_rbuf_u32(&r);
	f->len = dt_rbuf_left(&r);
	f->data = p + r.off;
	if (r.err || f->len > AP_ERRFILE_MAX || f->len > f->size) {
		ap_errfile_free(f);
		return DT_ERR_PROTO;
	}
	return 0;
}

int
ap_get_error(const uint8_t *p, size_t n, struct ap_error *e)
{
	struct dt_rbuf	r;

	memset(e, 0, sizeof(*e));
	dt_rbuf_init(&r, p, n);
	e->rank = dt_rbuf_u32(&r);
	e->code = dt_rbuf_u32(&r);
	e->msg = dt_rbuf_strdup(&r, AP_ERRMSG_MAX);
	if (dt_rbuf_end(&r) != 0) {
		ap_error_free(e);
		return DT_ERR_PROTO;
	}
	return 0;
}

int
ap_get_stack(const uint8_t *p, size_t n, struct ap_stack *k)
{
	struct dt_rbuf	r;

	memset(k, 0, sizeof(*k));
	dt_rbuf_init(&r, p, n);
	k->rank = dt_rbuf_u32(&r);
	k->pid = dt_rbuf_u32(&r);
	k->status = dt_rbuf_u8(&r);
	k->tool = dt_rbuf_strdup(&r, AP_TOOL_MAX);
	k->text = dt_rbuf_strdup(&r, AP_FRAME_MAX);
	if (dt_rbuf_end(&r) != 0 || k->status > AP_STK_FAILED) {
		ap_stack_free(k);
		return DT_ERR_PROTO;
	}
	return 0;
}

int
ap_get_iface(const uint8_t *p, size_t n, struct ap_iface *f)
{
	struct dt_rbuf	r;

	memset(f, 0, sizeof(*f));
	dt_rbuf_init(&r, p, n);
	f->ok = dt_rbuf_u8(&r);
	f->name = dt_rbuf_strdup(&r, AP_IFACE_MAX);
	f->addr = dt_rbuf_strdup(&r, AP_IFACE_MAX);
	f->why = dt_rbuf_strdup(&r, AP_IFACE_MAX);
	/* A choice names an interface; a refusal says why. */
	if (dt_rbuf_end(&r) != 0 || f->ok > 1 ||
	    (f->ok && (f->name[0] == '\0' || f->addr[0] == '\0')) ||
	    (!f->ok && f->why[0] == '\0')) {
		ap_iface_free(f);
		return DT_ERR_PROTO;
	}
	return 0;
}

int
ap_get_check(const uint8_t *p, size_t n, struct ap_check *c)
{
	struct dt_rbuf	r;

	memset(c, 0, sizeof(*c));
	dt_rbuf_init(&r, p, n);
	c->step = dt_rbuf_u32(&r);
	c->flags = dt_rbuf_u32(&r);
	c->now_ms = dt_rbuf_u64(&r);
	c->iface = dt_rbuf_strdup(&r, AP_MAX_STR);
	c->target = dt_rbuf_strdup(&r, AP_MAX_STR);
	c->cmd = dt_rbuf_strdup(&r, AP_MAX_STR);
	c->cwd = dt_rbuf_strdup(&r, 4096);
	c->env = dt_rbuf_strv(&r, AP_MAX_STRS, AP_MAX_STR, &c->nenv);
	c->setup = dt_rbuf_strdup(&r, AP_MAX_STR);
	c->bytes = dt_rbuf_u64(&r);
	c->streams = dt_rbuf_u32(&r);
	c->key = dt_rbuf_strdup(&r, AP_CHK_KEY_HEX);
	if (dt_rbuf_end(&r) != 0 || (c->key != NULL && c->key[0] != '\0' &&
	    strlen(c->key) != AP_CHK_KEY_HEX) || c->step < AP_CHK_GATHER ||
	    c->step > AP_CHK_PAIR || (c->flags & ~(uint32_t)(AP_CHK_FAST |
	    AP_CHK_LISTEN | AP_CHK_DEEP)) != 0 || (c->step == AP_CHK_PAIR &&
	    c->bytes > 0 && (c->streams == 0 ||
	    c->streams > AP_CHK_STREAMS_MAX))) {
		ap_check_free(c);
		return DT_ERR_PROTO;
	}
	return 0;
}

int
ap_get_checked(const uint8_t *p, size_t n, struct ap_checked *c)
{
	struct dt_rbuf	r;

	memset(c, 0, sizeof(*c));
	dt_rbuf_init(&r, p, n);
	c->step = dt_rbuf_u32(&r);
	c->now_ms = dt_rbuf_u64(&r);
	c->took_ms = dt_rbuf_u64(&r);
	c->kv = dt_rbuf_strv(&r, AP_CHK_KV_MAX, AP_MAX_STR, &c->nkv);
	if (dt_rbuf_end(&r) != 0 || c->step < AP_CHK_GATHER ||
	    c->step > AP_CHK_PAIR) {
		ap_checked_free(c);
		return DT_ERR_PROTO;
	}
	return 0;
}

int
ap_get_empty(const uint8_t *p, size_t n)
{
	return n == 0 ? 0 : DT_ERR_PROTO;
}

int
ap_get_heartbeat(const uint8_t *p, size_t n, uint64_t *timeout_ms)
{
	struct dt_rbuf	r;

	dt_rbuf_init(&r, p, n);
	*timeout_ms = dt_rbuf_u64(&r);
	if (dt_rbuf_end(&r) != 0 || *timeout_ms == 0 ||
	    *timeout_ms > AP_HEARTBEAT_MAX_MS)
		return DT_ERR_PROTO;
	return 0;
}

void
ap_reasm_init(struct ap_reasm *a)
{
	dt_wbuf_init(&a->buf);
	a->parts = 0;
}

int
ap_reasm_feed(struct ap_reasm *a, uint8_t type, const uint8_t **p,
    size_t *n)
{
	if (a->parts == 0)
		dt_wbuf_reset(&a->buf);		/* the last message's */
	if (type != AP_CONT && a->parts == 0)
		return 1;			/* one frame: as it came */
	/* Only these are ever sent in parts, and never an empty part. */
	if ((type != AP_CONT && type != AP_JOB && type != AP_RANK) ||
	    (type == AP_CONT && *n == 0) || *n > AP_MSG_MAX - a->buf.len)
		return DT_ERR_PROTO;
	dt_wbuf_put(&a->buf, *p, *n);
	if (a->buf.oom)
		return DT_ERR_NOMEM;
	if (type == AP_CONT) {
		a->parts++;
		return 0;
	}
	a->parts = 0;
	*p = a->buf.p;
	*n = a->buf.len;
	return 1;
}

void
ap_reasm_free(struct ap_reasm *a)
{
	dt_wbuf_free(&a->buf);
	a->parts = 0;
}

void
ap_hello_free(struct ap_hello *h)
{
	free(h->hostname);
	h->hostname = NULL;
}

void
ap_job_free(struct ap_job *j)
{
	free(j->job_id);
	free(j->cwd);
	dt_strv_free(j->env);
	free(j->setup);
	free(j->iface);
	free(j->rank0);
	dt_strv_free(j->defaults);
	memset(j, 0, sizeof(*j));
}

void
ap_rank_free(struct ap_rank *x)
{
	dt_strv_free(x->argv);
	dt_strv_free(x->env);
	memset(x, 0, sizeof(*x));
}

void
ap_error_free(struct ap_error *e)
{
	free(e->msg);
	e->msg = NULL;
}

void
ap_errfile_free(struct ap_errfile *f)
{
	free(f->path);
	f->path = NULL;
}

void
ap_stack_free(struct ap_stack *k)
{
	free(k->tool);
	free(k->text);
	k->tool = k->text = NULL;
}

void
ap_iface_free(struct ap_iface *f)
{
	free(f->name);
	free(f->addr);
	free(f->why);
	f->name = f->addr = f->why = NULL;
}

void
ap_check_free(struct ap_check *c)
{
	free(c->iface);
	free(c->target);
	free(c->cmd);
	free(c->cwd);
	dt_strv_free(c->env);
	free(c->setup);
	free(c->key);
	memset(c, 0, sizeof(*c));
}

void
ap_checked_free(struct ap_checked *c)
{
	dt_strv_free(c->kv);
	memset(c, 0, sizeof(*c));
}

const char *
ap_type_name(int t)
{
	switch (t) {
	case AP_JOB:		return "JOB";
	case AP_RANK:		return "RANK";
	case AP_PREPARE:	return "PREPARE";
	case AP_START:		return "START";
	case AP_SIGNAL:		return "SIGNAL";
	case AP_STOP:		return "STOP";
	case AP_PORTS:		return "PORTS";
	case AP_CONT:		return "CONT";
	case AP_PORTLIST:	return "PORTLIST";
	case AP_HELLO:		return "HELLO";
	case AP_PREPARED:	return "PREPARED";
	case AP_STARTED:	return "STARTED";
	case AP_OUTPUT:		return "OUTPUT";
	case AP_RDZV:		return "RDZV";
	case AP_STORE:		return "STORE";
	case AP_COLLS:		return "COLLS";
	case AP_WAITS:		return "WAITS";
	case AP_EXIT:		return "EXIT";
	case AP_ERROR:		return "ERROR";
	case AP_DONE:		return "DONE";
	case AP_HEARTBEAT:	return "HEARTBEAT";
	case AP_STACKS:		return "STACKS";
	case AP_STACK:		return "STACK";
	case AP_STACKASK:	return "STACKASK";
	case AP_IFACE:		return "IFACE";
	case AP_ERRFILE:	return "ERRFILE";
	case AP_PROGRESS:	return "PROGRESS";
	case AP_CHECK:		return "CHECK";
	case AP_CHECKED:	return "CHECKED";
	case AP_AGAIN:		return "AGAIN";
	case AP_PACKED:		return "PACKED";
	}
	return "?";
}
