/*
 * streams.c -- torchrun's --tee, --redirects and --local-ranks-filter as
 * a mask of the streams each rank shows on the terminal (streams.h).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "launcher/cli/streams.h"

/* One Std value "0".."3" at *p; returns it and moves *p past it, or -1. */
static int
std_value(const char **p)
{
	if (**p < '0' || **p > '3' || isdigit((unsigned char)(*p)[1]))
		return -1;
	return *(*p)++ - '0';
}

/* A whole number at *p (at most 7 digits), moved past; -1 if none. */
static long
list_num(const char **p)
{
	long	v = 0;
	int	n = 0;

	while (isdigit((unsigned char)**p) && n < 8) {
		v = v * 10 + (*(*p)++ - '0');
		n++;
	}
	return n == 0 || n > 7 ? -1 : v;
}

int
std_map_parse(const char *name, const char *arg, struct std_map *m,
    struct dt_err *e)
{
	const char	*p = arg;
	long		 lr;
	int		 v;

	memset(m, 0, sizeof(*m));
	m->given = 1;
	if ((v = std_value(&p)) >= 0 && *p == '\0') {
		m->all = v;
		return 0;
	}
	for (p = arg; *p != '\0'; p += *p == ',') {
		if ((lr = list_num(&p)) < 0 || *p++ != ':' ||
		    (v = std_value(&p)) < 0 || (*p != ',' && *p != '\0') ||
		    m->n == STD_MAP_MAX)
			return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "%s \"%s\": "
			    "want 0 (none), 1 (stdout), 2 (stderr) or 3 (both), "
			    "or one per local rank as torchrun takes it (e.g. "
			    "%s 3 or %s 0:3,1:2)", name, arg, name, name);
		m->lr[m->n] = (int)lr;
		m->v[m->n++] = v;
	}
	return 0;
}

/* The Std value of local rank lr (0 when not given). */
static int
std_map_get(const struct std_map *m, int lr)
{
	int	i;

	for (i = 0; i < m->n; i++)
		if (m->lr[i] == lr)
			return m->v[i];
	return m->all;
}

/* 1 if rank is in "0,2,4-7", 0 if not, -1 when the list is malformed. */
static int
rank_list_walk(const char *list, int rank)
{
	const char	*p = list;
	long		 lo, hi;
	int		 has = 0;

	do {
		if ((lo = hi = list_num(&p)) < 0)
			return -1;
		if (*p == '-' && (p++, (hi = list_num(&p)) < lo))
			return -1;
		if (*p != ',' && *p != '\0')
			return -1;
		has |= rank >= lo && rank <= hi;
	} while (*p++ == ',');
	return has;
}

int
rank_list_check(const char *name, const char *arg, struct dt_err *e)
{
	if (rank_list_walk(arg, 0) >= 0)
		return 0;
	return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "%s \"%s\": want a list "
	    "of ranks (e.g. %s 0 or %s 0,2,4-7)", name, arg, name, name);
}

/* True if rank is in the checked list (a NULL list has every rank). */
static int
rank_list_has(const char *list, int rank)
{
	return list == NULL || rank_list_walk(list, rank) == 1;
}

int
streams_term(const struct std_map *redirects, const struct std_map *tee,
    const char *filter, int rank, int local_rank)
{
	int	off;

	if (!rank_list_has(filter, rank))
		return 0;
	off = std_map_get(redirects, local_rank) &
	    ~std_map_get(tee, local_rank);
	return 3 & ~off;
}
