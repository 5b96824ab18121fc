/*
 * storeserve.c -- dtrun's TCPStore-compatible store on a TCP port, for
 * scenario tests and benchmarks until the agents serve it:
 *
 *	storeserve [-b ADDR] [-p PORT] [-V MAXVALUE] [-o PORTFILE]
 *
 * Listens on ADDR (default 127.0.0.1) and PORT (default: any), writes the
 * port to PORTFILE (renamed into place, so it appears whole) and to
 * stdout as "port N", then serves torch's TCPStore clients until SIGTERM
 * or SIGINT. A client that breaks the protocol or a limit is cut off with
 * its reason on stderr; the others go on. Counters go to stderr at exit.
 */
#include <sys/resource.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "common/err.h"
#include "store/tcpstore.h"

struct client {
	struct bufferevent	*bev;
	struct dts_conn		*conn;
	struct client		*nextdead;
	char			 peer[64];
	int			 dead;
};

static struct dts_store	*store;
static struct client	*dead;		/* failed while another was fed */
static size_t		 accepted, cut;

/* Says how to run it, and exits 1. */
static void
usage(void)
{
	fprintf(stderr, "usage: storeserve [-b ADDR] [-p PORT] [-V MAXVALUE] "
	    "[-o PORTFILE]\n");
	exit(1);
}

/*
 * Past OUT_HIGH bytes unsent to a client, its conn pauses and we stop
 * reading it; once they drain to OUT_LOW it resumes. So a client that
 * asks for a big value over and over and never reads costs one value.
 */
#define OUT_HIGH	(1 << 20)
#define OUT_LOW		(256 << 10)

/* The store's bytes for a client; 1 pauses it. */
static int
on_reply(void *cookie, const void *buf, size_t len)
{
	struct client	*cl = cookie;
	struct evbuffer	*out = bufferevent_get_output(cl->bev);

	if (cl->dead)
		return 0;
	bufferevent_write(cl->bev, buf, len);
	return evbuffer_get_length(out) > OUT_HIGH;
}

/* Closes a client and forgets it. */
static void
client_close(struct client *cl)
{
	dts_conn_free(cl->conn);
	bufferevent_free(cl->bev);
	free(cl);
}

/* A client's query failed: say why, and cut it off. */
static void
client_cut(struct client *cl, const char *why)
{
	fprintf(stderr, "storeserve: %s: closed: %s\n", cl->peer, why);
	cut++;
	cl->dead = 1;
}

/* The store failed a client other than the one being fed. */
static void
on_fail(void *cookie, int code, const char *msg)
{
	struct client	*cl = cookie;

	client_cut(cl, msg);
	cl->nextdead = dead;
	dead = cl;
}

/* Closes the clients that failed while another was fed. */
static void
reap_dead(void)
{
	struct client	*cl;

	while ((cl = dead) != NULL) {
		dead = cl->nextdead;
		client_close(cl);
	}
}

/* A client sent bytes: feed them to its conn, until it pauses or fails. */
static void
read_cb(struct bufferevent *bev, void *arg)
{
	struct client	*cl = arg;
	struct evbuffer	*in = bufferevent_get_input(bev);
	struct dt_err	 e;
	size_t		 n;

	dt_err_clear(&e);
	while (!cl->dead && !dts_conn_paused(cl->conn) &&
	    (n = evbuffer_get_length(in)) > 0) {
		size_t m = evbuffer_get_contiguous_space(in);
		int rc = dts_conn_feed(cl->conn, evbuffer_pullup(in, m), m, &e);

		evbuffer_drain(in, m);
		if (rc != 0)
			client_cut(cl, e.msg);
	}
	if (!cl->dead && dts_conn_paused(cl->conn)) {
		/* Read on once the client has read its replies (write_cb). */
		bufferevent_disable(bev, EV_READ);
		bufferevent_setwatermark(bev, EV_WRITE, OUT_LOW, 0);
	}
	if (cl->dead)
		client_close(cl);
	reap_dead();
}

/* A paused client's replies drained to OUT_LOW: serve and read it again. */
static void
write_cb(struct bufferevent *bev, void *arg)
{
	struct client	*cl = arg;
	struct dt_err	 e;

	if (!dts_conn_paused(cl->conn))
		return;
	dt_err_clear(&e);
	if (dts_conn_resume(cl->conn, &e) != 0) {
		client_cut(cl, e.msg);
		client_close(cl);
		reap_dead();
		return;
	}
	if (!dts_conn_paused(cl->conn)) {
		bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
		bufferevent_enable(bev, EV_READ);
		read_cb(bev, cl);
	} else
		reap_dead();
}

