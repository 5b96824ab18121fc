/*
 * log.c -- the binaries' own messages. Each message is formatted into one
 * buffer and written with one write(2), so it never splits across the
 * forwarded worker lines that share stderr.
 *
 * Messages quote what peers send (agents' node names and errors, srun's
 * lines, ssh's remote errors, rendezvous host names), so every message is
 * escaped as a whole before it is written: no peer can start a line of its
 * own or drive the terminal with escape sequences, whichever call site
 * forgot.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"

int		 log_level;
void		(*log_hook)(void);
void		(*log_flush)(void);
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

/* Length of the valid UTF-8 sequence at p (of n bytes) that is no C1 control, or 0. */
static size_t
utf8_len(const unsigned char *p, size_t n)
{
	size_t		len, i;
	unsigned int	cp;

	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		len = 2;
		cp = p[0] & 0x1f;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		len = 3;
		cp = p[0] & 0x0f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		len = 4;
		cp = p[0] & 0x07;
	} else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	/* Overlong forms, surrogates, beyond U+10FFFF, C1 controls (CSI). */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff ||
	    (cp >= 0x80 && cp <= 0x9f))
		return 0;
	return len;
}

/* Copies src into dst with what a terminal would act on escaped (log.h). */
char *
log_escape(char *dst, size_t len, const char *src)
{
	log_escape_mem(dst, len, src, strlen(src), NULL);
	return dst;
}

size_t
log_escape_mem(char *dst, size_t len, const char *src, size_t n,
    size_t *used)
{
	const unsigned char	*p = (const unsigned char *)src;
	size_t			 o = 0, in, out, n0 = n;
	char			 esc[8];

	if (used != NULL)
		*used = 0;
	if (len == 0)
		return 0;
	while (n > 0) {
		if (*p >= 0x20 && *p < 0x7f)
			in = 1;
		else
			in = *p >= 0x80 ? utf8_len(p, n) : 0;
		if (in > 0) {
			/* Printable ASCII or one whole UTF-8 character. */
			memcpy(esc, p, in);
			out = in;
		} else {
			in = 1;
			if (*p == '\n')
				out = snprintf(esc, sizeof(esc), "\\n");
			else if (*p == '\r')
				out = snprintf(esc, sizeof(esc), "\\r");
			else if (*p == '\t')
				out = snprintf(esc, sizeof(esc), "\\t");
			else
				out = snprintf(esc, sizeof(esc), "\\x%02x", *p);
		}
		/* What does not fit is left out whole, never half a sequence. */
		if (o + out >= len)
			break;
		memcpy(dst + o, esc, out);
		o += out;
		p += in;
		n -= in;
	}
	dst[o] = '\0';
	if (used != NULL)
		*used = n0 - n;
	return o;
}

/* Formats one message, escapes it whole, and writes it with its newline. */
static void
log_vwrite(const char *tag, const char *fmt, va_list ap)
{
	char	raw[4096], buf[4096];
	size_t	n;

	vsnprintf(raw, sizeof(raw), fmt, ap);
	if ((size_t)snprintf(buf, sizeof(buf), "%s: %s", progname, tag) >=
	    sizeof(buf) - 1)
		return;
	n = strlen(buf);
	log_escape(buf + n, sizeof(buf) - n - 1, raw);
	n += strlen(buf + n);
	buf[n++] = '\n';
	if (log_flush != NULL)
		log_flush();
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

void
log_error_lines(const char *msg, const char *lead)
{
	const char	*nl, *from = msg;
	size_t		 n = lead != NULL ? strlen(lead) : 0;

	/* A newline not followed by lead stays inside its line, escaped. */
	while ((nl = strchr(from, '\n')) != NULL) {
		from = nl + 1;
		if (n == 0 || strncmp(nl + 1, lead, n) != 0)
			continue;
		log_error("%.*s", (int)(nl - msg), msg);
		msg = from;
	}
	if (*msg != '\0')
		log_error("%s", msg);
}
