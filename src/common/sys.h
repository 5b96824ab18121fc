/* sys.h -- small process-wide settings the binaries share. */
#ifndef DT_SYS_H
#define DT_SYS_H

/* Raises the soft open-file limit to the hard one: many ranks mean many pipes. */
void	dt_raise_nofile(void);

/*
 * Keeps freed stream buffers in the heap: a fixed mmap threshold stops
 * glibc from mapping and unmapping (and faulting in afresh) the chains of
 * every output chunk. Retains at most DT_HEAP_KEEP freed bytes.
 */
void	dt_malloc_steady(void);

#endif
