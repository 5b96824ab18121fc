/*
 * agentproto.h -- the launcher <-> agent protocol.
 *
 * One agent runs per host and speaks this over a byte stream: a socketpair
 * for the local launcher, an ssh channel remotely, TCP under Slurm. Every
 * message is one frame (src/common/wire.h). doc/agent-protocol.md gives
 * every frame's byte layout (tests/unit/t_protodoc.c holds it to this
 * file: a new frame or field goes there too). The conversation:
 *
 *	agent	 HELLO(version, hostname, pid, free port)
 *	launcher PORTS(n) -> agent PORTLIST(n ports)	-- only when a framework
 *						   needs ports on each host
 *	launcher JOB(...), RANK(...) x n, PREPARE	-- once every host said HELLO
 *	agent	 IFACE(ok, name, addr, why)		-- when JOB asks the agent to
 *						   choose its interface; not ok:
 *						   nothing more, the launcher
 *						   stops the job
 *	agent	 PREPARED  or  ERROR(code, msg)	-- JOB's setup command run (if
 *						   any), commands resolved,
 *						   no rank started
 *	launcher START					-- once every host said
 *						   PREPARED; one host: right
 *						   after PREPARE, kept by the
 *						   agent until PREPARED is sent
 *	agent	 STARTED(rank, pid) ..., OUTPUT(rank, stream, bytes) ...,
 *		 [ERRFILE(rank, path, size, bytes)]	-- a failed rank's error file,
 *						   when JOB asked for them and
 *						   the rank wrote one
 *		 EXIT(rank, how, code) ...		-- a rank's OUTPUT always precedes its EXIT
 *	launcher STOP(signal, grace) / SIGNAL(signal)	-- any time; SIGNAL goes
 *						   to every live rank's process
 *						   group and the job goes on
 *	agent	 DONE					-- every rank exited, leftovers killed
 *	both	 HEARTBEAT(timeout)			-- see below
 *	launcher STACKS -> agent STACK(rank, ...) per live rank, then
 *		 STACK(AP_NORANK, note)			-- any time once started
 *	agent	 STACKASK				-- the agent got SIGQUIT
 *						   (dtrun-kill --stacks)
 *	launcher CHECK(GATHER) -> agent CHECKED(GATHER)	-- dtrun --check and
 *		 CHECK(PROBE) -> agent CHECKED(PROBE)	   --preflight, after
 *						   HELLO and before JOB: what
 *						   the host has, then whether
 *						   it reaches rank 0's host
 *
 *	launcher AGAIN -> agent HELLO			-- the next attempt
 *						   (--max-restarts)
 *
 * After DONE the agent stays, its link and heartbeats kept, and waits:
 * a restart sends AGAIN and the conversation starts over from HELLO (a
 * fresh free port, the same pid) with the same agent, so an attempt costs
 * no new connection. Until AGAIN it ignores STOP, SIGNAL and STACKS (the
 * launcher may send them before it hears DONE) and refuses the rest. The
 * launcher closes the stream when the job is over; the agent then exits.
 *
 * The agent kills everything it started if the stream breaks. A stream
 * that goes silent without breaking (a host powered off, a partition that
 * sends no RST) is caught by heartbeats: once an agent's HELLO is in, the
 * launcher sends HEARTBEAT(timeout in ms) and turns its link's heartbeats
 * on (link_heartbeat, src/common/link.h): every timeout/6 the link looks
 * and sends HEARTBEAT if it sent nothing since it last looked. The agent,
 * from the first one it gets, does the same. Any byte counts as life: a
 * side that hears nothing at LINK_BEAT_LOOKS (5) looks in a row (so
 * within the timeout) gives the other up (the launcher fails the job with
 * 255, the agent stops its ranks). A launcher run with the heartbeat off
 * sends none, and the agent then never expects any.
 *
 * A JOB or RANK larger than one frame (a command line or environment as
 * big as execve takes: ARG_MAX, 128 KiB a string) goes in parts: CONT
 * frames with the first bytes of its payload, then a frame of its own type
 * with the rest; the receiver joins them (ap_reasm) and decodes the whole.
 * Encoders append whole frames to a dt_wbuf; decoders take one payload.
 * Times are 64-bit milliseconds.
 */
#ifndef DT_AGENTPROTO_H
#define DT_AGENTPROTO_H

#include <stddef.h>
#include <stdint.h>

