/*
 * topcli.h -- dtrun top: a running job's ranks from another terminal,
 * read through its socket (topsrv.h), refreshed every second until the
 * job ends.
 */
#ifndef DT_TOPCLI_H
#define DT_TOPCLI_H

/* dtrun top [--json] [--once] [JOB]: argv[0] is "top". dtrun's exit status. */
int	topcli_main(int argc, char **argv);

#endif
