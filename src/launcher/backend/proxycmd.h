/*
 * proxycmd.h -- a ProxyCommand: one of the two ways to reach an ssh server
 * other than a TCP socket (the other is a jump host's tunnel, tunnel.h).
 * libssh2 gets one end of a socket pair; the command runs with the other
 * end as its stdin and stdout.
 */
#ifndef DT_PROXYCMD_H
#define DT_PROXYCMD_H

#include <stddef.h>
#include <sys/types.h>

struct dt_err;
struct event_base;

struct proxy_cmd;			/* opaque */

/*
 * Runs cmd with /bin/sh -c "exec CMD" in its own process group; its stdin
 * and stdout are a socket, whose other end (non-blocking) is put in *fd;
 * each line of its stderr is logged as "NAME: ProxyCommand: LINE". Returns
 * 0, or DT_ERR_SYS with e saying why.
 */
int	 proxy_cmd_start(struct event_base *, const char *name,
	    const char *cmd, int *fd, struct proxy_cmd **, struct dt_err *e);
/* Takes the exit status of pid if it is p's; returns 1 if it was. */
int	 proxy_cmd_reaped(struct proxy_cmd *p, pid_t pid, int status);
/*
 * If the command closed its end of fd, waits a moment for its exit (seen
 * just after the close), says how it ended into buf ("exited with status
 * 3") and returns 1; else 0.
 */
int	 proxy_cmd_ended(struct proxy_cmd *p, int fd, char *buf, size_t len);
/* Kills the command's process group if it still runs, reaps it, frees p. */
void	 proxy_cmd_free(struct proxy_cmd *p);

#endif