#include "common/wire.h"
#include "common/dtlimits.h"

/*
 * Bumped whenever a message changes or a frame type is added (and
 * doc/agent-protocol.md's Versions table with it). JOB's first field is
 * the version and the agent reads it before decoding the rest, so a
 * launcher and agent of different versions fail with a message naming
 * both, not a protocol error. 4: JOB carries the setup command.
 * 5: JOB carries the interface candidates and rank 0's address; the agent
 * answers with IFACE. CHECK and CHECKED (--check, --preflight).
 * The agent stays after DONE and AGAIN starts the next attempt.
 * 6: JOB carries pack; PACKED. 7: JOB carries defaults and errfile; ERRFILE.
 * 8: RDZV, the ranks' rendezvous through their agent.
 * 9: CHECK's PAIR step and DEEP flag (--check --deep), with bytes and streams.
 * 10: PROGRESS, the steps ranks report (DTRUN_PROGRESS).
 * 12: STORE, the ranks' TCPStore through their agent (DTRUN_STORE).
 *     COLLS, the ranks' arrivals at NCCL collectives (dtrun's plugin).
 * 13: WAITS, where each rank's main thread waits, sampled from /proc.
 */
#define AP_VERSION	13
#define AP_FRAME_MAX	(1024 * 1024)	/* hard limit on one frame */
#define AP_MSG_MAX	(16 * 1024 * 1024) /* a JOB or RANK, all its parts */
#define AP_CHUNK	(64 * 1024)	/* largest OUTPUT payload an agent sends */
#define AP_MAX_STRS	(1024 * 1024)	/* argv/env entries in one message */
#define AP_MAX_STR	(256 * 1024)	/* one argv/env string */
#define AP_MAX_RANKS	DT_RANKS_MAX	/* ranks on one host */
#define AP_HOST_MAX	1024		/* HELLO's hostname (HOST_NAME_MAX is 64) */
#define AP_JOBID_MAX	256		/* JOB's job id (dtrun makes ~30 bytes) */
#define AP_CWD_MAX	4096		/* JOB's working directory (PATH_MAX) */
#define AP_ERRMSG_MAX	4096		/* ERROR's text: a few lines for a person */
#define AP_TOOL_MAX	256		/* STACK's tool name ("eu-stack+gdb") */
#define AP_IFACE_MAX	4096		/* one string of JOB's interface or IFACE */
#define AP_ERRFILE_MAX	(64 * 1024)	/* ERRFILE's data: the file's first bytes */

enum ap_type {
	/* launcher -> agent */
	AP_JOB = 1,
	AP_RANK = 2,
	AP_PREPARE = 3,
	AP_START = 4,
	AP_SIGNAL = 5,
	AP_STOP = 6,
	AP_PORTS = 7,
	AP_CONT = 8,		/* the first bytes of a JOB or RANK in parts */
	AP_STACKS = 16,		/* capture every live rank's stack */
	/* agent -> launcher */
	AP_HELLO = 64,
	AP_PREPARED = 65,
	AP_STARTED = 66,
	AP_OUTPUT = 67,
	AP_EXIT = 68,
	AP_ERROR = 69,
	AP_DONE = 70,
	AP_PORTLIST = 71,
	/* both ways */
	AP_HEARTBEAT = 128,	/* "still here"; carries the timeout */
	AP_PACKED = 129,	/* frames packed by the link (pack.h): the
				   link unpacks them, handlers never see one */
	AP_RDZV = 130,		/* a rank's rendezvous bytes, by channel (8) */
	AP_STORE = 131,		/* a rank's TCPStore bytes, by channel (12) */
	AP_STACK = 80,		/* one rank's stack, or the end of a STACKS */
	AP_STACKASK = 81,	/* please send STACKS to every agent */
	/* agent -> launcher */
	AP_IFACE = 82,		/* the interface this host chose, or why none */
	AP_ERRFILE = 83,	/* a failed rank's TORCHELASTIC_ERROR_FILE (new in 7) */
	AP_PROGRESS = 84,	/* the steps ranks reported (new in 10) */
	AP_COLLS = 85,		/* ranks' arrivals at NCCL collectives (12) */
	AP_WAITS = 86,		/* where ranks waited, sampled (13) */
	/* --check and --preflight (new in 5; numbers apart from the rest) */
	AP_CHECK = 32,		/* launcher -> agent: a step of the check */
	AP_CHECKED = 96,	/* agent -> launcher: its answers */
	AP_AGAIN = 24,		/* launcher -> agent: the next attempt, say HELLO */
};

