/*
 * mkcorpus.c -- fuzzing seeds: one valid frame of each agent message type
 * (into DIR, for fuzz-agent), and whole conversations with harness events
 * (into CONVDIR, for fuzz-agent-conv: see fuzz_conversation.c).
 *
 *	cc -D_GNU_SOURCE -Isrc -o /tmp/mkcorpus \
 *	    fuzz/agent/mkcorpus.c src/proto/agentproto.c src/proto/phase.c \
 *	    src/common/wire.c src/common/environ.c \
 *	    src/common/err.c src/common/envfile.c src/common/iface.c \
 *	    src/common/pack.c -levent_core -llz4 && /tmp/mkcorpus fuzz/agent/corpus \
 *	    fuzz/agent/conversations
 */
#include <stdio.h>
#include <string.h>

#include "proto/agentproto.h"
#include "common/pack.h"
#include "proto/phase.h"
#include "common/wire.h"

/* Writes b's bytes to DIR/name and empties b. */
static void
emit(const char *dir, const char *name, struct dt_wbuf *b)
{
	char	 path[512];
	FILE	*f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "wb")) != NULL) {
		fwrite(b->p, 1, b->len, f);
		fclose(f);
	}
	dt_wbuf_reset(b);
}

/* A harness event of fuzz_conversation.c: a frame of type 0xf0 and up. */
static void
event(struct dt_wbuf *b, uint8_t type, const char *payload, size_t n)
{
	size_t	st = dt_frame_begin(b, type);

	dt_wbuf_put(b, payload, n);
	dt_frame_end(b, st, AP_FRAME_MAX);
}

/* Appends a JOB cut into CONT parts of at most part bytes each. */
static void
job_in_parts(struct dt_wbuf *b, const struct ap_job *j, size_t part)
{
	struct dt_wbuf	 one;
	size_t		 len, off;

	dt_wbuf_init(&one);
	ap_put_job(&one, j);
	len = one.len - DT_FRAME_HDR;
	for (off = 0; off + part < len; off += part)
		event(b, AP_CONT, (char *)one.p + DT_FRAME_HDR + off, part);
	event(b, AP_JOB, (char *)one.p + DT_FRAME_HDR + off, len - off);
	dt_wbuf_free(&one);
}

/* JOB, two RANKs, PREPARE, START, and both ranks exiting 0. */
static void
two_ranks_run(struct dt_wbuf *b, const struct ap_job *j,
    const struct ap_rank *r0, const struct ap_rank *r1)
{
	ap_put_job(b, j);
	ap_put_rank(b, r0);
	ap_put_rank(b, r1);
	ap_put_empty(b, AP_PREPARE);
	ap_put_empty(b, AP_START);
	event(b, 0xf0, "\0\0", 2);
	event(b, 0xf0, "\1\0", 2);
}

/*
 * Puts what takes an agent from its HELLO to phase ph (phase.h), with one
 * rank, so a frame after it meets that phase.
 */
static void
reach_phase(struct dt_wbuf *b, enum agent_phase ph, const struct ap_job *j,
    const struct ap_rank *r)
{
	struct ap_stop	 s = { 15, 0 };

	if (ph == AGP_WAITING)
		return;
	if (ph == AGP_IDLE) {
		ap_put_stop(b, &s);		/* nothing runs: DONE at once */
		return;
	}
	ap_put_job(b, j);
	if (ph == AGP_JOB)
		return;
	ap_put_rank(b, r);
	ap_put_empty(b, AP_PREPARE);	/* no setup: PREPARED at once */
	if (ph == AGP_RUNNING)
		ap_put_empty(b, AP_START);
}

/*
 * One seed per cell of phase.c's table on the agent's side: every frame
 * dtrun sends, valid, in every phase, then a rank's exit. Taken, stale
 * and refused frames all start from a seed of their own.
 */
