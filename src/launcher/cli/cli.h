/* cli.h -- dtrun's command line. */
#ifndef DT_CLI_H
#define DT_CLI_H

#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>

#include "launcher/cli/opts.h"

struct dt_err;

#define CLI_RUN		0
#define CLI_HELP	1	/* print usage, exit 0 */
#define CLI_VERSION	2	/* print version, exit 0 */
#define CLI_LIST	3	/* --list-options: print the table, exit 0 */

/*
 * Parses argv into o (defaults first). Returns CLI_RUN, CLI_HELP or
 * CLI_VERSION, or a negative DT_ERR_* with e's message naming the problem
 * and the fix. Never prints or exits. o->exports is malloc'd: cli_free.
 */
int	cli_parse(int argc, char **argv, struct opts *o, struct dt_err *e);
void	cli_free(struct opts *);

/*
 * Parses a --forward-signals list ("USR1,USR2", "SIGWINCH", "none") from
 * what (an option or a file's key) into *mask (bit 1 << N for signal N).
 * Returns 0 or DT_ERR_INVAL with e naming the word and the signals allowed.
 */
int	cli_parse_signals(const char *list, const char *what, uint64_t *mask,
	    struct dt_err *e);
/* "USR1,USR2" for mask, into buf; "none" when empty. */
const char *cli_signals_str(uint64_t mask, char *buf, size_t len);
#define CLI_FWD_DEFAULT	((1ULL << SIGUSR1) | (1ULL << SIGUSR2))

/* Writes the --help text: its option list is opt_table's (opttable.h). */
void	cli_usage(FILE *f);
/* Writes opt_table as opt_list does, for the docs tests. */
void	cli_list(FILE *f);

#endif
