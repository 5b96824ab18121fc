/*
 * pyscript.c -- reads a Python command's script for what it imports
 * (pyscript.h). Only the first 1 MiB: an import is near the top.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/pyname.h"
#include "launcher/check/pyscript.h"

#define PYSCRIPT_READ_MAX	(1024 * 1024)

/* True if a line of text starts, after blanks, with an import of torch. */
static int
py_text_imports_torch(const char *text)
{
	const char	*p, *w;
	size_t		 n;

	for (p = text; p != NULL; p = (p = strchr(p, '\n')) ? p + 1 : NULL) {
		p += strspn(p, " \t");
		if (strncmp(p, "import", 6) == 0)
			n = 6;
		else if (strncmp(p, "from", 4) == 0)
			n = 4;
		else
			continue;
		if (p[n] != ' ' && p[n] != '\t')
			continue;
		w = p + n + strspn(p + n, " \t");
		if (strncmp(w, "torch", 5) == 0 &&
		    !isalnum((unsigned char)w[5]) && w[5] != '_')
			return 1;
	}
	return 0;
}

/* The first 1 MiB of path as a string, or NULL. */
static char *
py_read(const char *path)
{
	FILE	*f;
	char	*buf;
	size_t	 n;

	if ((f = fopen(path, "r")) == NULL)
		return NULL;
	if ((buf = malloc(PYSCRIPT_READ_MAX + 1)) != NULL) {
		n = fread(buf, 1, PYSCRIPT_READ_MAX, f);
		buf[n] = '\0';
	}
	fclose(f);
	return buf;
}

int
pyscript_imports_torch(char *const *cmd, int ncmd)
{
	char	*text;
	int	 i, has;

	if (ncmd < 2 || !dt_is_python(cmd[0]))
		return 0;
	/* The interpreter's own options come first; -W and -X take a value. */
	for (i = 1; i < ncmd && cmd[i][0] == '-'; i++) {
		if (strcmp(cmd[i], "-c") == 0)
			return i + 1 < ncmd && py_text_imports_torch(cmd[i + 1]);
		if (strcmp(cmd[i], "-m") == 0 || strcmp(cmd[i], "-") == 0)
			return 0;
		if ((strcmp(cmd[i], "-W") == 0 || strcmp(cmd[i], "-X") == 0))
			i++;
	}
	if (i >= ncmd || (text = py_read(cmd[i])) == NULL)
		return 0;
	has = py_text_imports_torch(text);
	free(text);
	return has;
}
