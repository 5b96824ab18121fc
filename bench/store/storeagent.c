/*
 * storeagent.c -- the store's init load through agents, for
 * bench/store/run.sh: a stand-in for dtrun-agent (DTRUN_AGENT=storeagent
 * under the local launcher) that speaks the real agent protocol on its
 * link but starts no rank. At START it plays every rank dtrun gave it as
 * bench/store/play.c's torch 1.13 init, each rank's TCPStore connection a
 * channel of STORE frames, as a real agent relays it (channels from 1, in
 * the order their first bytes go). When every rank is through it writes
 * "FIRST_NS LAST_NS NRANKS QUERIES POLLS" to $LOAD_DIR/agent.PID, ends
 * the channels, reports every rank exited 0 and says DONE. It refuses
 * (ERROR) a job whose env lacks DTRUN_STORE=agent: then dtrun would serve
 * no store. STORE_BACKEND=gloo in the job's env plays gloo (default nccl).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/wire.h"
#include "proto/agentproto.h"
#include "play.h"

#define CHUNK	(64 * 1024)	/* STORE bytes in one frame, at most */

static struct dt_wbuf	 out, tmp;
static struct tp_job	 job;
static struct tp_rank	*ranks;		/* channel i + 1 is ranks[i] */
static uint32_t		 nranks, cap, *sleepq;
static long long	*sleepdue, t_first;
static size_t		 qhead, qlen;
static int		 asked;		/* DTRUN_STORE=agent was in JOB's env */

/* Writes what out holds to dtrun, whole. */
static void
flush(void)
{
	size_t	off = 0;
	ssize_t	n;

	while (off < out.len) {
		if ((n = write(1, out.p + off, out.len - off)) < 0) {
			if (errno == EINTR)
				continue;
			exit(1);
		}
		off += (size_t)n;
	}
	dt_wbuf_reset(&out);
}

/* Tells dtrun why this agent gives up, says DONE and exits. */
static void
refuse(const char *fmt, const char *arg)
{
	struct ap_error	e;
	char		msg[512];

	snprintf(msg, sizeof(msg), fmt, arg);
	fprintf(stderr, "storeagent: %s\n", msg);
	e.rank = AP_NORANK;
	e.code = 1;
	e.msg = msg;
	ap_put_error(&out, &e);
	ap_put_empty(&out, AP_DONE);
	flush();
	exit(1);
}

/* Runs rank i's script to its next reply, sleep or end; frames its bytes. */
static void
drive(uint32_t i)
{
	enum tp_next	nx = tp_run(&job, &ranks[i], &tmp);
	size_t		off, n;

	for (off = 0; off < tmp.len; off += n) {
		n = tmp.len - off < CHUNK ? tmp.len - off : CHUNK;
		ap_put_store(&out, i + 1, tmp.p + off, n);
	}
	dt_wbuf_reset(&tmp);
	if (nx == TP_FAIL)
		refuse("%s", job.why);
	if (nx == TP_SLEEP) {
		sleepq[(qhead + qlen) % nranks] = i;
		sleepdue[(qhead + qlen++) % nranks] = tp_now_ns() +
		    TP_POLL_MS * 1000000LL;
	}
}

/* Every rank is through: note the times, end every rank, say DONE. */
static void
finish(void)
{
	struct ap_exit	x;
	const char	*dir = getenv("LOAD_DIR");
	char		path[4096];
	FILE		*f;
	uint32_t	i;

	snprintf(path, sizeof(path), "%s/agent.%d", dir ? dir : ".",
	    (int)getpid());
	if ((f = fopen(path, "w")) != NULL) {
		fprintf(f, "%lld %lld %u %llu %llu\n", t_first, tp_now_ns(),
		    nranks, (unsigned long long)job.queries,
		    (unsigned long long)job.polls);
		fclose(f);
	}
	for (i = 0; i < nranks; i++) {
		ap_put_store(&out, i + 1, NULL, 0);
		x.rank = ranks[i].rank;
		x.how = AP_EXITED;
		x.code = 0;
		ap_put_exit(&out, &x);
	}
	ap_put_empty(&out, AP_DONE);
	flush();
}

/* START: every rank begins its init. */
static void
start(void)
{
	uint32_t	i;

	if (!asked)
		refuse("%s", "the job's env has no DTRUN_STORE=agent: dtrun "
		    "serves no store to this job (run a dtrun that does)");
	if (job.world == 0)
		refuse("%s", "no WORLD_SIZE in the job's or its ranks' env");
	sleepq = calloc(nranks ? nranks : 1, sizeof(*sleepq));
	sleepdue = calloc(nranks ? nranks : 1, sizeof(*sleepdue));
	if (sleepq == NULL || sleepdue == NULL)
		refuse("%s", "out of memory");
	t_first = tp_now_ns();
	for (i = 0; i < nranks; i++)
		ap_put_started(&out, ranks[i].rank, (uint32_t)getpid());
	for (i = 0; i < nranks; i++)
		drive(i);
	flush();
}