static void
table_cells(const char *dir, struct dt_wbuf *b)
{
	static const uint8_t types[] = { AP_PORTS, AP_CHECK, AP_JOB, AP_RANK,
	    AP_PREPARE, AP_START, AP_STOP, AP_SIGNAL, AP_STACKS, AP_AGAIN,
	    AP_HEARTBEAT, AP_RDZV };
	char		*av[] = { "true" };
	struct ap_job	 j = { AP_VERSION, "cell", "", 5000, 1, NULL, 0 };
	struct ap_rank	 r = { 0, 0, av, 1, NULL, 0 };
	struct ap_stop	 s = { 15, 100 };
	struct ap_check	 ck = { AP_CHK_PROBE, AP_CHK_FAST, 1700000000000ULL,
			    "", "127.0.0.1:1", "true", "", NULL, 0 };
	char		 name[64];
	size_t		 i;
	int		 ph;

	for (ph = 0; ph < AGP_NPHASES; ph++) {
		for (i = 0; i < sizeof(types); i++) {
			reach_phase(b, ph, &j, &r);
			switch (types[i]) {
			case AP_PORTS:	ap_put_ports(b, 2); break;
			case AP_CHECK:	ap_put_check(b, &ck); break;
			case AP_JOB:	ap_put_job(b, &j); break;
			case AP_RANK:	ap_put_rank(b, &r); break;
			case AP_STOP:	ap_put_stop(b, &s); break;
			case AP_SIGNAL:	ap_put_signal(b, 10); break;
			case AP_HEARTBEAT: ap_put_heartbeat(b, 5000); break;
			case AP_RDZV:	ap_put_rdzv(b, 1, "x", 1); break;
			default:	ap_put_empty(b, types[i]); break;
			}
			event(b, 0xf0, "\0\0", 2);
			snprintf(name, sizeof(name), "cell-%s-%s",
			    agent_phase_name(ph), ap_type_name(types[i]));
			for (char *c = name; *c != '\0'; c++)
				if (*c == ' ')
					*c = '_';
			emit(dir, name, b);
		}
	}
}

