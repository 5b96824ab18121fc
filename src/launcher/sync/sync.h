/*
 * sync.h -- --sync-dst-dir: copy the launcher's directory to DIR on every
 * host with rsync before anything starts there, then run the job in DIR.
 *
 * Each host gets "rsync -az --delete [--exclude=PAT...] ./ HOST:DIR/" over
 * ssh with the user, port, keys, known_hosts and StrictHostKeyChecking that
 * dtrun's own connection to that host uses (ssh_resolve), in BatchMode.
 * At most --ssh-fanout rsyncs run at once, as children watched from the
 * job's event loop. "%h" in DIR is the host's name, for hosts that share a
 * filesystem.
 */
#ifndef DT_SYNC_H
#define DT_SYNC_H

#include <sys/types.h>

struct dt_err;
struct event_base;
struct opts;
struct plan;
struct plan_host;
struct strv;
struct sync;
struct job_feature;

/* The sync on the job's hooks (syncfeat.c). */
extern const struct job_feature sync_feature;

/*
 * Checks the sync options once the plan's launcher is known: excludes
 * need a directory, and DIR must not be "/", "~" or the home directory
 * (--delete would empty it). Returns 0 or DT_ERR_INVAL with e filled.
 */
int	 sync_check(const struct opts *, struct dt_err *e);

/*
 * Builds rsync's argv for host ph into v (remote hosts: the ssh command
 * from ssh_resolve; local: a plain copy). Returns 0, or a negative
 * DT_ERR_* from ssh_resolve with e filled.
 */
int	 sync_argv(const struct opts *, const struct plan_host *ph, int local,
	     struct strv *v, struct dt_err *e);

/*
 * Starts syncing every host of p from base. done(arg, code) is called
 * once: code 0 when every host is in sync, else the exit status dtrun
 * should give (each failure already logged, naming its host and rsync's
 * message). Returns NULL with e filled if nothing could be started.
 */
struct sync *sync_start(struct event_base *, const struct opts *,
	    const struct plan *, void (*done)(void *, int), void *arg,
	    struct dt_err *e);

/* A child was reaped: returns 1 if it was one of s's rsyncs. */
int	 sync_reaped(struct sync *s, pid_t pid, int status);

/* Kills the rsyncs still running; done is not called any more. */
void	 sync_stop(struct sync *s);

/* Stops what still runs and frees s (NULL is fine). */
void	 sync_free(struct sync *s);

#endif
