/*
 * ssh2lib.c -- libssh2 found at run time (see ssh2lib.h). One dlopen per
 * process, at the first ssh host; a library that cannot be loaded, or
 * lacks a function, is an error the ssh backend reports for that host.
 */
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

#include "launcher/backend/ssh2lib.h"

struct ssh2lib	ssh2lib;

/* Each function's name and where its pointer goes in the table. */
static const struct {
	const char	*name;
	size_t		 off;
} ssh2lib_syms[] = {
#define SSH2LIB_SYM(name, ret, args)					\
	{ "libssh2_" #name, offsetof(struct ssh2lib, name) },
	SSH2LIB_FUNCS(SSH2LIB_SYM)
#undef SSH2LIB_SYM
};

static void	*ssh2lib_dl;

/*
 * Fills a copy of the table, so a failure leaves none of it half set. The
 * library joins the global scope and each name is looked up there, as the
 * dynamic linker would have bound it: a preloaded library that wraps a
 * libssh2 call (tests/preload/sshhold.so) still comes first, and finds
 * the real one with RTLD_NEXT.
 */
int
ssh2lib_load(struct dt_err *e)
{
	struct ssh2lib	 t;
	const char	*why;
	void		*dl, *fn;
	size_t		 i;

	if (ssh2lib_dl != NULL)
		return 0;
	if ((dl = dlopen(SSH2LIB_SONAME, RTLD_NOW | RTLD_GLOBAL)) == NULL) {
		why = dlerror();
		return dt_errf(e, NULL, 0, 0, DT_ERR_NOTFOUND, "the ssh "
		    "launcher needs %s and cannot load it (%s): install it, "
		    "on Debian with \"apt-get install %s\"", SSH2LIB_SONAME,
		    why != NULL ? why : "not found", SSH2LIB_PACKAGE);
	}
	for (i = 0; i < sizeof(ssh2lib_syms) / sizeof(ssh2lib_syms[0]); i++) {
		if ((fn = dlsym(RTLD_DEFAULT, ssh2lib_syms[i].name)) == NULL) {
			dlclose(dl);
			return dt_errf(e, NULL, 0, 0, DT_ERR_NOTFOUND, "%s "
			    "has no %s: the ssh launcher needs libssh2 1.10 "
			    "or later (Debian package %s)", SSH2LIB_SONAME,
			    ssh2lib_syms[i].name, SSH2LIB_PACKAGE);
		}
		memcpy((char *)&t + ssh2lib_syms[i].off, &fn, sizeof(fn));
	}
	ssh2lib = t;
	ssh2lib_dl = dl;
	return 0;
}

/* The session's last error message; "?" without a session. */
const char *
ssh2lib_errmsg(LIBSSH2_SESSION *s)
{
	char	*m = NULL;

	if (s == NULL)
		return "?";
	libssh2_session_last_error(s, &m, NULL, 0);
	return m != NULL && *m != '\0' ? m : "unknown error";
}
