/*
 * killjob.h -- stop recorded jobs on this host (see record.h): what
 * dtrun-kill does locally, and what "dtrun-agent --kill" does on each host
 * when dtrun-kill -H reaches other hosts through dtrun. This is dtrun-kill's
 * per-host side; its command line is src/kill/main.c.
 */
#ifndef DT_KILLJOB_H
#define DT_KILLJOB_H

struct kill_opts {
	int		 all;		/* every recorded job of this user */
	double		 wait_s;	/* SIGTERM, then SIGKILL after this */
	int		 quiet;
	int		 stacks;	/* --stacks: SIGQUIT the agents, stop nothing */
	char		**ids;		/* job ids (DTRUN_JOB_ID) */
	int		 nids;
	const char	*label;		/* "localhost: " in front of lines, or NULL */
	int		 launchers_only; /* only dtrun's own records (before -H) */
};

/* Defaults: wait 10 s, no ids, no label. */
void	kill_opts_init(struct kill_opts *);

/* -w SECS into ko->wait_s (0 to 3600); 0, or -1 after saying why. */
int	kill_opt_wait(struct kill_opts *, const char *arg);

/*
 * Stops the named jobs (or all, but never the job this process belongs
 * to, $DTRUN_JOB_ID): SIGTERM to each agent, which stops its ranks; after
 * wait_s, SIGKILL to what is left. A pid counts only while its start time
 * matches the record. Prints a line per job (unless quiet) on stdout.
 * Returns 0 when nothing of those jobs is left, 1 otherwise. With
 * ko->stacks, only SIGQUIT to each agent: it asks its dtrun for every
 * rank's stack (printed on dtrun's stderr); returns 0 when every job named
 * had an agent here to ask, 1 otherwise.
 */
int	kill_jobs(const struct kill_opts *);

/*
 * "dtrun-agent --kill [--all] [--stacks] [-w SECS] [-q] JOBID...": parses argv
 * (argv[0] is "--kill") into kill_jobs. Returns the exit status.
 */
int	kill_main(int argc, char **argv);

#endif
