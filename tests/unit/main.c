/*
 * main.c -- runs every registered unit test; "unit-tests [-d DATADIR] [NAME...]"
 * runs those whose name contains one of the NAMEs. Ends with "N passed, N failed".
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"

struct t_case {
	const char	*name;
	const char	*file;
	test_fn		 fn;
};

static struct t_case	*cases;
static int		 ncases, capcases;
static int		 failed_now;
const char		*t_datadir = "tests/data";

void
t_register(const char *name, const char *file, test_fn fn)
{
	if (ncases == capcases) {
		capcases = capcases ? capcases * 2 : 64;
		cases = realloc(cases, capcases * sizeof(*cases));
		if (cases == NULL)
			abort();
	}
	cases[ncases].name = name;
	cases[ncases].file = file;
	cases[ncases].fn = fn;
	ncases++;
}

void
t_fail(const char *file, int line, const char *fmt, ...)
{
	va_list	ap;

	printf("    %s:%d: ", file, line);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	failed_now++;
}

static int
cmp_case(const void *a, const void *b)
{
	const struct t_case *x = a, *y = b;
	int c = strcmp(x->file, y->file);

	return c ? c : strcmp(x->name, y->name);
}

static int
selected(const char *name, int argc, char **argv)
{
	int	i;

	if (argc == 0)
		return 1;
	for (i = 0; i < argc; i++)
		if (strstr(name, argv[i]) != NULL)
			return 1;
	return 0;
}

int
main(int argc, char **argv)
{
	int	i, passed = 0, failed = 0;

	if (argc > 2 && strcmp(argv[1], "-d") == 0) {
		t_datadir = argv[2];
		argc -= 2;
		argv += 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	qsort(cases, ncases, sizeof(*cases), cmp_case);
	for (i = 0; i < ncases; i++) {
		if (!selected(cases[i].name, argc - 1, argv + 1))
			continue;
		failed_now = 0;
		cases[i].fn();
		if (failed_now) {
			printf("not ok - %s (%s)\n", cases[i].name, cases[i].file);
			failed++;
		} else {
			printf("ok - %s\n", cases[i].name);
			passed++;
		}
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
