/*
 * exitcodes.h -- every exit status dtrun, dtrun-agent and dtrun-kill give,
 * in one place, each with why it is that number. dtrun's own statuses are
 * promised in README ("Exit status") and dtrun(1); a rank's code passes
 * through unchanged (0 to 255), so these are chosen where a person or a
 * script already reads them that way: sysexits(3), timeout(1), the shell,
 * ssh.
 */
#ifndef DT_EXITCODES_H
#define DT_EXITCODES_H

#include <signal.h>

#define EXIT_OK		0	/* every rank exited 0; nothing left */

/*
 * dtrun-kill: something of a job is left, or a record (or its directory)
 * was refused. dtrun-agent --connect: it could not reach dtrun (srun then
 * says so, and dtrun names the node).
 */
#define EXIT_LEFTOVER	1
#define EXIT_NOCONNECT	1

/*
 * Usage and configuration: a bad option, hostfile or engine.yaml, a
 * command missing on a host (when the shell's 126/127 do not apply), a
 * --setup that failed, another protocol version. What getopt programs
 * conventionally exit with; nothing ran.
 */
#define EXIT_CONFIG	2

/*
 * Internal: out of memory, a protocol error, a broken invariant.
 * sysexits(3)'s EX_SOFTWARE, so it is told apart from a rank's 1.
 */
#define EXIT_INTERNAL	70

/*
 * The ssh backend's remote probe: no dtrun-agent of this build on the
 * host, so dtrun uploads one. Private between dtrun and its own remote
 * command line; a user never sees it.
 */
#define EXIT_NEED_AGENT	97

/*
 * --on-straggler stop: dtrun stopped a job that was running, but too
 * slowly on one rank or host; beside the hang's 123, as the same kind of
 * verdict on a live job.
 */
#define EXIT_STRAGGLER	122
#define EXIT_HANG	123	/* --hang-timeout found the job hung */
#define EXIT_TIMEOUT	124	/* --timeout: timeout(1)'s status */
#define EXIT_RDZV	125	/* ranks never joined the rendezvous */

/*
 * A command found but not executable / not found at all: the shell's
 * rules, so `dtrun -n 2 nosuch` says what `sh -c nosuch` says. A spawned
 * child whose exec failed also exits EXIT_NOTFOUND (the errno travels
 * separately).
 */
#define EXIT_NOEXEC	126
#define EXIT_NOTFOUND	127

/* Died of signal n (a rank, or dtrun itself): the shell's 128+N. */
#define EXIT_SIGNAL(n)	(128 + (n))
/*
 * dtrun's stdout was closed (`dtrun ... | head -1`): the job ends as
 * SIGPIPE would end a pipeline, 141.
 */
#define EXIT_PIPE	(128 + SIGPIPE)
/* An agent got SIGTERM: its host is going down, so the host is lost. */
#define EXIT_AGENT_TERM	(128 + SIGTERM)

/*
 * A host or its agent is lost (its link broke, or it was silent past
 * --heartbeat-timeout; its keeper died): what ssh exits with when it
 * cannot reach a host.
 */
#define EXIT_LOST	255

#endif
