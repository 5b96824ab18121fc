/*
 * rdzvrelay.h -- the ranks' rendezvous through their agent: a Unix socket
 * the ranks dial (DTRUN_RDZV_ADDR=unix:@NAME), each connection a channel
 * whose bytes go to dtrun in RDZV frames and come back the same way
 * (doc/agent-protocol.md, "The rendezvous through the agent"). Channels
 * are numbered from 1 in the order their first bytes come; connections
 * that send nothing are never numbered, and are closed after 10 s or,
 * the oldest first, past an eighth of the open-files limit (16 to 256).
 */
#ifndef DT_RDZVRELAY_H
#define DT_RDZVRELAY_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct dt_err;
struct rdzvrelay;

struct rdzvrelay_cbs {
	/* Bytes a rank sent on channel chan; n == 0: it closed. */
	void	(*send)(void *arg, uint32_t chan, const void *p, size_t n);
	/*
	 * The relay cannot take the ranks' connections any more (out of
	 * descriptors): msg says so, with the limit and the fix. Once.
	 */
	void	(*failed)(void *arg, const char *msg);
	/* Something worth a warning (connections closed unheard): msg. */
	void	(*note)(void *arg, const char *msg);
	void	*arg;
};

/*
 * Listens on a fresh abstract socket named after job_id; addr gets
 * "unix:@NAME" for the ranks. Returns the relay, or NULL with e filled.
 */
struct rdzvrelay *rdzvrelay_new(struct event_base *, const char *job_id,
		    const struct rdzvrelay_cbs *, char *addr, size_t addrlen,
		    struct dt_err *e);
/* Bytes dtrun sent for channel chan (n == 0: the server dropped it). */
void		 rdzvrelay_input(struct rdzvrelay *, uint32_t chan,
		    const void *p, size_t n);
/* Closes the socket and every channel, telling nobody. NULL is fine. */
void		 rdzvrelay_free(struct rdzvrelay *);

#endif
