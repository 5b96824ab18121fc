/*
 * environ.h -- NAME=VALUE environments, and the one rule of which value a
 * name gets. An environment is built in layers, lowest first: a layer laid
 * over it (dt_environ_merge) wins over what is there, and within a layer
 * the last NAME= wins; defaults (dt_environ_defaults) fill only the names
 * nothing else set. So a rank's environment is, lowest first: the
 * agent's own, a --setup's variables, the interface the agent chose,
 * JOB's (dtrun's, then -x), its error file's, RANK's; and JOB's defaults
 * (torchrun's OMP_NUM_THREADS=1) where none of those set the name.
 * No I/O; never exits or prints.
 */
#ifndef DT_ENVIRON_H
#define DT_ENVIRON_H

#include <stddef.h>

/* A vector's length for "up to its NULL" (environ, an execve envp). */
#define DT_ENV_ALL	((size_t)-1)

/* An environment: each name once, in the order names were first set. */
struct dt_environ {
	char	**v;	/* malloc'd "NAME=VALUE"s, NULL-terminated; NULL when
			   nothing was ever set */
	size_t	  n;
	size_t	  cap;
};

/* Length of the name part of "NAME=VALUE" (all of kv without a '='). */
size_t		 dt_env_namelen(const char *kv);
/*
 * The value name has in v[0..n) (n may be DT_ENV_ALL): the last
 * "name=..." there wins, as laid over. NULL if none.
 */
const char	*dt_env_find(char *const *v, size_t n, const char *name);
/*
 * Removes from v[0..n) (malloc'd strings, freed here) every variable whose
 * name over[0..nover) sets: a part laid over over that must not win over
 * it. What follows is moved down, v[n] (its NULL) included. Returns the
 * new n.
 */
size_t		 dt_env_drop(char **v, size_t n, char *const *over,
		    size_t nover);

/* An empty environment (allocates nothing). */
void		 dt_environ_init(struct dt_environ *);
/* Frees every string and the vector; e is empty again. */
void		 dt_environ_free(struct dt_environ *);
/*
 * Sets the variable of kv ("NAME=VALUE", copied): in place if e has the
 * name, else at the end. Returns 0, DT_ERR_INVAL (no '='), or
 * DT_ERR_NOMEM (e unchanged).
 */
int		 dt_environ_put(struct dt_environ *, const char *kv);
/* Sets name to value as dt_environ_put does. Returns 0 or DT_ERR_NOMEM. */
int		 dt_environ_set(struct dt_environ *, const char *name,
		    const char *value);
/* Removes name, if e has it. */
void		 dt_environ_unset(struct dt_environ *, const char *name);
/* The value of name in e, or NULL. */
const char	*dt_environ_get(const struct dt_environ *, const char *name);
/*
 * Lays v[0..n) (n may be DT_ENV_ALL) over e: each of its variables wins
 * over e's, the last of a name in v winning; strings with no '=' are
 * skipped. Returns 0 or DT_ERR_NOMEM (e then holds part of v).
 */
int		 dt_environ_merge(struct dt_environ *, char *const *v,
		    size_t n);
/*
 * Defaults: sets the variables of v[0..n) whose names e does not have yet
 * (of a name given twice in v, the last). Returns 0 or DT_ERR_NOMEM.
 */
int		 dt_environ_defaults(struct dt_environ *, char *const *v,
		    size_t n);
/* Makes dst (empty) a copy of src. Returns 0 or DT_ERR_NOMEM (dst empty). */
int		 dt_environ_copy(struct dt_environ *dst,
		    const struct dt_environ *src);
/*
 * Hands e's vector over (NULL-terminated, free with dt_strv_free), with
 * its length in *n (n may be NULL); e is empty after. NULL when out of
 * memory (e unchanged).
 */
char		**dt_environ_take(struct dt_environ *, size_t *n);
/* e as an envp for execve (never NULL but when out of memory); e keeps it. */
char		**dt_environ_envp(struct dt_environ *);

#endif
