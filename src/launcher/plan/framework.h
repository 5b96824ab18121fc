/*
 * framework.h -- the environment conventions of training stacks
 * (--framework): PyTorch's env://, TensorFlow's TF_CONFIG, MXNet's DMLC_*,
 * Horovod's HOROVOD_*, and the MPI-style OMPI_COMM_WORLD_* / PMI_*.
 * Each framework appends its variables to a rank's host part or rank part;
 * rankenv.c decides the order and adds dtrun's own DTRUN_*.
 */
#ifndef DT_FRAMEWORK_H
#define DT_FRAMEWORK_H

struct strv;

#include "launcher/plan/envctx.h"


/* Appends the variables the frameworks of c share on host h. */
void	fw_host(const struct env_ctx *c, int h, struct strv *);
/* Appends the variables the frameworks of c give rank r. */
void	fw_rank(const struct env_ctx *c, int r, struct strv *);

/*
 * TF_CONFIG of rank r: {"cluster":{"worker":["ADDR:PORT",...]},
 * "task":{"type":"worker","index":R}}, one worker per rank, as JSON
 * without spaces. Returns a malloc'd string.
 */
char	*fw_tf_config(const struct env_ctx *c, int r);

#endif
