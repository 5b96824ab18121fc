/* t_hf.h -- helpers the hostfile library's tests share (in t_hf_hostfile.c). */
#ifndef DT_T_HF_H
#define DT_T_HF_H

#include <stddef.h>

/* Reads t_datadir/hostfile/rel into a malloc'ed, NUL-ended string, or NULL. */
char	*t_hf_read(const char *rel, size_t *lenp);

/*
 * Calls fn("dir/NAME") for every file in t_datadir/hostfile/dir whose name
 * ends in suffix; returns how many, or -1 if dir cannot be read.
 */
int	 t_hf_each(const char *dir, const char *suffix,
	     void (*fn)(const char *));

#endif
