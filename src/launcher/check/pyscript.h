/*
 * pyscript.h -- what a Python command needs, read from its script on this
 * machine before the hosts are asked (--check): today, whether it imports
 * torch, so that a host whose interpreter has none is a problem.
 */
#ifndef DT_PYSCRIPT_H
#define DT_PYSCRIPT_H

/*
 * True if cmd[0..ncmd) runs a Python interpreter (python, python3.11) on a
 * script file, or -c code, that imports torch at the start of a line
 * ("import torch", "from torch.x import y"). A script that cannot be read
 * here, and -m MODULE, say nothing.
 */
int	pyscript_imports_torch(char *const *cmd, int ncmd);

#endif
