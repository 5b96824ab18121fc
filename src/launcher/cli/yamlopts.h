/*
 * yamlopts.h -- engine.yaml's values for the options the command line
 * left unset: the command line wins, the file fills the gaps (its
 * environment and sync excludes come first, so -x and --sync-exclude
 * add to them).
 */
#ifndef DT_YAMLOPTS_H
#define DT_YAMLOPTS_H

struct dt_err;
struct hf_config;
struct opts;

/*
 * Fills o from c where the command line left it unset. Returns 0, or a
 * DT_ERR_* with e pointing at the file, line and column of a bad value.
 */
int	yamlopts_apply(struct opts *o, struct hf_config *c, struct dt_err *e);

#endif
