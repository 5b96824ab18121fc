/*
 * agentload.c -- the rendezvous load through agents, for bench/rdzv/agents.sh:
 * a stand-in for dtrun-agent (DTRUN_AGENT=agentload under the local
 * launcher) that speaks the real agent protocol on its link but starts no
 * rank. At START it plays every rank dtrun gave it: each rank's rendezvous
 * is a channel of RDZV frames, as a real agent relays it, carrying JOIN and
 * a waiting GET of the NCCL id (the first rank of the job SETs it). When
 * every one of its ranks has the id it writes "FIRST_NS LAST_NS" (when
 * its first JOIN left, when its last id came) to $LOAD_DIR/agent.PID,
 * reports every rank exited 0, and says DONE. So dtrun's side, its
 * server and its link handling, sees the load of the real thing, with
 * 64 ranks a host costing one process here instead of 64.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/wire.h"
#include "proto/agentproto.h"
#include "rendezvous/proto.h"

#define NCCL_KEY	"dtrun/nccl-id/0"

static struct dt_wbuf	 out;
static uint32_t		*ranks;		/* the job's rank of each channel - 1 */
static uint32_t		 nranks, got, need;
static long long	 t_first, t_last;

static long long
now_ns(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

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

/* Appends one rendezvous request of channel chan as an RDZV frame. */
static void
put_rdzv(uint32_t chan, const struct rdzv_msg *m)
{
	struct dt_wbuf	b;

	dt_wbuf_init(&b);
	if (rdzv_msg_encode(&b, m) != 0)
		exit(70);
	ap_put_rdzv(&out, chan, b.p, b.len);
	dt_wbuf_free(&b);
}

/* START: every rank joins and asks for the id; rank 0 sets it first. */
static void
start(void)
{
	struct rdzv_msg	m;
	uint8_t		id[128];
	uint32_t	i;

	t_first = now_ns();
	for (i = 0; i < nranks; i++)
		ap_put_started(&out, ranks[i], (uint32_t)getpid());
	for (i = 0; i < nranks; i++) {
		memset(&m, 0, sizeof(m));
		m.type = RDZV_JOIN;
		m.rank = (int32_t)ranks[i];
		m.local_rank = (int32_t)i;
		put_rdzv(i + 1, &m);
		if (ranks[i] == 0) {
			memset(id, 7, sizeof(id));
			memset(&m, 0, sizeof(m));
			m.type = RDZV_SET;
			m.key = (const uint8_t *)NCCL_KEY;
			m.keylen = strlen(NCCL_KEY);
			m.val = id;
			m.vallen = sizeof(id);
			put_rdzv(i + 1, &m);
		}
		memset(&m, 0, sizeof(m));
		m.type = RDZV_GET;
		m.flags = RDZV_GET_WAIT;
		m.key = (const uint8_t *)NCCL_KEY;
		m.keylen = strlen(NCCL_KEY);
		put_rdzv(i + 1, &m);
		if (out.len > 256 * 1024)
			flush();
	}
	flush();
	need = nranks;
}

/* Every rank has the id: note the times, end every rank, say DONE. */
static void
finish(void)
{
	struct ap_exit	x;
	const char	*dir = getenv("LOAD_DIR");
	char		path[4096];
	FILE		*f;
	uint32_t	i;

	t_last = now_ns();
	snprintf(path, sizeof(path), "%s/agent.%d", dir ? dir : ".",
	    (int)getpid());
	if ((f = fopen(path, "w")) != NULL) {
		fprintf(f, "%lld %lld %u\n", t_first, t_last, nranks);
		fclose(f);
	}
	for (i = 0; i < nranks; i++) {
		x.rank = ranks[i];
		x.how = AP_EXITED;
		x.code = 0;
		ap_put_exit(&out, &x);
		ap_put_rdzv(&out, i + 1, NULL, 0);
	}
	ap_put_empty(&out, AP_DONE);
	flush();
}

/* An RDZV frame: count the ids that came; an ERROR or ABORT is fatal. */
static void
answer(const uint8_t *p, size_t n)
{
	struct rdzv_msg	 m;
	const uint8_t	*data;
	size_t		 len, used;
	uint32_t	 chan;

	if (ap_get_rdzv(p, n, &chan, &data, &len) != 0)
		exit(70);
	while (len > 0 && rdzv_msg_parse(data, len, &m, &used) == 0) {
		if (m.type == RDZV_ERROR || m.type == RDZV_ABORT) {
			fprintf(stderr, "agentload: channel %u: %s: %.*s\n",
			    chan, rdzv_msg_name(m.type), (int)m.textlen,
			    (const char *)m.text);
			exit(1);
		}
		if (m.type == RDZV_VALUE && ++got == need)
			finish();
		data += used;
		len -= used;
	}
}

/* One whole message from dtrun. */
static void
message(uint8_t type, const uint8_t *p, size_t n)
{
	struct ap_job	 j;
	struct ap_rank	 r;
	uint64_t	 ms;

	switch (type) {
	case AP_JOB:
		if (ap_get_job(p, n, &j) != 0)
			exit(70);
		ranks = calloc(j.nranks ? j.nranks : 1, sizeof(*ranks));
		ap_job_free(&j);
		break;
	case AP_RANK:
		if (ap_get_rank(p, n, &r) != 0)
			exit(70);
		ranks[nranks++] = r.rank;
		ap_rank_free(&r);
		break;
	case AP_PREPARE:
		ap_put_empty(&out, AP_PREPARED);
		flush();
		break;
	case AP_START:
		start();
		break;
	case AP_RDZV:
		answer(p, n);
		break;
	case AP_HEARTBEAT:
		if (ap_get_heartbeat(p, n, &ms) == 0) {
			ap_put_heartbeat(&out, ms);
			flush();
		}
		break;
	case AP_STOP:
		ap_put_empty(&out, AP_DONE);
		flush();
		exit(0);
	}
}

int
main(void)
{
	static uint8_t	 in[4 * 1024 * 1024];
	struct ap_reasm	 ra;
	struct ap_hello	 h;
	const uint8_t	*pl;
	size_t		 have = 0, used, plen;
	uint8_t		 type;
	ssize_t		 n;
	char		 host[256];

	dt_wbuf_init(&out);
	ap_reasm_init(&ra);
	gethostname(host, sizeof(host));
	h.version = AP_VERSION;
	h.hostname = host;
	h.pid = (uint32_t)getpid();
	h.free_port = 29500;
	ap_put_hello(&out, &h);
	flush();
	for (;;) {
		if ((n = read(0, in + have, sizeof(in) - have)) <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			return 0;	/* dtrun closed the link: the end */
		}
		have += (size_t)n;
		while (dt_frame_parse(in, have, AP_FRAME_MAX, &type, &pl, &plen,
		    &used) == 0) {
			if (ap_reasm_feed(&ra, type, &pl, &plen) == 1)
				message(type, pl, plen);
			memmove(in, in + used, have - used);
			have -= used;
		}
	}
}
