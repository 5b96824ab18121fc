/* sys.h -- small process-wide settings the binaries share. */
#ifndef DT_SYS_H
#define DT_SYS_H

/* Raises the soft open-file limit to the hard one: many ranks mean many pipes. */
void	dt_raise_nofile(void);

#endif
