/*
 * resolve.h -- getaddrinfo() without stalling the event loop.
 *
 * A name lookup can take seconds (a slow DNS server, an LDAP hosts map);
 * done inline it would hold up every other host's connection and the
 * job's timers. Each lookup runs in its own short-lived thread and its
 * result comes back through the loop. Numeric addresses skip the thread.
 */
#ifndef DT_RESOLVE_H
#define DT_RESOLVE_H

#include <netdb.h>

struct event_base;
struct resolve;

/*
 * Called in the loop with getaddrinfo()'s return code and, when it is 0,
 * the list, which the callee then owns (freeaddrinfo).
 */
typedef void resolve_cb(int gai_rc, struct addrinfo *ai, void *arg);

/* Looks up host:port for SOCK_STREAM; cb is always called later, never now. */
struct resolve	*resolve_start(struct event_base *, const char *host,
		    const char *port, resolve_cb *, void *arg);
/* cb will not be called; what the lookup finds is freed. */
void		 resolve_cancel(struct resolve *);

#endif
