/*
 * topsrv.c -- the socket dtrun top reads a running job through (topsrv.h).
 *
 * Each connection is one request and one answer, so a viewer that goes
 * away costs nothing, and the job never waits on one: the answer is
 * queued in a bufferevent and the connection closed once it is written
 * (or after TOPSRV_WAIT_S). The directory is the records' (0700, ours,
 * checked by record_dir); the peer's uid is checked too.
 *
 * Many viewers, or idle ones, never lock the others out: a request that
 * came with its connection is answered at once, and once TOPSRV_CLIENTS
 * are connected the oldest idle one (then the oldest) makes room for the
 * next. Out of descriptors, the same; with none to shed, accepting rests
 * a second rather than stopping for good.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "host/record.h"
#include "common/err.h"
#include "common/log.h"
#include "common/sock.h"
#include "common/sys.h"
#include "launcher/plan/plan.h"
#include "launcher/watch/topsrv.h"
#include "launcher/watch/topview.h"
#include "util/xmalloc.h"

struct topsrv {
	struct event_base	*base;
	char			*job_id;
	char			 path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int			 fd;
	struct event		*ev;
	struct topview		*view;
	char			*info;		/* the answer to "info" */
	time_t			 started;
	struct event		*rearm;		/* accepting again, after EMFILE */
	int			 nclients;
	struct topcli		*clients;	/* connected now: freed with us */
};

struct topcli {
	struct topsrv		*srv;
	struct bufferevent	*bev;
	int			 answered;
	struct topcli		*prev, *next;
};

/* Closes one viewer's connection and forgets it. */
static void
topcli_free(struct topcli *c)
{
	c->srv->nclients--;
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		c->srv->clients = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	bufferevent_free(c->bev);
	free(c);
}

/* The answer to one request line. */
static char *
topsrv_answer(struct topsrv *s, const char *req)
{
	int	json = strcmp(req, "json") == 0;
	char	*a;

	if (strcmp(req, "info") == 0)
		return xstrdup(s->info != NULL ? s->info : s->job_id);
	if (s->view != NULL)
		return topview_render(s->view, s->job_id, json,
		    dt_clock_ms(CLOCK_MONOTONIC));
	if (json && asprintf(&a, "{\"job\": \"%s\", \"attempt\": null, "
	    "\"ranks\": []}\n", s->job_id) >= 0)
		return a;
	if (!json && asprintf(&a, "job %s: between attempts, restarting\n",
	    s->job_id) >= 0)
		return a;
	return NULL;
}

/* ARGSUSED */
static void
topcli_read_cb(struct bufferevent *bev, void *arg)
{
	struct topcli	*c = arg;
	struct evbuffer	*in = bufferevent_get_input(bev);
	char		*line, *a;
	size_t		 n;

	if (c->answered)
		return;
	if ((line = evbuffer_readln(in, &n, EVBUFFER_EOL_LF)) == NULL) {
		if (evbuffer_get_length(in) > TOPSRV_REQ_MAX)
			topcli_free(c);
		return;
	}
	c->answered = 1;
	a = n <= TOPSRV_REQ_MAX ? topsrv_answer(c->srv, line) : NULL;
	free(line);
	if (a == NULL) {
		topcli_free(c);
		return;
	}
	bufferevent_write(bev, a, strlen(a));
	free(a);
	bufferevent_disable(bev, EV_READ);
}

/* ARGSUSED */
static void
topcli_write_cb(struct bufferevent *bev, void *arg)
{
	struct topcli	*c = arg;

	if (c->answered)
		topcli_free(c);		/* all written */
}

/* ARGSUSED */
static void
topcli_event_cb(struct bufferevent *bev, short what, void *arg)
{
	topcli_free(arg);		/* closed, failed or too slow */
}

/* The viewer to shed for room: the oldest that sent nothing, else the oldest. */
static struct topcli *
topsrv_oldest(struct topsrv *s)
{
	struct topcli	*c, *last = NULL, *idle = NULL;

	/* Newest first in the list: the last one seen is the oldest. */
	for (c = s->clients; c != NULL; c = c->next) {
		last = c;
		if (!c->answered)
			idle = c;
	}
	return idle != NULL ? idle : last;
}

