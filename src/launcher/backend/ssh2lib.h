/*
 * ssh2lib.h -- libssh2, loaded with dlopen at the first ssh host. A local
 * run never loads it, nor the libcrypto it pulls in: both cost every run
 * about a millisecond of loading and relocation for nothing.
 *
 * Include this instead of <libssh2.h>: the macros at the end send each
 * libssh2_* call through the table, so call sites keep libssh2's names
 * (its own macros, such as libssh2_channel_read, expand into them).
 */
#ifndef DT_SSH2LIB_H
#define DT_SSH2LIB_H

#include <sys/types.h>

#include <libssh2.h>

#include "common/err.h"

/* What dlopen asks for, and the Debian package that ships it. */
#define SSH2LIB_SONAME	"libssh2.so.1"
#define SSH2LIB_PACKAGE	"libssh2-1"

/* X(name without "libssh2_", return type, parameters): every call dtrun makes. */
#define SSH2LIB_FUNCS(X)						\
	X(agent_connect, int, (LIBSSH2_AGENT *))			\
	X(agent_disconnect, int, (LIBSSH2_AGENT *))			\
	X(agent_free, void, (LIBSSH2_AGENT *))				\
	X(agent_get_identity, int, (LIBSSH2_AGENT *,			\
	    struct libssh2_agent_publickey **,				\
	    struct libssh2_agent_publickey *))				\
	X(agent_init, LIBSSH2_AGENT *, (LIBSSH2_SESSION *))		\
	X(agent_list_identities, int, (LIBSSH2_AGENT *))		\
	X(agent_userauth, int, (LIBSSH2_AGENT *, const char *,		\
	    struct libssh2_agent_publickey *))				\
	X(channel_close, int, (LIBSSH2_CHANNEL *))			\
	X(channel_direct_tcpip_ex, LIBSSH2_CHANNEL *, (LIBSSH2_SESSION *, \
	    const char *, int, const char *, int))			\
	X(channel_eof, int, (LIBSSH2_CHANNEL *))			\
	X(channel_free, int, (LIBSSH2_CHANNEL *))			\
	X(channel_get_exit_status, int, (LIBSSH2_CHANNEL *))		\
	X(channel_open_ex, LIBSSH2_CHANNEL *, (LIBSSH2_SESSION *,	\
	    const char *, unsigned int, unsigned int, unsigned int,	\
	    const char *, unsigned int))				\
	X(channel_process_startup, int, (LIBSSH2_CHANNEL *, const char *, \
	    unsigned int, const char *, unsigned int))			\
	X(channel_read_ex, ssize_t, (LIBSSH2_CHANNEL *, int, char *,	\
	    size_t))							\
	X(channel_send_eof, int, (LIBSSH2_CHANNEL *))			\
	X(channel_wait_closed, int, (LIBSSH2_CHANNEL *))		\
	X(channel_write_ex, ssize_t, (LIBSSH2_CHANNEL *, int,		\
	    const char *, size_t))					\
	X(init, int, (int))						\
	X(knownhost_addc, int, (LIBSSH2_KNOWNHOSTS *, const char *,	\
	    const char *, const char *, size_t, const char *, size_t,	\
	    int, struct libssh2_knownhost **))				\
	X(knownhost_checkp, int, (LIBSSH2_KNOWNHOSTS *, const char *,	\
	    int, const char *, size_t, int, struct libssh2_knownhost **)) \
	X(knownhost_free, void, (LIBSSH2_KNOWNHOSTS *))			\
	X(knownhost_init, LIBSSH2_KNOWNHOSTS *, (LIBSSH2_SESSION *))	\
	X(knownhost_readfile, int, (LIBSSH2_KNOWNHOSTS *, const char *,	\
	    int))							\
	X(knownhost_writefile, int, (LIBSSH2_KNOWNHOSTS *, const char *, \
	    int))							\
	X(poll_channel_read, int, (LIBSSH2_CHANNEL *, int))		\
	X(session_block_directions, int, (LIBSSH2_SESSION *))		\
	X(session_disconnect_ex, int, (LIBSSH2_SESSION *, int,		\
	    const char *, const char *))				\
	X(session_free, int, (LIBSSH2_SESSION *))			\
	X(session_handshake, int, (LIBSSH2_SESSION *, libssh2_socket_t)) \
	X(session_hostkey, const char *, (LIBSSH2_SESSION *, size_t *,	\
	    int *))							\
	X(session_init_ex, LIBSSH2_SESSION *, (LIBSSH2_ALLOC_FUNC((*)),	\
	    LIBSSH2_FREE_FUNC((*)), LIBSSH2_REALLOC_FUNC((*)), void *))	\
	X(session_last_errno, int, (LIBSSH2_SESSION *))			\
	X(session_last_error, int, (LIBSSH2_SESSION *, char **, int *,	\
	    int))							\
	X(session_set_blocking, void, (LIBSSH2_SESSION *, int))		\
	X(userauth_authenticated, int, (LIBSSH2_SESSION *))		\
	X(userauth_list, char *, (LIBSSH2_SESSION *, const char *,	\
	    unsigned int))						\
	X(userauth_publickey_fromfile_ex, int, (LIBSSH2_SESSION *,	\
	    const char *, unsigned int, const char *, const char *,	\
	    const char *))

