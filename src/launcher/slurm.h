/* slurm.h -- the Slurm allocation dtrun runs in (backend_slurm.c). */
#ifndef DT_SLURM_H
#define DT_SLURM_H

struct dt_err;
struct hf_hosts;

/* The id of the Slurm job we run in ($SLURM_JOB_ID), or NULL outside one. */
const char	*slurm_job_id(void);

/*
 * Appends the allocation's nodes, with SLURM_TASKS_PER_NODE's slots.
 * Returns 0, or DT_ERR_NOTFOUND outside an allocation, or a parse error;
 * *e says which and how to fix it.
 */
int		 slurm_alloc_hosts(struct hf_hosts *, struct dt_err *e);

#endif