enum ap_stream { AP_STDOUT = 1, AP_STDERR = 2 };
enum ap_how { AP_EXITED = 0, AP_SIGNALED = 1, AP_NOSTART = 2 };
#define AP_NORANK	UINT32_MAX	/* ERROR not about one rank */
#ifndef AP_MAX_PORTS			/* the conversation fuzzer's is smaller */
#define AP_MAX_PORTS	65536		/* ports one PORTS may ask for */
#endif
#define AP_HEARTBEAT_MAX_MS (24ULL * 3600 * 1000) /* longest heartbeat timeout */

struct ap_hello {
	uint32_t	 version;
	char		*hostname;
	uint32_t	 pid;
	int		 free_port;	/* a TCP port free on this host (MASTER_PORT) */
};

struct ap_job {
	uint32_t	 version;
	char		*job_id;
	char		*cwd;		/* "" = stay where the agent started */
	uint64_t	 kill_grace_ms;
	uint32_t	 nranks;	/* RANK messages that follow (<= AP_MAX_RANKS) */
	char		**env;		/* "K=V" for every rank on this host */
	size_t		 nenv;
	char		*setup;		/* sh -c this before PREPARED; "" = none */
	/*
	 * The host's own interface: rank0 is the address it routes to when
	 * iface (the host's --iface candidates, comma-separated) is "";
	 * both "": the launcher chose, the agent does nothing. ifvars: the
	 * AP_IF_* variables the agent sets to the name it chose.
	 */
	char		*iface;
	char		*rank0;
	uint8_t		 ifvars;
	/*
	 * 1: the agent packs what it sends (PACKED frames, pack.h), for a
	 * stream where every byte costs (ssh).
	 */
	uint8_t		 pack;
	/*
	 * "K=V" the ranks get only where nothing else sets K: not the
	 * agent's environment, the setup's lines, env or RANK's env
	 * (torchrun's OMP_NUM_THREADS=1).
	 */
	char		**defaults;
	size_t		 ndefaults;
	/*
	 * 1: give each rank TORCHELASTIC_ERROR_FILE, a file of its own in
	 * the agent's directory, and send ERRFILE with what a failed rank
	 * wrote there (torch's @record), before its EXIT.
	 */
	uint8_t		 errfile;
};

#define AP_IF_NCCL	0x01	/* NCCL_SOCKET_IFNAME */
#define AP_IF_GLOO	0x02	/* GLOO_SOCKET_IFNAME */
#define AP_IF_DMLC	0x04	/* DMLC_INTERFACE */
#define AP_IF_ALL	0x07

/* IFACE: the interface a host chose (ok), or why it could not (why). */
struct ap_iface {
	uint8_t		 ok;
	char		*name;		/* "" when not ok */
	char		*addr;
	char		*why;		/* "the route to 10.0.0.1", or the error */
};

struct ap_rank {
	uint32_t	 rank;
	uint32_t	 local_rank;
	char		**argv;
	size_t		 argc;
	char		**env;		/* "K=V" for this rank only */
	size_t		 nenv;
};

/* How a rank's stack capture went. */
enum ap_stack_status {
	AP_STK_OK = 0,
	AP_STK_TIMEDOUT = 1,	/* the tool ran past its bound and was killed */
	AP_STK_NOTOOL = 2,	/* neither gdb nor eu-stack is installed */
	AP_STK_FAILED = 3,	/* the tool ran but gave no stack (text: why) */
};
#define AP_STACK_MAX	(AP_FRAME_MAX - 4096) /* text of one STACK, cut there */

struct ap_stack {
	uint32_t	 rank;		/* AP_NORANK: the host's reply ends */
	uint32_t	 pid;
	uint8_t		 status;	/* enum ap_stack_status */
	char		*tool;		/* "eu-stack", "gdb", "eu-stack+gdb" */
	char		*text;		/* the tool's output, or a note */
};

