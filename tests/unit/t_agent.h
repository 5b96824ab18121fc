/* t_agent.h -- agent protocol helpers shared by the unit tests (t_agentproto.c). */
#ifndef T_AGENT_H
#define T_AGENT_H

#include <stddef.h>
#include <stdint.h>

#include "common/wire.h"

#define BIG_GRACE_MS	UINT64_C(4294968000)	/* --kill-grace 4294968, over 2^32 ms */

/* Appends a JOB for one rank whose count field then says nranks. */
void	  t_job_claiming(struct dt_wbuf *, uint32_t nranks);
/* n strings: "0", "1"... or, with env, "Vi=" and len bytes; free with dt_strv_free. */
char	**t_strs(size_t n, size_t len, int env);

#endif
