/*
 * sshauth.h -- who the server is and who we are, for one ssh connection
 * of the ssh backend (backend_ssh.c), with libssh2 in non-blocking mode:
 * the server's host key checked against known_hosts
 * (StrictHostKeyChecking), then public-key user authentication, the
 * ssh-agent's keys first, then -i/IdentityFile keys, then ssh's default
 * ones, as OpenSSH tries them.
 */
#ifndef DT_SSHAUTH_H
#define DT_SSHAUTH_H

#include <libssh2.h>

struct dt_err;
struct ssh_target;

struct sshauth;				/* opaque: the keys tried so far */

/*
 * Checks the host key of session s (after its handshake) against
 * t->known_hosts: a match goes on; an unknown key goes on with
 * StrictHostKeyChecking=no, is added to the file with accept-new, and is
 * refused with yes. Returns 0, or DT_ERR_AUTH (a mismatch, an unknown
 * key), DT_ERR_IO (cannot add it) or DT_ERR_NOMEM with e saying why and
 * the fix.
 */
int		 sshauth_hostkey(LIBSSH2_SESSION *s, const struct ssh_target *t,
		     struct dt_err *e);

/* Authentication as t->user, not started; t must outlive it. */
struct sshauth	*sshauth_new(const struct ssh_target *t);
/*
 * Goes on authenticating on session s. Returns 1 when in, 0 when libssh2
 * said EAGAIN (wait on the socket, in the directions
 * libssh2_session_block_directions names, and call again), or DT_ERR_AUTH
 * with e saying what was tried.
 */
int		 sshauth_step(struct sshauth *, LIBSSH2_SESSION *s,
		     struct dt_err *e);
/* Frees a (NULL is fine), and its ssh-agent connection, before s is freed. */
void		 sshauth_free(struct sshauth *a);

#endif
