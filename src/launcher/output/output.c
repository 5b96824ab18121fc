/*
 * output.c -- forwarded output. Each of dtrun's stdout and stderr is a sink:
 * an evbuffer of whole lines written with non-blocking writes as the fd
 * accepts them. When a slow reader lets them grow past a high-water mark,
 * the job stops reading agents (back-pressure reaches the ranks through
 * the pipes) until they drain: nothing is dropped and nothing spins.
 *
 * Unfinished lines wait in their rank's splitter, up to LINES_MAX each and
 * OUTPUT_HELD_MAX for all ranks together: past that, the biggest is cut
 * there and handed on, as the LINES_MAX cut does.
 *
 * The log path is a copy loop, so it copies once: the lines of one chunk
 * go, each behind its prefix, into one flat staging buffer (reused, never
 * allocated per line), which one write(2) hands to the fd when nothing is
 * queued before it; only what the fd does not take is queued.
 *
 * With --collapse, a rank's pieces go through collapse.c's table on their
 * way to the terminal (never to the --output-dir files) and come back out
 * of it, a group at a time, by output_group; a piece the table does not
 * hold (a huge line) first lets out what the rank has held.
 *
 * Room launcher/output/: what reaches the terminal and --output-dir:
 * lines, collapse, the status line. It includes only cli/, plan/, job/ and
 * stacks/ (t0041's rooms).
 */
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "common/err.h"
#include "launcher/output/collapse.h"
#include "launcher/output/lines.h"
#include "common/log.h"
#include "common/sys.h"
#include "launcher/output/output.h"
#include "launcher/cli/prefix.h"
#include "launcher/stacks/stackrep.h"
#include "launcher/output/status.h"
#include "util/xmalloc.h"

/* What a pipe dtrun writes to is grown to hold (sink_grow_pipe). */
#define SINK_PIPE	(1024 * 1024)
/*
 * What the sinks may queue before the job stops reading agents. 1 MiB
 * keeps a pipe's reader fed; more only costs fresh pages (4 MiB: 1,000
 * more page faults and ~10% more CPU for the log bench's 4 ranks).
 */
#define SINK_HIGH	(1024 * 1024)
#define SINK_LOW	(256 * 1024)
/* All unfinished lines together: without a total, 64 ranks could hold 1 GiB. */
#define OUTPUT_HELD_MAX	(64 * 1024 * 1024)
/* A staging buffer bigger than this (a cut 8 MiB line) is freed after use. */
#define STAGE_KEEP	(1024 * 1024)
/* A rest the fd did not take, this big or more, is queued without a copy. */
#define STAGE_GIVE	(16 * 1024)
/*
 * Held groups going out in a burst (--collapse) are handed on each time
 * this much is staged: one flat stage of a whole burst (65,536 held lines:
 * 5 MiB) took fresh pages, where pieces reuse what the groups freed.
 */
#define STAGE_BURST	(64 * 1024)

struct sink {
	struct output	*o;
	int		 fd;
	struct evbuffer	*buf;
	struct event	*wev;
	int		 flags;		/* fd flags to restore at the end */
	int		 broken;	/* reader went away: drop further output */
	int		 stream;	/* 1 stdout, 2 stderr */
};

struct orank {
	char		*pfx[2];	/* rendered prefix for stdout, stderr */
	size_t		 plen[2];
	struct lines	 lines[2];
	int		 fd[2];		/* --output-dir files, or -1 */
	int		 off[2];	/* not to the terminal (--redirects...) */
};

struct output {
	struct output_cfg cfg;
	struct sink	 sink[2];
	struct orank	*ranks;
	size_t		 nranks;
	struct lines_pool pool;		/* what the ranks' splitters hold */
	int		 pressed;
	char		 ts[40];	/* timestamp of the chunk being split */
	size_t		 tslen;
	struct sink	*cur;		/* sink of the chunk being split */
	struct orank	*cur_rank;
	int		 cur_stream;
	char		*stage;		/* the chunk's prefixed lines, for cur */
	size_t		 slen;
	size_t		 scap;
	struct collapse	*col;		/* --collapse, or NULL */
	struct event	*colev;		/* the oldest held group's window */
	uint64_t	 now;		/* monotonic ms of the chunk (--collapse) */
	uint64_t	 wall;		/* its wall-clock ms, for --timestamp */
	int		 busy;		/* in output's code: log_flush waits */
};

