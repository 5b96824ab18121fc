/*
 * rdzvrelay.h -- the ranks' connections to dtrun through their agent,
 * each a channel whose bytes go to dtrun in frames and come back the same
 * way (doc/agent-protocol.md, "The rendezvous through the agent" and
 * "The store through the agent"). Two kinds:
 *
 *   RELAY_RDZV	 dtrun's rendezvous: a Unix socket in the abstract
 *		 namespace (DTRUN_RDZV_ADDR=unix:@NAME), peers checked by
 *		 SO_PEERCRED. A connection that sends nothing is closed
 *		 after 10 s or, the oldest first, past an eighth of the
 *		 open-files limit (16 to 256).
 *   RELAY_STORE PyTorch's TCPStore: TCP on 127.0.0.1 (torch dials
 *		 MASTER_ADDR:MASTER_PORT, TCP only), peers checked by their
 *		 socket's owner. Connections that send nothing are kept:
 *		 torch 1.13 opens one per rank for watched keys and never
 *		 writes on it, and dies if it closes. Past a quarter of the
 *		 open-files limit (64 to 8,192) the oldest is closed.
 *
 * Channels are numbered from 1 in the order their first bytes come;
 * connections that send nothing are never numbered.
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

enum relay_kind { RELAY_RDZV, RELAY_STORE };

/*
 * Listens: RELAY_RDZV on a fresh abstract socket named after job_id,
 * addr getting "unix:@NAME"; RELAY_STORE on 127.0.0.1, a port of the
 * kernel's choice, addr getting "127.0.0.1:PORT". Returns the relay, or
 * NULL with e filled.
 */
struct rdzvrelay *rdzvrelay_new(struct event_base *, enum relay_kind,
		    const char *job_id, const struct rdzvrelay_cbs *,
		    char *addr, size_t addrlen, struct dt_err *e);
/* Bytes dtrun sent for channel chan (n == 0: the server dropped it). */
void		 rdzvrelay_input(struct rdzvrelay *, uint32_t chan,
		    const void *p, size_t n);
/* Closes the socket and every channel, telling nobody. NULL is fine. */
void		 rdzvrelay_free(struct rdzvrelay *);

#endif
