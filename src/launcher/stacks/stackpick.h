/*
 * stackpick.h -- which process of a rank's stack text its signature is
 * of, when the agent sent several (the rank and its children).
 */
#ifndef DT_STACKPICK_H
#define DT_STACKPICK_H

#include <sys/types.h>

/*
 * The signature of a rank's stack text (pid: the rank's process), of the
 * process doing the work when the text holds several (stackpick.c says
 * how it is chosen; *who is set to its pid). Returns a malloc'd string,
 * or NULL when out of memory.
 */
char	*stk_pick(const char *text, pid_t pid, pid_t *who);

#endif
