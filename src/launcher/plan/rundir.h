/*
 * rundir.h -- where the job runs on each host: the directory --sync-dst-dir
 * copies to (the sync, the check and the job's message agree on it here).
 */
#ifndef DT_RUNDIR_H
#define DT_RUNDIR_H

#include <stddef.h>

struct opts;
struct plan_host;

/*
 * The directory the job runs in on host ph (DIR with %h expanded; "~/"
 * dropped on remote hosts, whose agents start in the home directory;
 * expanded with $HOME locally) into buf. Returns buf.
 */
const char *run_dir(const struct opts *, const struct plan_host *ph,
	    int local, char *buf, size_t len);

#endif
