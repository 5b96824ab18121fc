/*
 * ynode.h -- a small YAML tree (maps, sequences, scalars, each with its
 * file, line and column) built from libyaml's events, and Determined's
 * template merge over it. Used by config.c; not part of the interface.
 */
#ifndef DT_HF_YNODE_H
#define DT_HF_YNODE_H

#include <stddef.h>

#include "common/err.h"

#define YN_SCALAR	0
#define YN_SEQ		1
#define YN_MAP		2

#define YN_DEPTH_MAX	64	/* nesting */
#define YN_NODES_MAX	100000	/* nodes in one file, aliases expanded */
#define YN_KEYS_MAX	10000	/* keys in one map (checks are quadratic) */

struct ynode {
	int		 type;		/* YN_* */
	const char	*file;		/* where it was written */
	int		 line;
	int		 col;
	char		*str;		/* a scalar's text */
	int		 plain;		/* unquoted: may be null, a number */
	char		*key;		/* this entry's key, in a map */
	int		 kline;
	int		 kcol;
	struct ynode	*child;		/* entries of a map or sequence */
	struct ynode	*last;
	struct ynode	*next;
};

/*
 * Parses the one YAML document in buf[0..len) into *root (NULL for an
 * empty file); file must outlive the tree. Map keys must be scalars and
 * appear once. Returns 0 or DT_ERR_PARSE / DT_ERR_RANGE / DT_ERR_NOMEM
 * with *e filled ("engine.yaml:3:7: YAML: ...").
 */
int		 ynode_parse(const char *file, const char *buf, size_t len,
		     struct ynode **root, struct dt_err *e);

/* Frees n and everything under it (n may be NULL). */
void		 ynode_free(struct ynode *n);

/*
 * Merges template t under config c as Determined's schemas.Merge(config,
 * template) does and returns the result, consuming both: a null (or
 * absent) value in c takes t's; otherwise scalars, sequences (even empty
 * ones) and mismatched kinds from c win whole; maps merge key by key.
 */
struct ynode	*ynode_merge(struct ynode *c, struct ynode *t);

/* A null: an unquoted "", "~" or "null". */
int		 ynode_isnull(const struct ynode *n);

/* "a map", "a list" or "a string": what n is, for messages. */
const char	*ynode_kind(const struct ynode *n);

#endif
