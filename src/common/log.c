/*
 * log.c -- the binaries' own messages. Each message is formatted into one
 * buffer and written with one write(2), so it never splits across the
 * forwarded worker lines that share stderr.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

int		 log_level;
void		(*log_hook)(void);
static char	 progname[64] = "dtrun";

void
log_init(const char *name)
{
	snprintf(progname, sizeof(progname), "%s", name);
}

const char *
log_progname(void)
{
	return progname;
}

static void
log_vwrite(const char *tag, const char *fmt, va_list ap)
{
	char	buf[4096];
	int	n;

	n = snprintf(buf, sizeof(buf), "%s: %s", progname, tag);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return;
	vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, ap);
	n = strlen(buf);
	buf[n++] = '\n';
	if (log_hook != NULL)
		log_hook();
	(void)!write(STDERR_FILENO, buf, n);
}

void
log_error(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vwrite("", fmt, ap);
	va_end(ap);
}

void
log_warn(const char *fmt, ...)
{
	va_list	ap;

	if (log_level < 0)
		return;
	va_start(ap, fmt);
	log_vwrite("warning: ", fmt, ap);
	va_end(ap);
}

void
log_notice(const char *fmt, ...)
{
	va_list	ap;

	if (log_level < 0)
		return;
	va_start(ap, fmt);
	log_vwrite("", fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list	ap;

	if (log_level < 1)
		return;
	va_start(ap, fmt);
	log_vwrite("", fmt, ap);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list	ap;

	if (log_level < 2)
		return;
	va_start(ap, fmt);
	log_vwrite("debug: ", fmt, ap);
	va_end(ap);
}
