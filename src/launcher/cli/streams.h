/*
 * streams.h -- which ranks' streams reach the terminal: torchrun's --tee
 * and --redirects (a Std value, 0 none, 1 stdout, 2 stderr, 3 both, for
 * every local rank or per local rank "0:3,1:2") and --local-ranks-filter
 * (a list of ranks). dtrun writes every stream to --output-dir's files
 * anyway, so these only take streams off the terminal.
 */
#ifndef DT_STREAMS_H
#define DT_STREAMS_H

struct dt_err;

#define STD_MAP_MAX	64

/* A Std value for all local ranks, or one per listed local rank. */
struct std_map {
	int	given;
	int	all;			/* for ranks the map does not list */
	int	n;
	int	lr[STD_MAP_MAX];	/* local ranks */
	int	v[STD_MAP_MAX];		/* their Std value */
};

/* Parses "3" or "0:3,1:2" for option name into m. 0 or DT_ERR_INVAL. */
int	std_map_parse(const char *name, const char *arg, struct std_map *m,
	    struct dt_err *e);

/* Checks a list of ranks "0,2,4-7" for option name. 0 or DT_ERR_INVAL. */
int	rank_list_check(const char *name, const char *arg, struct dt_err *e);

/*
 * The streams of a rank shown on the terminal: bit 1 stdout, bit 2
 * stderr. A stream redirected and not teed stays off the terminal, as
 * torchrun's; a rank outside the filter shows none.
 */
int	streams_term(const struct std_map *redirects, const struct std_map *tee,
	    const char *filter, int rank, int local_rank);

#endif