/* The output whose held lines go before dtrun's messages (one job per process). */
static struct output	*output_held;

static void	sink_write(struct sink *);
static void	sink_arm(struct sink *);
static void	output_group(void *, int, const uint32_t *, size_t,
		    const char *, size_t, uint64_t);
static void	output_collapse_cb(evutil_socket_t, short, void *);
static void	output_collapse_arm(struct output *);
static void	stage_flush(struct output *);

/* ARGSUSED */
static void
sink_write_cb(evutil_socket_t fd, short what, void *arg)
{
	sink_write(arg);
}

/*
 * Grows a pipe we write to (never shrinks it) to SINK_PIPE bytes. Every
 * line of every rank goes through dtrun, then this pipe, to one reader:
 * with the usual 64 KiB dtrun and the reader take turns 16 times as often
 * (4 ranks x 250,000 lines into "| cat": 1.37x the writers straight into
 * a pipe with 64 KiB, 1.22x with this). Refused (past the user's pipe
 * pages, fs/pipe-max-size) is fine: the pipe stays as it was.
 */
static void
sink_grow_pipe(int fd)
{
	int	sz = fcntl(fd, F_GETPIPE_SZ);

	if (sz != -1 && sz < SINK_PIPE)
		(void)fcntl(fd, F_SETPIPE_SZ, SINK_PIPE);
}

/*
 * Prepares fd for non-blocking writes; pipes, sockets and ttys only
 * (regular files never block). One that is non-blocking already (a parent
 * left it so) is waited on all the same: its EAGAIN is not a lost reader.
 */
static void
sink_init(struct output *o, struct sink *s, int fd, struct event_base *base)
{
	struct stat	st;

	s->o = o;
	s->fd = fd;
	s->stream = fd == STDOUT_FILENO ? 1 : 2;
	s->buf = evbuffer_new();
	s->flags = fcntl(fd, F_GETFL);
	if (fstat(fd, &st) != 0)
		st.st_mode = 0;
	if (S_ISFIFO(st.st_mode))
		sink_grow_pipe(fd);
	if ((S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) ||
	    S_ISCHR(st.st_mode)) && s->flags != -1) {
		if (!(s->flags & O_NONBLOCK))
			fcntl(fd, F_SETFL, s->flags | O_NONBLOCK);
		s->wev = event_new(base, fd, EV_WRITE | EV_PERSIST,
		    sink_write_cb, s);
	}
	if (s->buf == NULL)
		xmalloc((size_t)-1);	/* out of memory: exits */
}

/* Total bytes queued in both sinks. */
static size_t
output_queued(struct output *o)
{
	return evbuffer_get_length(o->sink[0].buf) +
	    evbuffer_get_length(o->sink[1].buf);
}

/* Whoever read s is gone (EPIPE and friends): drop its output, tell the owner once. */
static void
sink_broke(struct sink *s)
{
	if (s->broken)
		return;
	s->broken = 1;
	evbuffer_drain(s->buf, evbuffer_get_length(s->buf));
	if (s->o->cfg.closed != NULL)
		s->o->cfg.closed(s->o->cfg.arg, s->stream);
}

/*
 * After a write to s that returned n <= 0: 1 to try again (EINTR), 0 to
 * stop, because the fd would block or, on any other error, s broke.
 */
static int
sink_retry(struct sink *s, ssize_t n)
{
	if (n < 0 && errno == EINTR)
		return 1;
	if (n < 0 && errno == EAGAIN && s->wev != NULL)
		return 0;
	log_debug("%s: %s", s->stream == 1 ? "stdout" : "stderr",
	    strerror(errno));
	sink_broke(s);
	return 0;
}

/* Writes what the fd takes now; arms the write event for the rest. */
static void
sink_write(struct sink *s)
{
	int	n;

	while (evbuffer_get_length(s->buf) > 0 && !s->broken) {
		n = evbuffer_write(s->buf, s->fd);
		if (n > 0 || sink_retry(s, n))
			continue;
		break;
	}
	sink_arm(s);
}

