/* plan.c -- rank placement and its --dry-run listing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "err.h"
#include "plan.h"
#include "xmalloc.h"

/* Sets plan to n ranks on the hosts already in it, host-major. */
static void
plan_fill(struct plan *p)
{
	size_t	h;
	int	r = 0, l;

	p->nranks = 0;
	for (h = 0; h < p->nhosts; h++)
		p->nranks += p->hosts[h].nranks;
	p->ranks = xcalloc(p->nranks, sizeof(*p->ranks));
	for (h = 0; h < p->nhosts; h++) {
		p->hosts[h].first_rank = r;
		for (l = 0; l < p->hosts[h].nranks; l++, r++) {
			p->ranks[r].host = h;
			p->ranks[r].local_rank = l;
		}
	}
}

int
plan_local(struct plan *p, const struct opts *o, struct dt_err *e)
{
	memset(p, 0, sizeof(*p));
	p->local = 1;
	p->nhosts = 1;
	p->hosts = xcalloc(1, sizeof(*p->hosts));
	p->hosts[0].name = xstrdup("localhost");
	if (o->np > 0 && o->nproc_per_node > 0 && o->np != o->nproc_per_node) {
		plan_free(p);
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "-n %d and "
		    "--nproc-per-node %d disagree on one local host (give "
		    "one of them)", o->np, o->nproc_per_node);
	}
	p->hosts[0].nranks = o->np ? o->np : o->nproc_per_node ?
	    o->nproc_per_node : 1;
	plan_fill(p);
	return 0;
}

/* Prints s quoted for a POSIX shell when it needs quoting. */
static void
print_word(FILE *f, const char *s)
{
	const char	*c;

	if (*s != '\0' && strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") == strlen(s)) {
		fputs(s, f);
		return;
	}
	fputc('\'', f);
	for (c = s; *c != '\0'; c++) {
		if (*c == '\'')
			fputs("'\\''", f);
		else
			fputc(*c, f);
	}
	fputc('\'', f);
}

void
plan_print(const struct plan *p, const struct opts *o, const char *job_id)
{
	size_t	r;
	int	i;

	printf("# dtrun plan: job %s, %zu rank%s on %zu host%s\n", job_id,
	    p->nranks, p->nranks == 1 ? "" : "s", p->nhosts,
	    p->nhosts == 1 ? "" : "s");
	printf("# RANK HOST LOCAL_RANK COMMAND\n");
	for (r = 0; r < p->nranks; r++) {
		printf("%zu %s %d", r, p->hosts[p->ranks[r].host].name,
		    p->ranks[r].local_rank);
		for (i = 0; i < o->ncmd; i++) {
			putchar(' ');
			print_word(stdout, o->cmd[i]);
		}
		putchar('\n');
	}
	fflush(stdout);
}

void
plan_free(struct plan *p)
{
	size_t	h;

	for (h = 0; h < p->nhosts; h++) {
		free(p->hosts[h].name);
		free(p->hosts[h].user);
	}
	free(p->hosts);
	free(p->ranks);
	memset(p, 0, sizeof(*p));
}