/*
 * A step of dtrun --check. GATHER: choose the interface as a run does
 * (iface_pick of the candidates, else the route to target, rank 0's
 * address), find the command, and unless AP_CHK_FAST the interpreter,
 * torch, GPUs and NCCL; with AP_CHK_LISTEN (rank 0's host) listen on the
 * chosen address. PROBE: connect to target ("ADDR:PORT", that listener).
 * With AP_CHK_DEEP every host's GATHER also listens for pair tests on its
 * chosen address; PAIR then measures the path from this host to target
 * (another host's pair listener): round trips when bytes is 0, else the
 * throughput of bytes sent over streams connections at once.
 */
enum ap_check_step { AP_CHK_GATHER = 1, AP_CHK_PROBE = 2, AP_CHK_PAIR = 3 };
#define AP_CHK_FAST	0x1	/* --preflight: only what is quick */
#define AP_CHK_LISTEN	0x2	/* listen for the others' PROBEs */
#define AP_CHK_DEEP	0x4	/* listen for the others' PAIRs */
#define AP_CHK_STREAMS_MAX 64	/* a PAIR's connections at once */
#define AP_CHK_KV_MAX	4096	/* answers in one CHECKED */
#define AP_CHK_KEY_HEX	64	/* --deep's key: 32 bytes, in hex */

struct ap_check {
	uint32_t	 step;		/* enum ap_check_step */
	uint32_t	 flags;		/* AP_CHK_* */
	uint64_t	 now_ms;	/* dtrun's wall clock as it sent this */
	char		*iface;		/* GATHER: candidates; "" = by route */
	char		*target;	/* GATHER: rank 0's address; PROBE:
					   ADDR:PORT to connect to */
	char		*cmd;		/* GATHER: the command's argv[0]; "" = none */
	char		*cwd;		/* GATHER: the job's directory, as JOB's */
	char		**env;		/* "K=V" a rank would get from dtrun */
	size_t		 nenv;
	/*
	 * GATHER: the job's --setup, run first so the answers are what the
	 * ranks would see (its NAME=VALUE lines laid over env); NULL or ""
	 * = none.
	 */
	char		*setup;
	uint64_t	 bytes;		/* PAIR: to send; 0 = round trips only */
	uint32_t	 streams;	/* PAIR: connections to send them over */
	/*
	 * GATHER with DEEP, and PAIR: the check's key in hex, which the pair
	 * connections prove they hold (deeppair.h); "" (NULL) = none.
	 */
	char		*key;
};

struct ap_checked {
	uint32_t	 step;		/* the CHECK's */
	uint64_t	 now_ms;	/* the agent's wall clock as it came */
	uint64_t	 took_ms;	/* from then to this reply */
	char		**kv;		/* "key=value" answers (hostcheck.h) */
	size_t		 nkv;
};

/*
 * One rank in a PROGRESS: with AP_PROG_STEP its last reported step, which
 * came age_ms before the frame was sent; with AP_PROG_USAGE the CPU time
 * and resident memory of its processes, read now.
 */
#define AP_PROG_STEP	0x1
#define AP_PROG_USAGE	0x2
struct ap_progress {
	uint32_t	 rank;
	uint8_t		 flags;		/* AP_PROG_* */
	uint64_t	 step;
	uint32_t	 age_ms;
	uint64_t	 cpu_ms;
	uint32_t	 rss_kb;
};
#define AP_PROGRESS_ITEM 29	/* bytes of one on the wire */

/* A rank's arrival at a NCCL collective (COLLS), as dtrun's plugin saw it. */
struct ap_coll {
	uint32_t	 rank;
	uint32_t	 nranks;	/* the communicator's size */
	uint64_t	 comm;		/* its id: the same on all its ranks */
	uint64_t	 seq;		/* the collective's number in it */
	uint64_t	 ns;		/* when, the host's wall clock */
};
#define AP_COLL_ITEM	32	/* bytes of one on the wire */
#define AP_MAX_COLLS	16384	/* in one COLLS */

/*
 * One rank in a WAITS: over the last wall_ms, how its samples fell
 * (agent/waitclass.h: working, waiting on a peer, on its own input; the
 * rest neither), its main thread's CPU and run-queue time, and the input
 * it waited on most ("read on /data/shard-3", or "").
 */
struct ap_wait {
	uint32_t	 rank;
	uint32_t	 wall_ms;
	uint16_t	 samples, work, peer, input;
	uint32_t	 cpu_ms, delay_ms;
	char		*what;
};
#define AP_WAIT_WHAT_MAX 96	/* bytes of what */
#define AP_MAX_WAITS	65536	/* in one WAITS */