/* Waits for the fd to take what is queued; presses the job while too much is. */
static void
sink_arm(struct sink *s)
{
	struct output	*o = s->o;

	if (s->wev != NULL) {
		if (evbuffer_get_length(s->buf) > 0)
			event_add(s->wev, NULL);
		else
			event_del(s->wev);
	}
	if (!o->pressed && output_queued(o) > SINK_HIGH) {
		o->pressed = 1;
		o->cfg.pressure(o->cfg.arg, 1);
	} else if (o->pressed && output_queued(o) <= SINK_LOW) {
		o->pressed = 0;
		o->cfg.pressure(o->cfg.arg, 0);
	}
}

/*
 * Writes n bytes of whole lines to s at once when nothing is queued before
 * them (the usual case: no copy beyond the staging one). Returns how many
 * of the last bytes are left for the caller to queue: the fd is full, or
 * its write event is armed already. 0 when s is broken.
 */
static size_t
sink_put(struct sink *s, const char *p, size_t n)
{
	ssize_t	w;

	if (s->broken)
		return 0;
	while (n > 0 && evbuffer_get_length(s->buf) == 0) {
		if ((w = write(s->fd, p, n)) > 0) {
			p += w;
			n -= w;
		} else if (!sink_retry(s, w))
			break;
	}
	return s->broken ? 0 : n;
}

/*
 * log_flush: everything held goes out before a message of dtrun's. Not
 * from inside output's own code (a write error logged while staging): the
 * stage is in use there, and that message concerns no rank's lines.
 */
static void
output_log_flush(void)
{
	struct output	*o = output_held;

	if (o == NULL || o->busy)
		return;
	o->busy = 1;
	collapse_flush(o->col);
	if (o->slen > 0)
		stage_flush(o);
	output_collapse_arm(o);
	o->busy = 0;
}

struct output *
output_new(struct event_base *base, const struct output_cfg *cfg,
    size_t nranks)
{
	struct output	*o = xcalloc(1, sizeof(*o));
	size_t		 i;

	o->cfg = *cfg;
	o->nranks = nranks;
	o->ranks = xcalloc(nranks, sizeof(*o->ranks));
	for (i = 0; i < nranks; i++) {
		o->ranks[i].fd[0] = o->ranks[i].fd[1] = -1;
		o->ranks[i].lines[0].pool = o->ranks[i].lines[1].pool = &o->pool;
	}
	sink_init(o, &o->sink[0], STDOUT_FILENO, base);
	sink_init(o, &o->sink[1], STDERR_FILENO, base);
	/* One rank has no one to agree with: its lines need not wait. */
	if (cfg->collapse && nranks > 1) {
		o->col = collapse_new(nranks, output_group, o);
		o->colev = evtimer_new(base, output_collapse_cb, o);
		if (o->colev == NULL)
			xmalloc((size_t)-1);	/* out of memory: exits */
		output_held = o;
		log_flush = output_log_flush;
	}
	return o;
}

