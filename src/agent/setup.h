/*
 * setup.h -- dtrun --setup: one command run on a host before any of its
 * ranks, whose stdout's NAME=VALUE lines become those ranks' variables
 * (envfile.h splits them). It runs as "/bin/sh -c CMD" in its own process
 * group; when the shell exits, whatever it left running is killed (every
 * descendant of the agent: no rank runs yet) and what is in its pipes is
 * read, so a setup that backgrounds something never holds the job up.
 *
 * Only --setup is here; agent.c runs it before a job's ranks. dtrun
 * --check's host side (hostcheck.c) starts the job's --setup through it
 * too, and also its own GPU/NCCL/interpreter probe script: the probe is
 * hostcheck.c's (script, time limit, answers) and only borrows this way of
 * running a shell whose stdout is kept and whose leftovers are killed.
 */
#ifndef DT_SETUP_H
#define DT_SETUP_H

#include <sys/types.h>

#include <stddef.h>

struct dt_err;
struct event_base;
struct setup;

#define SETUP_OUT_MAX	(1024 * 1024)	/* stdout kept; more fails the setup */
#define SETUP_ERR_KEEP	(4 * 1024)	/* stderr's last bytes kept */

/* Called once, when the setup has ended (exited, or was killed). */
typedef void (*setup_done_fn)(void *arg);

/*
 * Starts cmd with environment env, stdin from devnull. Returns the setup,
 * or NULL when it could not start, with e's code DT_ERR_NOMEM or
 * DT_ERR_SYS and its message the reason (strerror's words, no more).
 */
struct setup	*setup_start(struct event_base *, const char *cmd,
		    char *const env[], int devnull, setup_done_fn, void *arg,
		    struct dt_err *e);

/* A child was reaped: 1 if it was the setup's shell (done is called), else 0. */
int		 setup_reaped(struct setup *, pid_t, int status);

/* True until the setup's shell is reaped. */
int		 setup_running(const struct setup *);

/* Kills the setup's process group now (SIGKILL); done follows on reaping. */
void		 setup_kill(struct setup *);

/*
 * How it went: 0 when it exited 0 with its stdout within SETUP_OUT_MAX;
 * else DT_ERR_TOOBIG (it "wrote over 1 MiB on stdout") or DT_ERR_ABORTED
 * (it "exited with 3", "was killed by signal 9 (Killed)"), with e's
 * message saying which, in those words.
 */
int		 setup_result(const struct setup *, struct dt_err *e);

/* What it wrote on stdout (all of it), and the last bytes of its stderr. */
const char	*setup_stdout(const struct setup *, size_t *len);
const char	*setup_stderr(const struct setup *, size_t *len);

/* Kills it if it still runs, and frees. */
void		 setup_free(struct setup *);

#endif