/* The table: one pointer per function, filled by ssh2lib_load. */
struct ssh2lib {
#define SSH2LIB_PTR(name, ret, args)	ret (*name) args;
	SSH2LIB_FUNCS(SSH2LIB_PTR)
#undef SSH2LIB_PTR
};
extern struct ssh2lib ssh2lib;

/*
 * Loads libssh2 and finds every function of the table; does nothing once
 * done. Returns 0, or DT_ERR_NOTFOUND with *e naming the library, what
 * dlopen said and the package to install.
 */
int	ssh2lib_load(struct dt_err *e);

/* The last libssh2 error of s, as text ("unknown error" if none; "?" for a NULL s). */
const char *ssh2lib_errmsg(LIBSSH2_SESSION *s);

/* The call sites' libssh2_* names, through the table. */
#define libssh2_agent_connect		(*ssh2lib.agent_connect)
#define libssh2_agent_disconnect	(*ssh2lib.agent_disconnect)
#define libssh2_agent_free		(*ssh2lib.agent_free)
#define libssh2_agent_get_identity	(*ssh2lib.agent_get_identity)
#define libssh2_agent_init		(*ssh2lib.agent_init)
#define libssh2_agent_list_identities	(*ssh2lib.agent_list_identities)
#define libssh2_agent_userauth		(*ssh2lib.agent_userauth)
#define libssh2_channel_close		(*ssh2lib.channel_close)
#define libssh2_channel_direct_tcpip_ex	(*ssh2lib.channel_direct_tcpip_ex)
#define libssh2_channel_eof		(*ssh2lib.channel_eof)
#define libssh2_channel_free		(*ssh2lib.channel_free)
#define libssh2_channel_get_exit_status	(*ssh2lib.channel_get_exit_status)
#define libssh2_channel_open_ex		(*ssh2lib.channel_open_ex)
#define libssh2_channel_process_startup	(*ssh2lib.channel_process_startup)
#define libssh2_channel_read_ex		(*ssh2lib.channel_read_ex)
#define libssh2_channel_send_eof	(*ssh2lib.channel_send_eof)
#define libssh2_channel_wait_closed	(*ssh2lib.channel_wait_closed)
#define libssh2_channel_write_ex	(*ssh2lib.channel_write_ex)
#define libssh2_init			(*ssh2lib.init)
#define libssh2_knownhost_addc		(*ssh2lib.knownhost_addc)
#define libssh2_knownhost_checkp	(*ssh2lib.knownhost_checkp)
#define libssh2_knownhost_free		(*ssh2lib.knownhost_free)
#define libssh2_knownhost_init		(*ssh2lib.knownhost_init)
#define libssh2_knownhost_readfile	(*ssh2lib.knownhost_readfile)
#define libssh2_knownhost_writefile	(*ssh2lib.knownhost_writefile)
#define libssh2_poll_channel_read	(*ssh2lib.poll_channel_read)
#define libssh2_session_block_directions (*ssh2lib.session_block_directions)
#define libssh2_session_disconnect_ex	(*ssh2lib.session_disconnect_ex)
#define libssh2_session_free		(*ssh2lib.session_free)
#define libssh2_session_handshake	(*ssh2lib.session_handshake)
#define libssh2_session_hostkey		(*ssh2lib.session_hostkey)
#define libssh2_session_init_ex		(*ssh2lib.session_init_ex)
#define libssh2_session_last_errno	(*ssh2lib.session_last_errno)
#define libssh2_session_last_error	(*ssh2lib.session_last_error)
#define libssh2_session_set_blocking	(*ssh2lib.session_set_blocking)
#define libssh2_userauth_authenticated	(*ssh2lib.userauth_authenticated)
#define libssh2_userauth_list		(*ssh2lib.userauth_list)
#define libssh2_userauth_publickey_fromfile_ex \
	(*ssh2lib.userauth_publickey_fromfile_ex)

#endif
