/*
 * topsrv.h -- the socket dtrun top reads a running job through:
 * JOBID.top in the records' directory (record.h: this user's, mode 0700),
 * a Unix stream socket that answers each connection of our own user with
 * one view of the job and closes it. The request is one line: "table" or
 * "json". Between attempts, the answer says the job is restarting.
 * "info" is answered with one line of tab-separated fields, for dtrun
 * top's list of jobs: JOBID START(epoch s) RANKS HOSTS(count)
 * HOSTS(names, comma-separated) COMMAND, each escaped (log_escape).
 */
#ifndef DT_TOPSRV_H
#define DT_TOPSRV_H

#include <stdint.h>

struct event_base;
struct plan;
struct topsrv;
struct topview;

#define TOPSRV_SUFFIX		".top"
#define TOPSRV_REQ_MAX		16	/* bytes of a request line */
#define TOPSRV_WAIT_S		5	/* a client slower than this: closed */
#define TOPSRV_CLIENTS		256	/* at once; the oldest idle makes room */
#define TOPSRV_BATCH		32	/* accepted at a time */
#define TOPSRV_FIELD_MAX	200	/* bytes of a host name or word in "info" */

/* Listens for job_id's viewers; NULL (said at -v) when it cannot. */
struct topsrv	*topsrv_new(struct event_base *, const char *job_id);
/* Stops listening, closes every viewer's connection, removes the socket. */
void		 topsrv_free(struct topsrv *);
/* What "info" says of the job: p's ranks and hosts, its command. */
void		 topsrv_describe(struct topsrv *, const struct plan *p,
		    char *const *cmd, int ncmd);
/* The attempt running now (NULL: none, between attempts). */
void		 topsrv_attach(struct topsrv *, struct topview *);

#endif
