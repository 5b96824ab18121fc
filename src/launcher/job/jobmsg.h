/*
 * jobmsg.h -- what each host's agent is told of the job: JOB (the host's
 * variables, setup, interface, working directory), a RANK per rank it
 * runs, then PREPARE; and the ports its agent chose for TF_CONFIG.
 */
#ifndef DT_JOBMSG_H
#define DT_JOBMSG_H

#include <stddef.h>
#include <stdint.h>

struct dt_wbuf;
struct env_ctx;
struct job_host;
struct opts;
struct plan;

/* What the messages are made of. */
struct jobmsg {
	const struct opts	*o;
	const struct plan	*plan;
	const struct env_ctx	*env;
	const char		*id;		/* the job id */
};

/*
 * Encodes h's JOB, RANKs and PREPARE into wb, sending each batch over
 * DT_WRITE_BATCH bytes to h's agent; the last, PREPARE's, is left in wb
 * for the caller to send (with START after it, for one host). Returns 0,
 * or dtrun's exit status once it has said which part could not be
 * encoded (too big, or out of memory); wb is then empty.
 */
int	jobmsg_put(const struct jobmsg *, struct job_host *h,
	    struct dt_wbuf *wb);

/*
 * TF_CONFIG names a port for every worker, free on its host: asks the
 * agents of hosts[] (the plan's) that are not this machine, setting
 * *pending to the replies owed before the first is asked.
 */
void	jobmsg_ask_ports(const struct jobmsg *, struct job_host **hosts,
	    struct dt_wbuf *wb, size_t *pending);

/* h's agent chose ports (n) for its workers: they go into env's TF_CONFIG. */
void	jobmsg_ports(const struct jobmsg *, struct env_ctx *env,
	    const struct job_host *h, const int *ports, uint32_t n);

#endif
