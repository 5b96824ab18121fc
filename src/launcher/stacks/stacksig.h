/*
 * stacksig.h -- one process's stack text, as the agent sent it (src/agent/
 * stacks.h), reduced to a signature: the main thread's frames, innermost
 * first, joined by " <- ". Python frames ("train_step (train.py:42)")
 * when there are any, else native function names.
 */
#ifndef DT_STACKSIG_H
#define DT_STACKSIG_H

#include <sys/types.h>

/*
 * The signature of one rank's stack text (pid: the main thread's id):
 * frames innermost first joined by " <- ", a collective's said as one
 * (stackcoll.h). Returns a malloc'd string
 * ("" when no frame is found), or NULL when out of memory.
 */
char	*stk_signature(const char *text, pid_t pid);

/*
 * The Python and the native signature of one process's stack text apart
 * (each "" when it has none). Returns 0, or -1 when out of memory.
 */
int	stk_frames(const char *text, pid_t pid, char **py, char **native);

#endif
