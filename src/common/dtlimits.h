/*
 * dtlimits.h -- the limits and buffer sizes that more than one module must
 * agree on, and those a user meets in a message, each named with why it
 * is that size. (Not "limits.h": -Isrc/common would shadow the system's.)
 *
 * A wire format's own bounds stay in its header, beside the fields they
 * bound (agentproto.h's AP_*, the rendezvous's proto.h RDZV_*, connect.h's
 * AC_*; doc/agent-protocol.md and doc/rendezvous.md list them), but take
 * their value from here where they are a limit of the job rather than of
 * the format.
 */
#ifndef DT_DTLIMITS_H
#define DT_DTLIMITS_H

/*
 * Ranks in one plan, and so on one host at most: far beyond any cluster,
 * small enough that a per-rank table is a few tens of MiB.
 */
#define DT_RANKS_MAX	1000000

/* A host name, as DNS bounds it (255 octets): hostfiles, HELLO, JOIN, --connect. */
#define DT_HOST_MAX	255

/* The largest TCP port: -p, user@host:port, ssh_config's Port. */
#define DT_PORT_MAX	65535

/*
 * Per-job secrets (the rendezvous's and the Slurm agents'): 32 random
 * bytes (256 bits) are made; a peer's shorter than 16 bytes (128 bits,
 * guessable in principle) is refused; 64 bounds what is parsed.
 */
#define DT_SECRET_LEN	32
#define DT_SECRET_MIN	16
#define DT_SECRET_MAX	64

/*
 * A packed agent link (ssh): above DT_LINK_HIGH bytes queued (dtrun, or
 * whoever reads its stdout, is slower than the ranks) the ranks' pipes are
 * paused, and resumed below DT_LINK_LOW. 4 MiB lets a fast reader never
 * see a pause; 1 MiB of hysteresis keeps pausing rare. An unpacked link
 * splices the output and queues none (agent_link_queue).
 */
#define DT_LINK_LOW	(1 << 20)
#define DT_LINK_HIGH	(4 << 20)

/*
 * Frames an agent encodes are written once this many bytes are waiting
 * (STARTED of many ranks): one write, not one per rank, and still well
 * under a pipe's or socket's buffer.
 */
#define DT_WRITE_BATCH	(64 * 1024)

/*
 * listen() backlogs. One connection per host arrives at once at dtrun's
 * Slurm listener and at the check's probe listener on rank 0's host; one
 * per rank at the rendezvous, where every rank may dial in the same
 * millisecond (the kernel caps both at net.core.somaxconn).
 */
#define DT_BACKLOG_HOSTS	1024
#define DT_BACKLOG_RANKS	65535

/*
 * Descriptors a job needs, for --check to compare with the open-files
 * limits: an agent holds six per rank (the read ends of its stdout and
 * stderr pipes, its rendezvous connection to the agent's relay, its
 * progress connection, its two TCPStore connections: torch 1.13 keeps a
 * second for watched keys); dtrun up to two per host (a link's pipes or
 * socket) and, with --output-dir, two files per rank (the rendezvous
 * reaches it through the agents' links, not a connection a rank); either
 * some more of its own (event loop, listeners, records, stack captures),
 * counted generously. Measured: 60 ranks of rdzv-probe -j, the agent 196
 * descriptors, dtrun 10; 8 gloo ranks of torch 1.13, the agent 49 with
 * dtrun's store, 32 without.
 */
#define DT_NOFILE_PER_RANK	6
#define DT_NOFILE_PER_HOST	2
#define DT_NOFILE_OUTPUT_PER_RANK 2
#define DT_NOFILE_SPARE		64

/*
 * --check: below these a host is a problem. NCCL's shared-memory transport
 * between the ranks of one host needs room in /dev/shm (a container's
 * default 64 MiB makes it fail at its first collective); the ranks need
 * some free space where they run (checkpoints, core files, logs).
 */
#define DT_SHM_MIN_MB		256
#define DT_DISK_MIN_MB		1024

/*
 * --check: a host with RDMA devices whose locked-memory limit is below
 * this (in KiB) is a problem. NCCL's InfiniBand/RoCE transport pins its
 * buffers (ibv_reg_mr), counted against RLIMIT_MEMLOCK: the defaults (64
 * KiB, 8 MiB since Linux 5.16) fail at the first registration, and what
 * NCCL pins grows with peers, channels and NCCL_BUFFSIZE, so the vendors
 * ask for "unlimited". A finite limit this high was chosen by someone who
 * sized it; stopping a --preflight over it would stop jobs that run.
 */
#define DT_MEMLOCK_MIN_KB	(64ULL << 20)	/* 64 GiB */

/*
 * One message for a person: an error, a log line, an escaped name from a
 * peer. Longer ones are cut; they were never meant to be read whole.
 */
#define DT_MSG_MAX	1024

/* Counts given on the command line (-n, --nnodes...): DT_RANKS_MAX. */
#define DT_COUNT_MAX	DT_RANKS_MAX

/*
 * Seconds given on the command line (--timeout, --kill-grace...): a
 * year. Longer is a typo, and a year of milliseconds still fits 64 bits
 * many times over.
 */
#define DT_SECS_MAX	(365 * 24 * 3600)

/* --heartbeat-timeout: a day (agentproto.h's AP_HEARTBEAT_MAX_MS). */
#define DT_HEARTBEAT_MAX_S (24 * 3600)

/* dtrun-kill -w: an hour between SIGTERM and SIGKILL is plenty. */
#define DT_KILL_WAIT_MAX_S 3600

/*
 * What is read of a process's /proc/PID/environ (looking for its
 * DTRUN_JOB_ID): an environment is at most a few MiB (ARG_MAX), so a
 * bigger file is not one to trust.
 */
#define DT_ENVIRON_MAX	(64 << 20)

/* The tail of a failed --setup's stderr shown in the error: a message, not a log. */
#define DT_SETUP_TAIL	2048

#endif
