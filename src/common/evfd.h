/*
 * evfd.h -- an event and the descriptor it watches, closed together: the
 * agent's pipes and probes (and whoever else holds such a pair) do it so.
 */
#ifndef DT_EVFD_H
#define DT_EVFD_H

struct event;

/*
 * Frees *ev (when not NULL) and sets it to NULL, then closes *fd (when
 * >= 0) and sets it to -1, in that order: the event stops watching
 * before the descriptor's number can be reused. Safe to call again.
 */
void	dt_event_close(struct event **ev, int *fd);

#endif