struct ap_stop {
	uint32_t	 signo;		/* first signal (SIGTERM, SIGINT...; SIGKILL = now) */
	uint64_t	 grace_ms;	/* then SIGKILL after this */
};

struct ap_output {
	uint32_t	 rank;
	uint8_t		 stream;
	const uint8_t	*data;		/* points into the payload */
	size_t		 len;
};

struct ap_exit {
	uint32_t	 rank;
	uint8_t		 how;		/* enum ap_how */
	uint32_t	 code;		/* exit code or signal number */
};

/* ERRFILE: what a failed rank left in its TORCHELASTIC_ERROR_FILE. */
struct ap_errfile {
	uint32_t	 rank;
	char		*path;		/* the file, on the rank's host */
	uint32_t	 size;		/* the file's size; data is its first bytes */
	const uint8_t	*data;		/* points into the payload */
	size_t		 len;		/* at most AP_ERRFILE_MAX and size */
};

struct ap_error {
	uint32_t	 rank;		/* AP_NORANK if not about one rank */
	uint32_t	 code;		/* exit status the launcher should use */
	char		*msg;
};

/*
 * Encoders: append one frame to b (JOB and RANK: one message, in parts if
 * it is over a frame). Return 0, DT_ERR_NOMEM, or DT_ERR_TOOBIG (a field
 * or the message over its limit; nothing is appended then).
 */
int	ap_put_hello(struct dt_wbuf *b, const struct ap_hello *);
int	ap_put_job(struct dt_wbuf *b, const struct ap_job *);
int	ap_put_rank(struct dt_wbuf *b, const struct ap_rank *);
int	ap_put_empty(struct dt_wbuf *b, enum ap_type);	/* PREPARE, START, PREPARED, DONE */
int	ap_put_signal(struct dt_wbuf *b, uint32_t signo);
int	ap_put_stop(struct dt_wbuf *b, const struct ap_stop *);
int	ap_put_ports(struct dt_wbuf *b, uint32_t n);	/* PORTS: ask for n */
/* PORTLIST: the n free ports found (a port is an int everywhere, 1 to DT_PORT_MAX). */
int	ap_put_portlist(struct dt_wbuf *b, const int *ports, uint32_t n);
int	ap_put_progress(struct dt_wbuf *b, const struct ap_progress *,
	    uint32_t n);
int	ap_put_waits(struct dt_wbuf *b, const struct ap_wait *, uint32_t n);
int	ap_put_started(struct dt_wbuf *b, uint32_t rank, uint32_t pid);
int	ap_put_output(struct dt_wbuf *b, uint32_t rank, uint8_t stream,
	    const void *data, size_t len);
/*
 * The same frame written in place (the agent reads a pipe straight into
 * it): begin returns room for up to max bytes of data and sets *st (NULL:
 * out of memory); end closes the frame with the n bytes put there.
 */
uint8_t	*ap_output_begin(struct dt_wbuf *b, uint32_t rank, uint8_t stream,
	    size_t max, size_t *st);
int	ap_output_end(struct dt_wbuf *b, size_t st, size_t n);
/*
 * As ap_output_end for n bytes of data that follow the frame on the stream
 * from elsewhere (spliced from a rank's pipe): b keeps the header alone.
 */
int	ap_output_end_head(struct dt_wbuf *b, size_t st, size_t n);
int	ap_put_exit(struct dt_wbuf *b, const struct ap_exit *);
int	ap_put_error(struct dt_wbuf *b, const struct ap_error *);
/* ERRFILE: data past AP_ERRFILE_MAX is left out (size says how big it was). */
int	ap_put_errfile(struct dt_wbuf *b, const struct ap_errfile *);
int	ap_put_heartbeat(struct dt_wbuf *b, uint64_t timeout_ms);
/* STACK: text longer than AP_STACK_MAX is cut, with a note. */
int	ap_put_stack(struct dt_wbuf *b, const struct ap_stack *);
int	ap_put_iface(struct dt_wbuf *b, const struct ap_iface *);
int	ap_put_check(struct dt_wbuf *b, const struct ap_check *);
int	ap_put_checked(struct dt_wbuf *b, const struct ap_checked *);

/*
 * Decoders: parse one payload (from dt_frame_parse) of the named type.
 * Return 0 or DT_ERR_PROTO; on error nothing needs freeing. Strings they
 * return are malloc'd; free with the matching ap_*_free.
 */
