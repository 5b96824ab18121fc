/*
 * port.h -- free TCP ports for the job's listeners (MASTER_PORT, the
 * TF_CONFIG workers, MXNet's scheduler).
 */
#ifndef DT_PORT_H
#define DT_PORT_H

#include <stddef.h>

/*
 * Fills ports[0..n) with distinct TCP ports nobody listens on here, by
 * binding n sockets at once. A listener may still take one before the
 * rank does; that rank then fails and the job stops. If sockets (or
 * memory) run out, the rest are PORT_FALLBACK + i. Never fails.
 */
#define PORT_FALLBACK	29500	/* PyTorch's default MASTER_PORT */
void	port_pick(int *ports, size_t n);

#endif