/* STORE bytes for a channel: feed its rank, and go on where a reply is whole. */
static void
answer(const uint8_t *p, size_t n)
{
	const uint8_t	*data;
	size_t		 len, used;
	uint32_t	 chan;
	int		 rc;

	if (ap_get_rdzv(p, n, &chan, &data, &len) != 0 || chan == 0 ||
	    chan > nranks)
		refuse("%s", "a STORE frame for no channel of this host");
	if (len == 0)
		refuse("%s", "dtrun closed a rank's store connection");
	while (len > 0) {
		rc = tp_feed(&job, &ranks[chan - 1], data, len, &used);
		if (rc < 0)
			refuse("%s", job.why);
		data += used;
		len -= used;
		if (rc == 1)
			drive(chan - 1);
		else if (len > 0)
			refuse("%s", "bytes came that no query asked for");
	}
}

/* Notes what a K=V of the job's or a rank's env tells the player. */
static void
setting(const char *kv)
{
	if (strcmp(kv, "DTRUN_STORE=agent") == 0)
		asked = 1;
	else if (strncmp(kv, "WORLD_SIZE=", 11) == 0)
		job.world = (uint32_t)strtoul(kv + 11, NULL, 10);
	else if (strcmp(kv, "STORE_BACKEND=gloo") == 0)
		job.be = TP_GLOO;
}

/* JOB or RANK: the ranks and their settings. */
static void
take(uint8_t type, const uint8_t *p, size_t n)
{
	struct ap_job	j;
	struct ap_rank	r;
	size_t		k;

	if (type == AP_JOB) {
		if (ap_get_job(p, n, &j) != 0)
			exit(70);
		cap = j.nranks ? j.nranks : 1;
		ranks = calloc(cap, sizeof(*ranks));
		for (k = 0; k < j.nenv; k++)
			setting(j.env[k]);
		ap_job_free(&j);
		return;
	}
	if (ap_get_rank(p, n, &r) != 0 || ranks == NULL || nranks == cap)
		exit(70);
	for (k = 0; k < r.nenv; k++)
		setting(r.env[k]);
	tp_rank_init(&ranks[nranks++], r.rank);
	ap_rank_free(&r);
}

/* One whole message from dtrun. */
static void
message(uint8_t type, const uint8_t *p, size_t n)
{
	uint64_t	ms;

	switch (type) {
	case AP_JOB: case AP_RANK:
		take(type, p, n);
		break;
	case AP_PREPARE:
		ap_put_empty(&out, AP_PREPARED);
		break;
	case AP_START:
		start();
		break;
	case AP_STORE:
		answer(p, n);
		break;
	case AP_HEARTBEAT:
		if (ap_get_heartbeat(p, n, &ms) == 0)
			ap_put_heartbeat(&out, ms);
		break;
	case AP_STOP:
		ap_put_empty(&out, AP_DONE);
		flush();
		exit(0);
	}
}

/* Wakes the ranks whose barrier poll is due; returns ms to the next, or -1. */
static int
wake(void)
{
	long long	t = tp_now_ns();

	while (qlen > 0 && sleepdue[qhead] <= t) {
		uint32_t	i = sleepq[qhead];

		qhead = (qhead + 1) % nranks;
		qlen--;
		drive(i);
	}
	if (qlen == 0)
		return -1;
	return (int)((sleepdue[qhead] - t) / 1000000) + 1;
}

int
main(void)
{
	static uint8_t	 in[4 * 1024 * 1024];
	struct ap_reasm	 ra;
	struct ap_hello	 h;
	struct pollfd	 pfd = { .fd = 0, .events = POLLIN };
	const uint8_t	*pl;
	size_t		 have = 0, used, plen;
	uint8_t		 type;
	ssize_t		 n;
	char		 host[256];
	int		 ended = 0, ms;

	dt_wbuf_init(&out);
	dt_wbuf_init(&tmp);
	ap_reasm_init(&ra);
	gethostname(host, sizeof(host));
	h.version = AP_VERSION;
	h.hostname = host;
	h.pid = (uint32_t)getpid();
	h.free_port = 29500;
	ap_put_hello(&out, &h);
	flush();
	for (;;) {
		ms = wake();
		flush();		/* the polls wake() made */
		if (poll(&pfd, 1, ms) > 0) {
			if ((n = read(0, in + have, sizeof(in) - have)) == 0 ||
			    (n < 0 && errno != EINTR))
				return 0;	/* dtrun closed the link: the end */
			have += n > 0 ? (size_t)n : 0;
		}
		while (dt_frame_parse(in, have, AP_FRAME_MAX, &type, &pl, &plen,
		    &used) == 0) {
			if (ap_reasm_feed(&ra, type, &pl, &plen) == 1)
				message(type, pl, plen);
			memmove(in, in + used, have - used);
			have -= used;
		}
		if (!ended && nranks > 0 && job.done == nranks) {
			ended = 1;
			finish();
		}
		flush();
	}
}
