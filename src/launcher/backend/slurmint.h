/*
 * slurmint.h -- the insides of the Slurm backend, shared by
 * backend_slurm.c (the listener, the agents' dial-back, srun's life) and
 * srunlines.c (srun's output).
 */
#ifndef DT_SLURMINT_H
#define DT_SLURMINT_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include <event2/util.h>

#include "host/connect.h"

#define SRUN_LINE_MAX	8192	/* longer srun lines are cut */
#define TASK_FAIL_MS	200	/* for srun to say why, after a task ended */

struct slurm;

/*
 * One TCP connection from an agent, while it proves itself; then its fd
 * goes to its host's link and the sconn is gone.
 */
struct sconn {
	struct slurm	*s;
	struct sconn	*next;		/* among those not yet authenticated */
	int		 fd;
	struct link	*link;		/* for the handshake */
	char		 peer[64];
	uint8_t		 snonce[AC_NONCE_LEN];
	struct event	*timer;
};

/* A host's part: its link (what the job sends waits there until its agent connects). */
struct shost {
	struct slurm	*s;
	struct link	*link;
	int		 fd;		/* the agent's connection, once it came */
	int		 connected;
	int		 doomed;	/* its agent will not connect: fail it */
};

/* The one srun and listener every host of the job shares. */
struct slurm {
	struct event_base *base;
	struct job_host	**hosts;
	size_t		 nhosts;
	size_t		 refs;		/* shosts alive */
	uint8_t		 secret[AC_SECRET_LEN];
	int		 lfd;
	struct event	*lev;
	char		 addr[300];	/* what agents dial */
	struct sconn	*conns;		/* handshaking, newest first */
	size_t		 nconns;
	int		 crowded;	/* said so; drops are -vv from then */
	size_t		 nconnected;
	size_t		 nhello;	/* agents that said HELLO */
	pid_t		 srun;		/* 0 once reaped */
	int		 ofd;		/* srun's stdout and stderr */
	struct event	*oev;
	struct evbuffer	*obuf;
	char		 last[512];	/* the srun line that says most */
	int		 last_worth;	/* srun_line_worth(last) */
	int		 quiet;		/* we ended srun: farewells are noise */
	struct event	*timer;		/* --start-timeout */
	int		 failing;	/* failing the doomed hosts */
	struct event	*task_timer;	/* srun said agents ended: fail soon */
};

/* srunlines.c: reads what srun wrote, logging its lines (1 at EOF). */
int	srun_read(struct slurm *s);
void	srun_read_cb(evutil_socket_t fd, short what, void *arg);

#endif
