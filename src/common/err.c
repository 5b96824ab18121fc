/* err.c -- the shared error record. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"

void
dt_err_clear(struct dt_err *e)
{
	if (e != NULL)
		memset(e, 0, sizeof(*e));
}

int
dt_errf(struct dt_err *e, const char *file, int line, int col, int code,
    const char *fmt, ...)
{
	va_list	ap;

	if (e == NULL)
		return code;
	memset(e, 0, sizeof(*e));
	if (file != NULL)
		snprintf(e->file, sizeof(e->file), "%s", file);
	e->line = line;
	e->col = col;
	e->code = code;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return code;
}

const char *
dt_err_str(const struct dt_err *e, char *buf, size_t len)
{
	if (e->file[0] != '\0' && e->line > 0 && e->col > 0)
		snprintf(buf, len, "%s:%d:%d: %s", e->file, e->line, e->col,
		    e->msg);
	else if (e->file[0] != '\0' && e->line > 0)
		snprintf(buf, len, "%s:%d: %s", e->file, e->line, e->msg);
	else if (e->file[0] != '\0')
		snprintf(buf, len, "%s: %s", e->file, e->msg);
	else
		snprintf(buf, len, "%s", e->msg);
	return buf;
}

const char *
dt_strerror(int code)
{
	static const char *const names[] = {
		"success", "out of memory", "invalid argument", "parse error",
		"out of range", "I/O error", "protocol error",
		"too big", "try again", "authentication failed", "timed out",
		"not found", "system error", "unsupported", "aborted",
		"connection closed",
	};

	if (code > 0 || -code > DT_ERR_MAX)
		return "unknown error";
	return names[-code];
}
