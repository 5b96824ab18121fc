/* evfd.c -- an event and its descriptor, closed together (see evfd.h). */
#include <unistd.h>

#include <event2/event.h>

#include "common/evfd.h"

void
dt_event_close(struct event **ev, int *fd)
{
	if (*ev != NULL) {
		event_free(*ev);
		*ev = NULL;
	}
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}
