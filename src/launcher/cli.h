/* cli.h -- dtrun's command line. */
#ifndef DT_CLI_H
#define DT_CLI_H

#include <stddef.h>
#include <stdint.h>

struct dt_err;

enum launcher_kind { LAUNCH_AUTO = 0, LAUNCH_LOCAL, LAUNCH_SSH, LAUNCH_SLURM };

struct opts {
	int		 np;		/* -n; 0 = not given */
	int		 nproc_per_node;	/* 0 = not given */
	enum launcher_kind launcher;
	const char	*prefix;	/* checked */
	const char	*output_dir;
	int		 timestamp;
	char		**exports;	/* "NAME=VALUE", resolved from -x */
	size_t		 nexports;
	double		 kill_grace;	/* seconds */
	double		 timeout;	/* seconds; 0 = none */
	int		 dry_run;
	int		 verbose;
	int		 quiet;
	unsigned	 frameworks;	/* FW_* of framework.h; FW_DEFAULT if not given */
	const char	*iface;		/* --iface; NULL = choose */
	uint64_t	 seed;		/* --seed */
	int		 seeded;
	char		**cmd;		/* COMMAND ARGS..., NULL-terminated (points into argv) */
	int		 ncmd;
};

#define CLI_RUN		0
#define CLI_HELP	1	/* print usage, exit 0 */
#define CLI_VERSION	2	/* print version, exit 0 */

/*
 * Parses argv into o (defaults first). Returns CLI_RUN, CLI_HELP or
 * CLI_VERSION, or a negative DT_ERR_* with e's message naming the problem
 * and the fix. Never prints or exits. o->exports is malloc'd: cli_free.
 */
int	cli_parse(int argc, char **argv, struct opts *o, struct dt_err *e);
void	cli_free(struct opts *);

/* The --help text. */
extern const char cli_usage[];

#endif