/* A client closed, or its socket failed: forget it, waits and all. */
static void
event_cb(struct bufferevent *bev, short what, void *arg)
{
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		client_close(arg);
}

/* A new client: a conn of the store, read with no delay on replies. */
static void
accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
    int salen, void *arg)
{
	struct sockaddr_in	*sin = (struct sockaddr_in *)sa;
	struct client		*cl;
	int			 one = 1;

	accepted++;
	if ((cl = calloc(1, sizeof(*cl))) == NULL ||
	    (cl->bev = bufferevent_socket_new(evconnlistener_get_base(l), fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL ||
	    (cl->conn = dts_conn_new(store, cl)) == NULL) {
		fprintf(stderr, "storeserve: out of memory for a client\n");
		if (cl != NULL && cl->bev != NULL)
			bufferevent_free(cl->bev);
		else
			close(fd);
		free(cl);
		return;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	snprintf(cl->peer, sizeof(cl->peer), "%s:%u",
	    inet_ntoa(sin->sin_addr), ntohs(sin->sin_port));
	bufferevent_setcb(cl->bev, read_cb, write_cb, event_cb, cl);
	bufferevent_enable(cl->bev, EV_READ | EV_WRITE);
}

/* SIGTERM or SIGINT: stop serving, print the counters. */
static void
signal_cb(evutil_socket_t sig, short what, void *arg)
{
	event_base_loopbreak(arg);
}

/* Writes the port to path, whole or not at all. */
static void
write_port(const char *path, int port)
{
	char	tmp[4096];
	FILE	*f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if ((f = fopen(tmp, "w")) == NULL || fprintf(f, "%d\n", port) < 0 ||
	    fclose(f) != 0 || rename(tmp, path) != 0) {
		perror(path);
		exit(1);
	}
}

int
main(int argc, char **argv)
{
	struct dts_cfg		 cfg;
	struct dts_stats	 st;
	struct dt_err		 e;
	struct sockaddr_in	 sin;
	struct rlimit		 rl;
	socklen_t		 sl = sizeof(sin);
	struct event_base	*base;
	struct evconnlistener	*l;
	struct event		*sigt, *sigi;
	const char		*bind_addr = "127.0.0.1", *portfile = NULL;
	int			 ch, port = 0;

	memset(&cfg, 0, sizeof(cfg));
	while ((ch = getopt(argc, argv, "b:o:p:V:")) != -1) {
		switch (ch) {
		case 'b':
			bind_addr = optarg;
			break;
		case 'o':
			portfile = optarg;
			break;
		case 'p':
			port = atoi(optarg);
			break;
		case 'V':
			cfg.max_value = strtoull(optarg, NULL, 0);
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	/* Like dtrun: as many descriptors as allowed; a 1.13 rank holds two. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	signal(SIGPIPE, SIG_IGN);
	cfg.reply = on_reply;
	cfg.fail = on_fail;
	if ((store = dts_store_new(&cfg, &e)) == NULL) {
		fprintf(stderr, "storeserve: %s\n", e.msg);
		return 1;
	}
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	if (inet_pton(AF_INET, bind_addr, &sin.sin_addr) != 1) {
		fprintf(stderr, "storeserve: -b %s: not an IPv4 address\n",
		    bind_addr);
		return 1;
	}
	base = event_base_new();
	if ((l = evconnlistener_new_bind(base, accept_cb, NULL,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 4096,
	    (struct sockaddr *)&sin, sizeof(sin))) == NULL) {
		perror("storeserve: listen");
		return 1;
	}
	getsockname(evconnlistener_get_fd(l), (struct sockaddr *)&sin, &sl);
	if (portfile != NULL)
		write_port(portfile, ntohs(sin.sin_port));
	printf("port %d\n", ntohs(sin.sin_port));
	fflush(stdout);
	sigt = evsignal_new(base, SIGTERM, signal_cb, base);
	sigi = evsignal_new(base, SIGINT, signal_cb, base);
	event_add(sigt, NULL);
	event_add(sigi, NULL);
	event_base_dispatch(base);
	dts_store_stats(store, &st);
	fprintf(stderr, "storeserve: %zu accepted, %zu cut off, %zu queries, "
	    "%zu keys, %zu bytes\n", accepted, cut, st.queries, st.keys,
	    st.bytes);
	return 0;
}
