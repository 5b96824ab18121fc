/*
 * rundir.c -- where the job runs on each host (rundir.h).
 */
#include <stdio.h>
#include <stdlib.h>

#include "launcher/cli/cli.h"
#include "launcher/plan/plan.h"
#include "launcher/plan/rundir.h"

const char *
run_dir(const struct opts *o, const struct plan_host *ph, int local,
    char *buf, size_t len)
{
	const char	*p = o->sync_dst, *home;
	size_t		 n = 0;

	buf[0] = '\0';
	if (p[0] == '~' && (p[1] == '/' || p[1] == '\0')) {
		p += p[1] == '/' ? 2 : 1;
		if (local) {
			home = getenv("HOME");
			n = snprintf(buf, len, "%s/", home != NULL ? home : "");
		} else if (*p == '\0')
			p = ".";
	}
	for (; *p != '\0' && n + 1 < len; p++) {
		if (p[0] == '%' && p[1] == 'h') {
			n += snprintf(buf + n, len - n, "%s", ph->name);
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			buf[n++] = '%';
			p++;
		} else
			buf[n++] = *p;
	}
	buf[n < len ? n : len - 1] = '\0';
	return buf;
}