/* A new viewer on cfd; answered now when its request is already there. */
static void
topsrv_take(struct topsrv *s, int cfd)
{
	struct timeval	 tv = { TOPSRV_WAIT_S, 0 };
	struct topcli	*c;

	if (s->nclients >= TOPSRV_CLIENTS)
		topcli_free(topsrv_oldest(s));
	c = xcalloc(1, sizeof(*c));
	c->srv = s;
	if ((c->bev = bufferevent_socket_new(s->base, cfd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		close(cfd);
		free(c);
		return;
	}
	s->nclients++;
	if ((c->next = s->clients) != NULL)
		c->next->prev = c;
	s->clients = c;
	bufferevent_setcb(c->bev, topcli_read_cb, topcli_write_cb,
	    topcli_event_cb, c);
	bufferevent_set_timeouts(c->bev, &tv, &tv);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	/* A viewer writes its line as it connects: no wait for the loop. */
	if (evbuffer_read(bufferevent_get_input(c->bev), cfd,
	    TOPSRV_REQ_MAX + 1) > 0)
		topcli_read_cb(c->bev, c);	/* may free c */
}

/* ARGSUSED */
static void
topsrv_rearm_cb(evutil_socket_t fd, short what, void *arg)
{
	struct topsrv	*s = arg;

	event_add(s->ev, NULL);
}

/* ARGSUSED */
static void
topsrv_accept_cb(evutil_socket_t fd, short what, void *arg)
{
	struct topsrv	*s = arg;
	struct timeval	 sec = { 1, 0 };
	int		 cfd, n;

	/* A batch at a time: those taken are read between batches. */
	for (n = 0; n < TOPSRV_BATCH; n++) {
		if ((cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK |
		    SOCK_CLOEXEC)) == -1) {
			if (errno != EMFILE && errno != ENFILE)
				return;
			/* Out of descriptors: a viewer makes room, or rest. */
			if (s->clients == NULL) {
				event_del(s->ev);
				evtimer_add(s->rearm, &sec);
				return;
			}
			topcli_free(topsrv_oldest(s));
			continue;
		}
		if (!sock_peer_is_us(cfd)) {
			close(cfd);
			continue;
		}
		topsrv_take(s, cfd);
	}
}

struct topsrv *
topsrv_new(struct event_base *base, const char *job_id)
{
	struct sockaddr_un	 sa;
	struct topsrv		*s;
	struct dt_err		 e;
	const char		*dir;
	mode_t			 old;
	int			 rc;

	dt_err_clear(&e);
	if (record_dir(&dir, &e) != 0) {
		log_info("dtrun top: no socket: %s", e.msg);
		return NULL;
	}
	s = xcalloc(1, sizeof(*s));
	s->fd = -1;
	s->base = base;
	s->job_id = xstrdup(job_id);
	s->started = time(NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if ((size_t)snprintf(s->path, sizeof(s->path), "%s/%s%s", dir, job_id,
	    TOPSRV_SUFFIX) >= sizeof(s->path)) {
		log_info("dtrun top: no socket: %s is too long a directory", dir);
		s->path[0] = '\0';
		topsrv_free(s);
		return NULL;
	}
	memcpy(sa.sun_path, s->path, strlen(s->path) + 1);
	if ((s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1) {
		log_info("dtrun top: no socket: %s", strerror(errno));
		s->path[0] = '\0';
		topsrv_free(s);
		return NULL;
	}
	/* Owner-only from its first moment, as the directory is. */
	old = umask(077);
	rc = bind(s->fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc == -1 || listen(s->fd, SOMAXCONN) == -1) {
		log_info("dtrun top: no socket %s: %s", s->path, strerror(errno));
		if (rc == -1)
			s->path[0] = '\0';	/* not ours to remove */
		topsrv_free(s);
		return NULL;
	}
	s->ev = event_new(base, s->fd, EV_READ | EV_PERSIST, topsrv_accept_cb,
	    s);
	s->rearm = evtimer_new(base, topsrv_rearm_cb, s);
	event_add(s->ev, NULL);
	return s;
}

void
topsrv_free(struct topsrv *s)
{
	if (s == NULL)
		return;
	/* A viewer still connected (a slow one, or one that sent nothing). */
	while (s->clients != NULL)
		topcli_free(s->clients);
	if (s->ev != NULL)
		event_free(s->ev);
	if (s->rearm != NULL)
		event_free(s->rearm);
	if (s->fd >= 0)
		close(s->fd);
	if (s->path[0] != '\0')
		unlink(s->path);
	free(s->job_id);
	free(s->info);
	free(s);
}

void
topsrv_attach(struct topsrv *s, struct topview *tv)
{
	if (s != NULL)
		s->view = tv;
}

/* Writes s to f, escaped: no tab or newline splits the info line. */
static void
topsrv_put(FILE *f, const char *s)
{
	char	esc[TOPSRV_FIELD_MAX * 4 + 1], cut[TOPSRV_FIELD_MAX + 1];

	snprintf(cut, sizeof(cut), "%s", s);
	fputs(log_escape(esc, sizeof(esc), cut), f);
}

void
topsrv_describe(struct topsrv *s, const struct plan *p, char *const *cmd,
    int ncmd)
{
	char	*line = NULL;
	size_t	 len = 0, i;
	FILE	*f;
	int	 k;

	if (s == NULL || (f = open_memstream(&line, &len)) == NULL)
		return;
	fprintf(f, "%s\t%lld\t%zu\t%zu\t", s->job_id, (long long)s->started,
	    p->nranks, p->nnodes);
	for (i = 0; i < p->nnodes && ftell(f) < TOPSRV_FIELD_MAX; i++) {
		fputs(i > 0 ? "," : "", f);
		topsrv_put(f, p->hosts[i].name);
	}
	if (i < p->nnodes)
		fputs(",...", f);
	fputc('\t', f);
	for (k = 0; k < ncmd; k++) {
		fputs(k > 0 ? " " : "", f);
		topsrv_put(f, cmd[k]);
	}
	fputc('\n', f);
	if (fclose(f) != 0) {
		free(line);
		return;
	}
	free(s->info);
	s->info = line;
}
