/*
 * rdzv-serve.c -- a stand-alone rendezvous server for scenario tests and
 * benchmarks, until dtrun hosts it:
 *
 *	rdzv-serve -n WORLD [-H host,...] [-P] [-t SECS] [-i SECS] [-b ADDR]
 *	    [-p PORT] -o ENVFILE
 *
 * Writes DTRUN_RDZV_ADDR=... and DTRUN_RDZV_TOKEN=... to ENVFILE (mode
 * 0600, renamed into place, so it appears whole), then serves. The plan
 * spreads WORLD ranks evenly over the -H hosts (default: this host); -P
 * runs without a plan (join by host and local rank). Exits 0 once every
 * rank has joined and every connection has closed, 3 after the start
 * timeout (-t, default 300 s) with the server's message on stderr, 1 on
 * a usage or start-up error. Counters go to stderr at exit.
 */
#include <sys/resource.h>
#include <sys/stat.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/err.h"
#include "rendezvous/auth.h"
#include "rendezvous/server.h"

struct serve {
	struct event_base	*base;
	struct rdzv_server	*s;
	int			 all_joined;
	int			 timed_out;
};

static void
usage(void)
{
	fprintf(stderr, "usage: rdzv-serve -n WORLD [-H host,...] [-P] "
	    "[-t SECS] [-i SECS] [-b ADDR] [-p PORT] -o ENVFILE\n");
	exit(1);
}

static void
on_all_joined(void *arg)
{
	struct serve	*sv = arg;

	sv->all_joined = 1;
}

static void
on_timeout(void *arg, const char *msg)
{
	struct serve	*sv = arg;
	struct timeval	 tv = { 0, 200000 };	/* let the ABORTs drain */

	fprintf(stderr, "rdzv-serve: %s\n", msg);
	sv->timed_out = 1;
	event_base_loopexit(sv->base, &tv);
}

/* Every 20 ms: done once all joined and every worker has gone. */
static void
tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct serve			*sv = arg;
	struct rdzv_server_stats	 st;

	rdzv_server_stats(sv->s, &st);
	if (sv->all_joined && st.conns == 0)
		event_base_loopbreak(sv->base);
}

static void
signal_cb(evutil_socket_t sig, short what, void *arg)
{
	event_base_loopbreak(arg);
}

/* Splits "a,b,c" into a plan of world ranks spread evenly, host-major. */
static struct rdzv_rank_info *
make_plan(char *hosts, int world, int *nnodes)
{
	static char		 self[256];
	char			*h[4096], *p;
	int			 n = 0, r, per;
	struct rdzv_rank_info	*ri;

	if (hosts == NULL) {
		gethostname(self, sizeof(self) - 1);
		h[n++] = self;
	} else
		while ((p = strsep(&hosts, ",")) != NULL && n < 4096)
			h[n++] = p;
	if (world % n != 0) {
		fprintf(stderr, "rdzv-serve: %d ranks do not spread evenly "
		    "over %d hosts\n", world, n);
		exit(1);
	}
	per = world / n;
	if ((ri = calloc(world, sizeof(*ri))) == NULL)
		exit(1);
	for (r = 0; r < world; r++) {
		ri[r].rank = r;
		ri[r].host = h[r / per];
		ri[r].node_rank = r / per;
		ri[r].local_rank = r % per;
		ri[r].local_world = per;
	}
	*nnodes = n;
	return ri;
}

/* Writes the two variables a worker needs, atomically and privately. */
static void
write_env(const char *path, int port, const uint8_t *secret, size_t len)
{
	char	tmp[4096], hex[2 * RDZV_SECRET_MAX + 1];
	FILE	*f;
	int	 fd;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	rdzv_hex_encode(secret, len, hex, sizeof(hex));
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0 ||
	    (f = fdopen(fd, "w")) == NULL) {
		perror(tmp);
		exit(1);
	}
	fprintf(f, "DTRUN_RDZV_ADDR=127.0.0.1:%d\nDTRUN_RDZV_TOKEN=%s\n",
	    port, hex);
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		perror(path);
		exit(1);
	}
}

int
main(int argc, char **argv)
{
	struct rdzv_server_cfg		 cfg;
	struct rdzv_server_stats	 st;
	struct serve			 sv;
	struct dt_err			 e;
	struct rlimit			 rl;
	struct event			*tick, *sigt, *sigi;
	struct timeval			 tv = { 0, 20000 };
	uint8_t				 secret[RDZV_SECRET_LEN];
	char				*hosts = NULL;
	const char			*envfile = NULL;
	int				 ch, noplan = 0;

	memset(&cfg, 0, sizeof(cfg));
	memset(&sv, 0, sizeof(sv));
	cfg.bind_addr = "127.0.0.1";
	cfg.start_timeout = 300;
	while ((ch = getopt(argc, argv, "b:H:i:n:o:Pp:t:")) != -1) {
		switch (ch) {
		case 'b':
			cfg.bind_addr = optarg;
			break;
		case 'H':
			hosts = optarg;
			break;
		case 'i':
			cfg.io_timeout = atof(optarg);
			break;
		case 'n':
			cfg.world = atoi(optarg);
			break;
		case 'o':
			envfile = optarg;
			break;
		case 'P':
			noplan = 1;
			break;
		case 'p':
			cfg.port = atoi(optarg);
			break;
		case 't':
			cfg.start_timeout = atof(optarg);
			break;
		default:
			usage();
		}
	}
	if (cfg.world < 1 || envfile == NULL || optind != argc)
		usage();
	/* Like dtrun: as many descriptors as allowed, for one per rank. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	signal(SIGPIPE, SIG_IGN);
	if (rdzv_auth_random(secret, sizeof(secret), &e) != 0) {
		fprintf(stderr, "rdzv-serve: %s\n", e.msg);
		return 1;
	}
	cfg.secret = secret;
	cfg.secret_len = sizeof(secret);
	if (!noplan)
		cfg.ranks = make_plan(hosts, cfg.world, &cfg.nnodes);
	cfg.on_all_joined = on_all_joined;
	cfg.on_timeout = on_timeout;
	cfg.arg = &sv;
	sv.base = event_base_new();
	if (rdzv_server_new(sv.base, &cfg, &sv.s, &e) != 0) {
		fprintf(stderr, "rdzv-serve: %s\n", e.msg);
		return 1;
	}
	write_env(envfile, rdzv_server_port(sv.s), secret, sizeof(secret));
	tick = event_new(sv.base, -1, EV_PERSIST, tick_cb, &sv);
	event_add(tick, &tv);
	sigt = evsignal_new(sv.base, SIGTERM, signal_cb, sv.base);
	sigi = evsignal_new(sv.base, SIGINT, signal_cb, sv.base);
	event_add(sigt, NULL);
	event_add(sigi, NULL);
	event_base_dispatch(sv.base);
	rdzv_server_stats(sv.s, &st);
	fprintf(stderr, "rdzv-serve: %zu of %d joined, %zu accepted, %zu auth "
	    "failed, %zu dropped, %zu requests\n", st.joined, cfg.world,
	    st.accepted, st.auth_failed, st.dropped, st.requests);
	event_free(tick);
	event_free(sigt);
	event_free(sigi);
	rdzv_server_free(sv.s);
	event_base_free(sv.base);
	free((void *)cfg.ranks);
	if (sv.timed_out)
		return 3;
	return sv.all_joined ? 0 : 2;
}
