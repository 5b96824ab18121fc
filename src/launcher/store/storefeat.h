/*
 * storefeat.h -- dtrun serves PyTorch's TCPStore to the job's ranks
 * through their agents (doc/store.md), as a feature on the job's hooks.
 */
#ifndef DT_STOREFEAT_H
#define DT_STOREFEAT_H

struct job_feature;

extern const struct job_feature store_feature;

#endif
