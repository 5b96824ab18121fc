/* child.h -- starting dtrun's helper processes: local agents and srun. */
#ifndef DT_CHILD_H
#define DT_CHILD_H

#include <sys/types.h>

/*
 * Starts path (looked up in PATH if it has no '/') with argv and envp, in
 * its own process group, so a terminal's Ctrl-C reaches dtrun alone, which
 * decides; no signal blocked or ignored. Its stdin is in (-1: /dev/null),
 * its stdout out, its stderr err (-1: ours). Returns 0 with *pid set, or
 * an errno value.
 */
int	child_spawn(pid_t *pid, const char *path, char *const argv[],
	    char *const envp[], int in, int out, int err);

/* True if child_spawn started pid (what dtrun adopted is not). */
int	child_ours(pid_t pid);

/*
 * Reaps pid, our child, once it exits, waiting at most ms milliseconds
 * for it without polling (a pidfd). Returns 0 once reaped with *status
 * set (status may be NULL), or -1 if it still runs after ms.
 */
int	child_wait(pid_t pid, int *status, int ms);

#endif
