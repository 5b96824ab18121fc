/*
 * fwname.c -- the frameworks' names, as --framework takes them
 * (fwname.h). What each one exports is framework.c's.
 */
#include <string.h>

#include "common/editdist.h"
#include "common/err.h"
#include "launcher/cli/fwname.h"

struct fwname {
	const char	*name;
	unsigned	 bit;
};

static const struct fwname fwnames[] = {
	{ "pytorch",	FW_PYTORCH },
	{ "tensorflow",	FW_TENSORFLOW },
	{ "mxnet",	FW_MXNET },
	{ "horovod",	FW_HOROVOD },
	{ "mpi",	FW_MPI },
	{ "none",	FW_NONE },
};
#define NFWNAMES	(sizeof(fwnames) / sizeof(fwnames[0]))

/* Every name, for the message that lists them. */
static const char fw_names[] = "pytorch tensorflow mxnet horovod mpi none";

/* The framework named by s[0..n), or NULL; *near gets the closest name. */
static const struct fwname *
fw_find(const char *s, size_t n, const char **near)
{
	size_t	i, d, best = 3;

	*near = NULL;
	for (i = 0; i < NFWNAMES; i++) {
		if (strlen(fwnames[i].name) == n &&
		    strncmp(s, fwnames[i].name, n) == 0)
			return &fwnames[i];
		if ((d = dt_edit_distance(s, n, fwnames[i].name,
		    strlen(fwnames[i].name))) < best) {
			best = d;
			*near = fwnames[i].name;
		}
	}
	return NULL;
}

int
fw_parse(const char *list, unsigned *mask, struct dt_err *e)
{
	const struct fwname *f;
	const char	*s = list, *near;
	size_t		 n;

	do {
		n = strcspn(s, ",");
		if ((f = fw_find(s, n, &near)) == NULL) {
			if (near != NULL)
				return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL,
				    "--framework \"%.*s\": unknown (did you "
				    "mean %s?)", (int)n, s, near);
			return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL,
			    "--framework \"%.*s\": unknown (known: %s)",
			    (int)n, s, fw_names);
		}
		*mask |= f->bit;
		s += n;
	} while (*s++ == ',');
	return 0;
}

int
fw_check(unsigned mask, struct dt_err *e)
{
	if ((mask & FW_NONE) && (mask & FW_ALL))
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "--framework none "
		    "exports only DTRUN_*: it cannot be combined with another "
		    "framework");
	return 0;
}