/* mkdir that accepts an existing directory. */
static int
mkdir_ok(const char *p)
{
	struct stat	st;

	if (mkdir(p, 0777) == 0)
		return 0;
	if (errno == EEXIST && stat(p, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	return -1;
}

int
output_rank(struct output *o, int rank, int local_rank, const char *host,
    struct dt_err *e)
{
	static const char *const names[2] = { "out", "err" };
	static const char *const files[2] = { "stdout", "stderr" };
	struct orank	*r = &o->ranks[rank];
	struct prefix_fields f;
	const char	*sgr;
	char		 path[4096], *p;
	size_t		 n;
	int		 s;

	memset(&f, 0, sizeof(f));	/* f.ranks NULL: %r is this rank */
	f.rank = rank;
	f.local_rank = local_rank;
	f.attempt = o->cfg.attempt;
	f.host = host;
	for (s = 0; s < 2; s++) {
		f.stream = names[s];
		n = prefix_render(o->cfg.prefix, &f, NULL, 0);
		r->pfx[s] = xmalloc(n + 1);
		prefix_render(o->cfg.prefix, &f, r->pfx[s], n + 1);
		r->plen[s] = n;
		if (!o->cfg.color[s] || n == 0)
			continue;
		/* On a terminal: the prefix in the rank's colour. */
		sgr = status_rank_color(rank);
		r->plen[s] = xasprintf(&p, "%s%s\033[0m", sgr, r->pfx[s]);
		free(r->pfx[s]);
		r->pfx[s] = p;
	}
	if (o->cfg.dir == NULL)
		return 0;
	snprintf(path, sizeof(path), "%s/rank.%d", o->cfg.dir, rank);
	if (mkdir_ok(o->cfg.dir) != 0 || mkdir_ok(path) != 0)
		return dt_errf(e, o->cfg.dir, 0, 0, DT_ERR_IO,
		    "cannot make directory %s: %s", path, strerror(errno));
	for (s = 0; s < 2; s++) {
		snprintf(path, sizeof(path), "%s/rank.%d/%s", o->cfg.dir, rank,
		    files[s]);
		r->fd[s] = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		    0666);
		if (r->fd[s] == -1)
			return dt_errf(e, path, 0, 0, DT_ERR_IO, "cannot "
			    "create: %s", strerror(errno));
	}
	return 0;
}

/* Grows the staging buffer to hold n more bytes. */
static void
stage_grow(struct output *o, size_t n)
{
	size_t	cap = o->scap ? o->scap : 64 * 1024;

	while (cap < o->slen + n)
		cap *= 2;
	o->stage = xreallocarray(o->stage, cap, 1);
	o->scap = cap;
}

/* Makes room for n more bytes in the staging buffer: a compare, per line. */
static inline void
stage_room(struct output *o, size_t n)
{
	if (o->stage == NULL || o->slen + n > o->scap)
		stage_grow(o, n);
}

/* Appends p[0..n) to the staging buffer, which has the room (stage_room). */
static inline void
stage_add(struct output *o, const void *p, size_t n)
{
	memcpy(o->stage + o->slen, p, n);
	o->slen += n;
}

/* evbuffer cleanup of a staging buffer handed to a sink's queue. */
static void
stage_free(const void *data, size_t len, void *base)
{
	free(base);
}

/*
 * Hands what is staged to the sink being written, and empties the stage.
 * What the fd does not take now is queued: a big rest by handing the
 * staging buffer itself to the queue (a fresh one is made for the next
 * chunk), a small one by copying it. A buffer handed on is at most 4 times
 * the rest it holds, so the queue's count (SINK_HIGH) still bounds memory.
 */
static void
stage_flush(struct output *o)
{
	struct sink	*s = o->cur;
	size_t		 n;

	if ((n = sink_put(s, o->stage, o->slen)) > 0) {
		if (n >= STAGE_GIVE && n >= o->scap / 4 &&
		    evbuffer_add_reference(s->buf,
		    o->stage + o->slen - n, n, stage_free, o->stage) == 0) {
			o->stage = NULL;
			o->scap = 0;
		} else if (evbuffer_add(s->buf, o->stage + o->slen - n, n) != 0)
			xmalloc((size_t)-1);	/* out of memory: exits */
	}
	/* Also after s broke: what it dropped may end the back-pressure. */
	sink_arm(s);
	o->slen = 0;
	if (o->scap > STAGE_KEEP) {
		free(o->stage);
		o->stage = NULL;
		o->scap = 0;
	}
}

/* Monotonic milliseconds: --collapse's windows. */
static uint64_t
output_now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Makes sink s (0 stdout, 1 stderr) the one staged for, handing on what was staged for another. */
static void
output_to(struct output *o, int s)
{
	if (o->cur == &o->sink[s])
		return;
	if (o->slen > 0)
		stage_flush(o);
	o->cur = &o->sink[s];
}

/* Stages p[0..n) with control characters escaped (log_escape_mem). */
static void
output_add_escaped(struct output *o, const char *p, size_t n)
{
	char	esc[4096];
	size_t	used, len;

	while (n > 0) {
		len = log_escape_mem(esc, sizeof(esc), p, n, &used);
		stage_room(o, len);
		stage_add(o, esc, len);
		p += used;
		n -= used;
	}
}

/*
 * --escape-output: a line whose bytes come from an untrusted host (the
 * replies dtrun-kill -H gathers) goes out with everything a terminal would
 * act on escaped, '\r' included, and always ends in one raw newline.
 */
static void
output_escaped(struct output *o, const char *a, size_t alen,
    const char *b, size_t blen)
{
	if (blen > 0 && b[blen - 1] == '\n')
		blen--;
	else if (blen == 0 && alen > 0 && a[alen - 1] == '\n')
		alen--;
	output_add_escaped(o, a, alen);
	output_add_escaped(o, b, blen);
	stage_room(o, 1);
	stage_add(o, "\n", 1);
}

/*
 * Stages one piece (two parts) for cur behind timestamp ts and prefix pfx
 * (either may be empty). Called per line: empty parts are skipped, not
 * copied.
 */
static void
output_put(struct output *o, const char *ts, size_t tslen, const char *pfx,
    size_t plen, const char *a, size_t alen, const char *b, size_t blen)
{
	char	*d;

	stage_room(o, tslen + plen + alen + blen);
	d = o->stage + o->slen;
	if (tslen > 0) {
		memcpy(d, ts, tslen);
		d += tslen;
	}
	if (plen > 0) {
		memcpy(d, pfx, plen);
		d += plen;
	}
	o->slen = d - o->stage;
	if (o->cfg.escape) {
		output_escaped(o, a, alen, b, blen);
		return;
	}
	if (alen > 0)
		stage_add(o, a, alen);
	if (blen > 0)
		stage_add(o, b, blen);
}

/*
 * --collapse: holds a whole line of the chunk's rank. Returns 0 when held;
 * -1 when it goes out now, after the lines the rank holds.
 */
static int
output_hold(struct output *o, const char *a, size_t alen, const char *b,
    size_t blen, int cont)
{
	uint32_t	rank = o->cur_rank - o->ranks;

	if (collapse_add(o->col, rank, o->cur_stream, a, alen, b, blen, cont,
	    o->now, o->wall) == 0)
		return 0;
	collapse_flush_rank(o->col, rank);
	/* What the rank held may have gone to the other stream's sink. */
	output_to(o, o->cur_stream);
	return -1;
}

/*
 * One whole line or '\r' segment (two parts) of the chunk's rank: stage
 * timestamp, prefix and the bytes; only the bytes if it continues the
 * piece before.
 */
static void
output_line(void *arg, const char *a, size_t alen, const char *b, size_t blen,
    int cont)
{
	struct output	*o = arg;
	struct orank	*r = o->cur_rank;

	if (o->sink[o->cur_stream].broken)
		return;
	if (o->col != NULL && output_hold(o, a, alen, b, blen, cont) == 0)
		return;
	if (cont)
		output_put(o, "", 0, "", 0, a, alen, b, blen);
	else
		output_put(o, o->ts, o->tslen, r->pfx[o->cur_stream],
		    r->plen[o->cur_stream], a, alen, b, blen);
}

/* Writes the --timestamp of wall (ms since the epoch) into ts; returns its length. */
static size_t
output_stamp(char *ts, size_t len, uint64_t wall)
{
	time_t		t = wall / 1000;
	struct tm	tm;
	size_t		n;

	localtime_r(&t, &tm);
	n = strftime(ts, len, "%Y-%m-%dT%H:%M:%S", &tm);
	return n + snprintf(ts + n, len - n, ".%03d ", (int)(wall % 1000));
}

/*
 * The prefix of a line said by several ranks: the format with the ranks'
 * ranges for %r ("0-3,5"), in the lowest rank's colour on a terminal.
 * Returns it malloc'd, its length in *len.
 */
static char *
output_group_prefix(struct output *o, int s, const uint32_t *ranks, size_t n,
    size_t *len)
{
	static const char *const names[2] = { "out", "err" };
	struct prefix_fields f;
	char		 rr[1024], *p, *c;

	stk_ranges(rr, sizeof(rr), ranks, n);
	memset(&f, 0, sizeof(f));
	f.ranks = rr;
	f.attempt = o->cfg.attempt;
	f.host = "";
	f.stream = names[s];
	*len = prefix_render(o->cfg.prefix, &f, NULL, 0);
	p = xmalloc(*len + 1);
	prefix_render(o->cfg.prefix, &f, p, *len + 1);
	if (!o->cfg.color[s] || *len == 0)
		return p;
	*len = xasprintf(&c, "%s%s\033[0m", status_rank_color(ranks[0]), p);
	free(p);
	return c;
}

/*
 * collapse_cb: a held line goes out, behind its one rank's prefix as
 * usual, or behind the ranges of the ranks that said it.
 */
static void
output_group(void *arg, int s, const uint32_t *ranks, size_t n,
    const char *line, size_t len, uint64_t stamp)
{
	struct output	*o = arg;
	struct orank	*r = &o->ranks[ranks[0]];
	char		 ts[40], *pfx;
	size_t		 tslen = 0, plen;

	if (o->sink[s].broken)
		return;
	output_to(o, s);
	if (o->cfg.timestamp)
		tslen = output_stamp(ts, sizeof(ts), stamp);
	if (n == 1)
		output_put(o, ts, tslen, r->pfx[s], r->plen[s], line, len,
		    "", 0);
	else {
		pfx = output_group_prefix(o, s, ranks, n, &plen);
		output_put(o, ts, tslen, pfx, plen, line, len, "", 0);
		free(pfx);
	}
	if (o->slen >= STAGE_BURST)
		stage_flush(o);
}

/* Sets the timer to the end of the oldest held group's window. */
static void
output_collapse_arm(struct output *o)
{
	uint64_t	d = collapse_deadline(o->col), now = output_now();
	struct timeval	tv;

	if (d == 0) {
		event_del(o->colev);
		return;
	}
	d = d > now ? d - now : 0;
	tv.tv_sec = d / 1000;
	tv.tv_usec = (d % 1000) * 1000;
	event_add(o->colev, &tv);
}

/* ARGSUSED */
static void
output_collapse_cb(evutil_socket_t fd, short what, void *arg)
{
	struct output	*o = arg;

	o->busy = 1;
	collapse_expire(o->col, output_now());
	if (o->slen > 0)
		stage_flush(o);
	output_collapse_arm(o);
	o->busy = 0;
}

/* Sets the state output_line reads for one chunk of rank's stream. */
static void
output_select(struct output *o, int rank, int stream)
{
	struct timeval	tv;

	if (o->slen > 0)
		stage_flush(o);	/* what output_group left for another sink */
	o->cur_stream = stream == 2 ? 1 : 0;
	o->cur = &o->sink[o->cur_stream];
	o->cur_rank = &o->ranks[rank];
	o->tslen = 0;
	if (o->cfg.timestamp || o->col != NULL) {
		gettimeofday(&tv, NULL);
		o->wall = (uint64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
	}
	if (o->cfg.timestamp)
		o->tslen = output_stamp(o->ts, sizeof(o->ts), o->wall);
	if (o->col != NULL)
		o->now = output_now();
}

/* Writes all of p to a regular file, retrying short writes. */
static void
write_all(int fd, const void *p, size_t n)
{
	const char	*c = p;
	ssize_t		 w;

	while (n > 0) {
		w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		c += w;
		n -= w;
	}
}

/*
 * Past OUTPUT_HELD_MAX, hands on the biggest unfinished lines as cut lines
 * and frees their buffers until all of them fit again.
 */
static void
output_trim(struct output *o)
{
	struct lines	*l, *big;
	size_t		 i, big_rank;
	int		 s, big_s;

	while (o->pool.held > OUTPUT_HELD_MAX) {
		big = NULL;
		big_rank = 0;
		big_s = 0;
		for (i = 0; i < o->nranks; i++) {
			for (s = 0; s < 2; s++) {
				l = &o->ranks[i].lines[s];
				if (big == NULL || l->cap > big->cap) {
					big = l;
					big_rank = i;
					big_s = s;
				}
			}
		}
		if (big == NULL || big->cap == 0)
			return;
		output_select(o, big_rank, big_s + 1);
		lines_flush(big, output_line, o);
		stage_flush(o);
	}
}

/* output_feed, once the rank is known good. */
static void
output_chunk(struct output *o, int rank, int stream, const void *p, size_t n)
{
	struct orank	*r = &o->ranks[rank];

	output_select(o, rank, stream);
	if (r->fd[o->cur_stream] >= 0)
		write_all(r->fd[o->cur_stream], p, n);
	if (o->cur->broken || r->off[o->cur_stream])
		return;
	lines_feed(&r->lines[o->cur_stream], p, n, output_line, o);
	stage_flush(o);
	if (o->pool.held > OUTPUT_HELD_MAX)
		output_trim(o);
	if (o->col != NULL)
		output_collapse_arm(o);
}

void
output_rank_term(struct output *o, int rank, int mask)
{
	if (rank < 0 || (size_t)rank >= o->nranks)
		return;
	o->ranks[rank].off[0] = !(mask & 1);
	o->ranks[rank].off[1] = !(mask & 2);
	/* --collapse: a rank off the terminal is never behind the others. */
	if (o->col != NULL && !(mask & 1))
		collapse_rank_done(o->col, rank, 0);
	if (o->col != NULL && !(mask & 2))
		collapse_rank_done(o->col, rank, 1);
}

void
output_feed(struct output *o, int rank, int stream, const void *p, size_t n)
{
	if (rank < 0 || (size_t)rank >= o->nranks)
		return;
	o->busy = 1;
	dt_heap_fed(n);		/* a flood: its buffers on huge pages */
	output_chunk(o, rank, stream, p, n);
	o->busy = 0;
}

/*
 * A rank's unfinished last lines. Held ones (--collapse) stay held: a
 * rank that ended well says nothing more, and a message of dtrun's about
 * its end lets them out first (log_flush).
 */
void
output_rank_end(struct output *o, int rank)
{
	int	s;

	if (rank < 0 || (size_t)rank >= o->nranks)
		return;
	o->busy = 1;
	for (s = 0; s < 2; s++) {
		if (o->ranks[rank].lines[s].cap == 0)
			continue;	/* nothing held, not even a buffer */
		output_select(o, rank, s + 1);
		lines_flush(&o->ranks[rank].lines[s], output_line, o);
		stage_flush(o);
	}
	if (o->col != NULL) {
		collapse_rank_done(o->col, rank, 0);
		collapse_rank_done(o->col, rank, 1);
		output_collapse_arm(o);
	}
	o->busy = 0;
}

/* Blocks until the sink is written out or ms pass, then restores the fd's flags. */
static void
sink_finish(struct sink *s, int ms)
{
	struct pollfd	pfd;
	int		n;

	while (evbuffer_get_length(s->buf) > 0 && !s->broken) {
		pfd.fd = s->fd;
		pfd.events = POLLOUT;
		/* SIGCHLD of an exiting agent may interrupt the wait: not a reason to drop output. */
		if (s->wev != NULL && (n = poll(&pfd, 1, ms)) <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			break;
		}
		if (evbuffer_write(s->buf, s->fd) < 0 && errno != EAGAIN &&
		    errno != EINTR) {
			sink_broke(s);
			break;
		}
	}
	if (s->wev != NULL) {
		fcntl(s->fd, F_SETFL, s->flags);
		event_free(s->wev);
		s->wev = NULL;
	}
}

void
output_finish(struct output *o, int ms)
{
	size_t	i;

	for (i = 0; i < o->nranks; i++)
		output_rank_end(o, i);
	if (o->col != NULL) {
		o->busy = 1;
		collapse_flush(o->col);
		if (o->slen > 0)
			stage_flush(o);
		event_del(o->colev);
		o->busy = 0;
	}
	sink_finish(&o->sink[0], ms);
	sink_finish(&o->sink[1], ms);
}

void
output_free(struct output *o)
{
	size_t	i;
	int	s;

	if (o == NULL)
		return;
	for (i = 0; i < o->nranks; i++) {
		for (s = 0; s < 2; s++) {
			free(o->ranks[i].pfx[s]);
			lines_free(&o->ranks[i].lines[s]);
			if (o->ranks[i].fd[s] >= 0)
				close(o->ranks[i].fd[s]);
		}
	}
	for (s = 0; s < 2; s++) {
		if (o->sink[s].wev != NULL) {
			fcntl(o->sink[s].fd, F_SETFL, o->sink[s].flags);
			event_free(o->sink[s].wev);
		}
		evbuffer_free(o->sink[s].buf);
	}
	if (output_held == o) {
		output_held = NULL;
		log_flush = NULL;
	}
	collapse_free(o->col);
	if (o->colev != NULL)
		event_free(o->colev);
	free(o->ranks);
	free(o->stage);
	free(o);
}