/* Writes the conversation seeds into dir. */
static void
conversations(const char *dir)
{
	struct dt_wbuf	 b;
	char		*env[] = { "A=1", "PATH=/bin" };
	char		*av[] = { "true", "x" }, *bad[] = { "missing" };
	struct ap_job	 j = { AP_VERSION, "job", "", 5000, 2, env, 2 };
	struct ap_rank	 r0 = { 0, 0, av, 2, env, 1 };
	struct ap_rank	 r1 = { 1, 1, av, 1, NULL, 0 };
	struct ap_rank	 rb = { 0, 0, bad, 1, NULL, 0 };
	struct ap_stop	 s = { 15, UINT64_C(4294968000) };
	size_t		 st;
	char		*ckenv[] = { "NCCL_SOCKET_IFNAME=^lo", NULL };
	char		*defs[] = { "OMP_NUM_THREADS=1" };
	struct ap_check	 ck = { AP_CHK_GATHER, AP_CHK_LISTEN, 1700000000000ULL,
			    "", "10.0.0.1", "python3", "", ckenv, 1 };

	dt_wbuf_init(&b);
	/* Two ranks that run and exit 0, then DONE. */
	two_ranks_run(&b, &j, &r0, &r1);
	emit(dir, "run", &b);
	/* The same, told to pack what it sends (ssh). */
	j.pack = 1;
	two_ranks_run(&b, &j, &r0, &r1);
	emit(dir, "run-packed", &b);
	j.pack = 0;
	/* A command that is not there. */
	j.nranks = 1;
	ap_put_job(&b, &j);
	ap_put_rank(&b, &rb);
	ap_put_empty(&b, AP_PREPARE);
	emit(dir, "missing", &b);
	/* A JOB in parts, a stop with a long grace, then the kill timer. */
	j.nranks = 2;
	job_in_parts(&b, &j, 16);
	ap_put_rank(&b, &r0);
	ap_put_rank(&b, &r1);
	ap_put_empty(&b, AP_PREPARE);
	ap_put_empty(&b, AP_START);
	ap_put_stop(&b, &s);
	event(&b, 0xf1, "", 0);
	event(&b, 0xf0, "\0\x09", 2);
	event(&b, 0xf5, "", 0);
	emit(dir, "parts-stop", &b);
	/* Signals, back-pressure, SIGTERM to the agent. */
	ap_put_job(&b, &j);
	ap_put_rank(&b, &r0);
	ap_put_rank(&b, &r1);
	ap_put_empty(&b, AP_PREPARE);
	ap_put_empty(&b, AP_START);
	ap_put_signal(&b, 10);
	event(&b, 0xf3, "", 0);
	event(&b, 0xf4, "", 0);
	event(&b, 0xf2, "", 0);
	event(&b, 0xf0, "\1\x0f", 2);
	emit(dir, "signals", &b);
	/* Ports, then a job that claims 4G ranks. */
	ap_put_ports(&b, 3);
	j.nranks = 1;
	st = b.len;
	ap_put_job(&b, &j);
	/* nranks: after the header, version, "job", "" and the grace. */
	memset(b.p + st + DT_FRAME_HDR + 4 + 7 + 4 + 8, 0xff, 4);
	ap_put_rank(&b, &r0);
	ap_put_rank(&b, &r1);
	emit(dir, "ports-4g", &b);
	/* A setup that prints variables and a note, then the ranks run. */
	j.nranks = 2;
	j.setup = ". venv/bin/activate && env";
	ap_put_job(&b, &j);
	ap_put_rank(&b, &r0);
	ap_put_rank(&b, &r1);
	ap_put_empty(&b, AP_PREPARE);
	event(&b, 0xf7, "\0PATH=/v/bin\nactivated\nVIRTUAL_ENV=/v\n", 38);
	ap_put_empty(&b, AP_START);
	event(&b, 0xf0, "\0\0", 2);
	event(&b, 0xf0, "\1\0", 2);
	emit(dir, "setup", &b);
	/* A setup that fails; one stopped while it runs. */
	ap_put_job(&b, &j);
	ap_put_rank(&b, &r0);
	ap_put_rank(&b, &r1);
	ap_put_empty(&b, AP_PREPARE);
	event(&b, 0xf7, "\3no venv\n", 9);
	ap_put_stop(&b, &s);
	emit(dir, "setup-fails", &b);
	ap_put_job(&b, &j);
	ap_put_rank(&b, &r0);
	ap_put_rank(&b, &r1);
	ap_put_empty(&b, AP_PREPARE);
	ap_put_stop(&b, &s);
	event(&b, 0xf7, "\x89", 1);
	emit(dir, "setup-stopped", &b);
	/* The agent chooses its interface: by route, then from candidates. */
	j.setup = "";
	j.rank0 = "127.0.0.1";
	j.ifvars = AP_IF_NCCL | AP_IF_GLOO;
	two_ranks_run(&b, &j, &r0, &r1);
	emit(dir, "iface-route", &b);
	j.iface = "nosuch0,nosuch1";
	ap_put_job(&b, &j);
	ap_put_rank(&b, &r0);
	ap_put_rank(&b, &r1);
	ap_put_empty(&b, AP_PREPARE);
	ap_put_stop(&b, &s);
	emit(dir, "iface-none", &b);
	j.iface = "";
	/* --preflight: both steps of a check, then the job; one after it. */
	ap_put_check(&b, &ck);
	ck.step = AP_CHK_PROBE;
	ck.target = "10.0.0.1:4242";
	ap_put_check(&b, &ck);
	ap_put_job(&b, &j);
	ap_put_rank(&b, &r0);
	ap_put_rank(&b, &r1);
	ap_put_empty(&b, AP_PREPARE);
	ap_put_empty(&b, AP_START);
	ap_put_check(&b, &ck);
	emit(dir, "check", &b);
	/* --check --deep (9): GATHER listening for pairs, then both PAIRs. */
	ck.step = AP_CHK_GATHER;
	ck.flags = AP_CHK_DEEP;
	ck.target = "127.0.0.1";
	ap_put_check(&b, &ck);
	ck.step = AP_CHK_PAIR;
	ck.flags = 0;
	ck.target = "127.0.0.1:9";
	ap_put_check(&b, &ck);
	ck.bytes = 1 << 20;
	ck.streams = 4;
	ap_put_check(&b, &ck);
	emit(dir, "check-deep", &b);
	/* torchrun's defaults and error files (7): rank 0 dies of a signal. */
	j.ifvars = 0;
	j.rank0 = "";
	j.defaults = defs;
	j.ndefaults = 1;
	j.errfile = 1;
	ap_put_job(&b, &j);
	ap_put_rank(&b, &r0);
	ap_put_rank(&b, &r1);
	ap_put_empty(&b, AP_PREPARE);
	ap_put_empty(&b, AP_START);
	event(&b, 0xf0, "\0\x09", 2);
	event(&b, 0xf0, "\1\0", 2);
	emit(dir, "errfile", &b);
	table_cells(dir, &b);
	dt_wbuf_free(&b);
}

