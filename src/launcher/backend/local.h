/* local.h -- the local launcher's agent, started before the job asks (backend_local.c). */
#ifndef DT_LOCAL_H
#define DT_LOCAL_H

/* Starts this machine's agent now; the job's first local host takes it. */
void	local_prespawn(void);
/* Stops an agent local_prespawn started that no job took. */
void	local_prespawn_discard(void);

#endif