int	ap_get_hello(const uint8_t *, size_t, struct ap_hello *);
int	ap_get_job(const uint8_t *, size_t, struct ap_job *);
int	ap_get_rank(const uint8_t *, size_t, struct ap_rank *);
int	ap_get_u32(const uint8_t *, size_t, uint32_t *);	/* SIGNAL */
int	ap_get_stop(const uint8_t *, size_t, struct ap_stop *);
/* PORTLIST: *ports is malloc'd (NULL when n is 0); free it. */
int	ap_get_portlist(const uint8_t *, size_t, int **ports, uint32_t *n);
/* COLLS: now_ns is the agent's wall clock as it sent them. */
int	ap_put_colls(struct dt_wbuf *b, uint64_t now_ns,
	    const struct ap_coll *v, uint32_t n);
/* COLLS: *v is calloc'd (NULL when n is 0). */
int	ap_get_colls(const uint8_t *, size_t, uint64_t *now_ns,
	    struct ap_coll **v, uint32_t *n);
/* PROGRESS: *v is calloc'd (NULL when n is 0). */
int	ap_get_progress(const uint8_t *, size_t, struct ap_progress **v,
	    uint32_t *n);
/* *v and each what malloc'd: ap_waits_free. */
int	ap_get_waits(const uint8_t *, size_t, struct ap_wait **v, uint32_t *n);
void	ap_waits_free(struct ap_wait *, uint32_t n);
int	ap_get_started(const uint8_t *, size_t, uint32_t *rank, uint32_t *pid);
int	ap_get_output(const uint8_t *, size_t, struct ap_output *);
/* RDZV: n bytes of channel chan's stream; none says the channel ended. */
int	ap_put_rdzv(struct dt_wbuf *b, uint32_t chan, const void *p, size_t n);
/* STORE: the same, for a rank's connection to the job's store (12). */
int	ap_put_store(struct dt_wbuf *b, uint32_t chan, const void *p, size_t n);
/* RDZV or STORE: *data points into the payload. */
int	ap_get_rdzv(const uint8_t *, size_t, uint32_t *chan,
	    const uint8_t **data, size_t *len);
int	ap_get_exit(const uint8_t *, size_t, struct ap_exit *);
int	ap_get_error(const uint8_t *, size_t, struct ap_error *);
int	ap_get_errfile(const uint8_t *, size_t, struct ap_errfile *);
int	ap_get_stack(const uint8_t *, size_t, struct ap_stack *);
int	ap_get_iface(const uint8_t *, size_t, struct ap_iface *);
int	ap_get_check(const uint8_t *, size_t, struct ap_check *);
int	ap_get_checked(const uint8_t *, size_t, struct ap_checked *);
int	ap_get_empty(const uint8_t *, size_t);
/* HEARTBEAT: a timeout from 1 ms to AP_HEARTBEAT_MAX_MS, or DT_ERR_PROTO. */
int	ap_get_heartbeat(const uint8_t *, size_t, uint64_t *timeout_ms);

/*
 * Joins the parts of a message sent in several frames. Feed it every frame
 * received, in order. Returns 1 when a whole message is there (*p and *n
 * then point at its payload, valid until the next call), 0 for a CONT part
 * it kept, DT_ERR_NOMEM, or DT_ERR_PROTO: parts over AP_MSG_MAX, an
 * empty part, or parts ending in a type other than JOB or RANK.
 */
struct ap_reasm {
	struct dt_wbuf	 buf;
	int		 parts;		/* CONT frames kept */
};

void	ap_reasm_init(struct ap_reasm *);
int	ap_reasm_feed(struct ap_reasm *, uint8_t type, const uint8_t **p,
	    size_t *n);
void	ap_reasm_free(struct ap_reasm *);

void	ap_hello_free(struct ap_hello *);
void	ap_job_free(struct ap_job *);
void	ap_rank_free(struct ap_rank *);
void	ap_error_free(struct ap_error *);
void	ap_errfile_free(struct ap_errfile *);
void	ap_stack_free(struct ap_stack *);
void	ap_iface_free(struct ap_iface *);
void	ap_check_free(struct ap_check *);
void	ap_checked_free(struct ap_checked *);

/* A name for a message type, for logs ("OUTPUT"); "?" if unknown. */
const char *ap_type_name(int);

#endif
