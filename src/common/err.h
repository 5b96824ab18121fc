/* err.h -- error codes and the error record shared by every dtrun library. */
#ifndef DT_ERR_H
#define DT_ERR_H

#include <stddef.h>

/* Every library function returns 0 (or a count) on success, or one of these. */
#define DT_OK			  0
#define DT_ERR_NOMEM		 -1	/* out of memory */
#define DT_ERR_INVAL		 -2	/* bad argument or value */
#define DT_ERR_PARSE		 -3	/* syntax error in some input */
#define DT_ERR_RANGE		 -4	/* value out of range, or too many */
#define DT_ERR_IO		 -5	/* read/write/open failed (errno in msg) */
#define DT_ERR_PROTO		 -6	/* peer broke the wire protocol */
#define DT_ERR_TOOBIG		 -7	/* frame or field over its hard limit */
#define DT_ERR_AGAIN		 -8	/* need more bytes; not an error yet */
#define DT_ERR_AUTH		 -9	/* authentication failed */
#define DT_ERR_TIMEOUT		-10	/* gave up waiting */
#define DT_ERR_NOTFOUND		-11	/* no such host, key, file or symbol */
#define DT_ERR_SYS		-12	/* a system call failed (errno in msg) */
#define DT_ERR_UNSUPPORTED	-13	/* feature not available here */
#define DT_ERR_ABORTED		-14	/* the job is aborting */
#define DT_ERR_CLOSED		-15	/* peer closed the connection */
#define DT_ERR_MAX		 15

/*
 * Where and why something failed. file/line/col are optional (empty, 0):
 * parsers fill them so a binary can print "hosts:3:5: bad range ...".
 */
struct dt_err {
	char	file[256];
	int	line;
	int	col;
	int	code;
	int	errnum;	/* the errno behind code, where a caller may want
			   it (0: none); dt_errf clears it */
	char	msg[512];
};

/* Clears e (may be NULL). */
void		 dt_err_clear(struct dt_err *e);

/*
 * Fills e (may be NULL) with a location and a printf-style message.
 * Returns code, so a caller can write "return dt_errf(e, ...);".
 */
int		 dt_errf(struct dt_err *e, const char *file, int line, int col,
		     int code, const char *fmt, ...)
		     __attribute__((format(printf, 6, 7)));

/* Formats e as "file:line:col: msg" (omitting what is unset) into buf. */
const char	*dt_err_str(const struct dt_err *e, char *buf, size_t len);

/* A short English name for a DT_ERR_* code. */
const char	*dt_strerror(int code);

#endif