/* A PACKED frame of eight OUTPUT frames, as an ssh agent sends them. */
static void
packed(const char *dir, struct dt_wbuf *b)
{
	struct dt_wbuf	raw;
	char		line[300];
	int		i;

	dt_wbuf_init(&raw);
	for (i = 0; i < 8; i++) {
		snprintf(line, sizeof(line), "[%d] step %d loss 0.42 "
		    "lr 3e-4 tokens/s 51234 ............................"
		    "....................................................\n",
		    i % 4, i);
		ap_put_output(&raw, i % 4, AP_STDOUT, line, strlen(line));
	}
	if (pack_frames(b, raw.p, raw.len, AP_FRAME_MAX))
		emit(dir, "packed", b);
	dt_wbuf_reset(b);
	dt_wbuf_free(&raw);
}

int
main(int argc, char **argv)
{
	struct dt_wbuf	 b;
	char		*env[] = { "A=1", "WORLD_SIZE=4" };
	char		*av[] = { "python", "-u", "train.py" };
	struct ap_hello	 h = { AP_VERSION, "node1", 42, 29500 };
	char		*defs[] = { "OMP_NUM_THREADS=1" };
	struct ap_job	 j = { AP_VERSION, "job", "/w", 5000, 2, env, 2, "", "",
			    "", 0, 0, defs, 1, 1 };
	struct ap_rank	 r = { 1, 1, av, 3, env, 1 };
	struct ap_errfile ef = { 1, "/run/user/1/dtrun/job.42.err/rank.1.json",
			    40, (const uint8_t *)"{\"message\": {\"message\": "
			    "\"E: x\"}}", 29 };
	struct ap_stop	 s = { 15, 5000 };
	struct ap_exit	 x = { 1, AP_SIGNALED, 9 };
	struct ap_error	 e = { AP_NORANK, 2, "x: command not found" };
	struct ap_iface	 f = { 1, "eth1", "10.9.0.2", "the route to 10.9.0.1" };
	int		 ports[3] = { 29500, 29501, 40000 };
	char		*kv[] = { "version=0.1.0", "iface=eth0" };
	struct ap_check	 ck = { AP_CHK_GATHER, AP_CHK_FAST, 1700000000000ULL,
			    "gpu01=ib0,eth0", "10.0.0.1", "python3", "/w", env, 2 };
	struct ap_checked ckd = { AP_CHK_GATHER, 1700000000001ULL, 12, kv, 2 };
	struct ap_progress prog[2] = { { 0, 1, 120, 15, 2500, 81920 },
			    { 1, 0, 119, 480, 2400, 80000 } };
	const char	*dir = argc > 1 ? argv[1] : ".";

	dt_wbuf_init(&b);
	ap_put_hello(&b, &h);		emit(dir, "hello", &b);
	ap_put_job(&b, &j);		emit(dir, "job", &b);
	ap_put_rank(&b, &r);		emit(dir, "rank", &b);
	ap_put_empty(&b, AP_PREPARE);	emit(dir, "prepare", &b);
	ap_put_signal(&b, 10);		emit(dir, "signal", &b);
	ap_put_stop(&b, &s);		emit(dir, "stop", &b);
	ap_put_started(&b, 1, 99);	emit(dir, "started", &b);
	ap_put_output(&b, 1, AP_STDOUT, "hi\n", 3); emit(dir, "output", &b);
	ap_put_exit(&b, &x);		emit(dir, "exit", &b);
	ap_put_errfile(&b, &ef);	emit(dir, "errfile", &b);
	ap_put_error(&b, &e);		emit(dir, "error", &b);
	ap_put_ports(&b, 3);		emit(dir, "ports", &b);
	ap_put_portlist(&b, ports, 3);	emit(dir, "portlist", &b);
	ap_put_iface(&b, &f);		emit(dir, "iface", &b);
	ap_put_check(&b, &ck);		emit(dir, "check", &b);
	ap_put_checked(&b, &ckd);	emit(dir, "checked", &b);
	ap_put_rdzv(&b, 3, "\0\0\0\x0e\x02", 5); emit(dir, "rdzv", &b);
	ap_put_progress(&b, prog, 2);	emit(dir, "progress", &b);
	packed(dir, &b);
	ap_put_job(&b, &j);
	ap_put_rank(&b, &r);
	ap_put_rank(&b, &r);
	ap_put_empty(&b, AP_PREPARE);	emit(dir, "conversation", &b);
	dt_wbuf_free(&b);
	if (argc > 2)
		conversations(argv[2]);
	return 0;
}
