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
 * rank does; that rank then fails and the job stops. If sockets run out,
 * the rest are 29500 + i.
 */
void	port_pick(int *ports, size_t n);

#endif
