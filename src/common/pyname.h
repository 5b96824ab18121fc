/*
 * pyname.h -- whether a command is a Python interpreter: the agent's
 * --check probes it, the launcher reads its script (pyscript.c).
 */
#ifndef DT_PYNAME_H
#define DT_PYNAME_H

/* True if path's last part names a Python interpreter ("python3.11"). */
int	dt_is_python(const char *path);

#endif
