/*
 * rootcause.c -- torchrun's "Root Cause" block from a rank's error file
 * (see rootcause.h). The JSON is read by a scanner, not a parser: it walks
 * strings (escapes and all) so that only a string followed by ':' counts
 * as a key, which is all a reader of three known keys needs.
 */
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proto/agentproto.h"
#include "launcher/job/rootcause.h"
#include "util/strv.h"
#include "util/xmalloc.h"

struct rootcause {
	char		*path;
	char		*data;		/* NUL-terminated copy */
	size_t		 len;
	uint32_t	 size;		/* the file's, maybe more than len */
	int		 kept;		/* path is our copy, in --output-dir */
};

struct rootcause *
rootcause_new(const struct ap_errfile *f)
{
	struct rootcause	*rc = xcalloc(1, sizeof(*rc));

	rc->path = xstrdup(f->path);
	rc->data = xmalloc(f->len + 1);
	memcpy(rc->data, f->data, f->len);
	rc->data[f->len] = '\0';
	rc->len = f->len;
	rc->size = f->size;
	return rc;
}

int
rootcause_keep(struct rootcause *rc, const char *dir, uint32_t rank)
{
	char	path[PATH_MAX], full[PATH_MAX];
	ssize_t	n;
	int	fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/rank.%u", dir, rank) >=
	    sizeof(path))
		return -1;
	/* Made by the output already, as a rule; an existing one is fine. */
	(void)mkdir(dir, 0777);
	(void)mkdir(path, 0777);
	if (realpath(path, full) == NULL ||
	    strlen(full) + sizeof("/" ROOTCAUSE_FILE) > sizeof(path))
		return -1;
	snprintf(path, sizeof(path), "%s/" ROOTCAUSE_FILE, full);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0666)) == -1)
		return -1;
	n = write(fd, rc->data, rc->len);
	if (close(fd) != 0 || n != (ssize_t)rc->len) {
		unlink(path);
		return -1;
	}
	free(rc->path);
	rc->path = xstrdup(path);
	rc->kept = 1;
	return 0;
}

void
rootcause_free(struct rootcause *rc)
{
	if (rc == NULL)
		return;
	free(rc->path);
	free(rc->data);
	free(rc);
}

/* The code point of the four hex digits at p, or -1 if they are not. */
static long
hex4(const char *p)
{
	char	buf[5];
	int	i;

	for (i = 0; i < 4; i++)
		if (!isxdigit((unsigned char)(buf[i] = p[i])))
			return -1;
	buf[4] = '\0';
	return strtol(buf, NULL, 16);
}

/* Appends code point u as UTF-8 (a lone surrogate as U+FFFD). */
static size_t
put_utf8(char *o, unsigned u)
{
	if (u >= 0xd800 && u <= 0xdfff)
		u = 0xfffd;
	if (u < 0x80) {
		o[0] = (char)u;
		return 1;
	}
	if (u < 0x800) {
		o[0] = (char)(0xc0 | u >> 6);
		o[1] = (char)(0x80 | (u & 0x3f));
		return 2;
	}
	o[0] = (char)(0xe0 | u >> 12);
	o[1] = (char)(0x80 | ((u >> 6) & 0x3f));
	o[2] = (char)(0x80 | (u & 0x3f));
	return 3;
}

/*
 * Reads the JSON string whose opening quote is at p[*i], leaving *i past
 * its closing one; with out, decodes it there (room for n bytes assumed).
 * Returns the decoded length, or -1 if it does not end.
 */
static long
json_str(const char *p, size_t n, size_t *i, char *out)
{
	size_t	k = *i + 1, o = 0;
	long	u;

	for (; k < n && p[k] != '"'; k++) {
		if (p[k] != '\\') {
			if (out != NULL)
				out[o] = p[k];
			o++;
			continue;
		}
		if (++k >= n)
			return -1;
		if (p[k] == 'u' && k + 4 < n && (u = hex4(p + k + 1)) >= 0) {
			k += 4;
			if (out != NULL)
				o += put_utf8(out + o, (unsigned)u);
			else
				o += 3;
			continue;
		}
		if (out != NULL)
			out[o] = p[k] == 'n' ? '\n' : p[k] == 't' ? '\t' :
			    p[k] == 'r' ? '\r' : p[k] == 'b' ? '\b' :
			    p[k] == 'f' ? '\f' : p[k];
		o++;
	}
	if (k >= n)
		return -1;
	*i = k + 1;
	return (long)o;
}

/* Skips blanks from p[*i]. */
static void
json_blank(const char *p, size_t n, size_t *i)
{
	while (*i < n && strchr(" \t\r\n", p[*i]) != NULL && p[*i] != '\0')
		(*i)++;
}

/* The value at p[i]: a string decoded, or a number's text; NULL else. */
static char *
json_value(const char *p, size_t n, size_t i)
{
	size_t	 k = i;
	long	 len;
	char	*out;

	if (i < n && p[i] == '"') {
		if ((len = json_str(p, n, &k, NULL)) < 0)
			return NULL;
		out = xmalloc((size_t)len + 1);
		k = i;
		out[json_str(p, n, &k, out)] = '\0';
		return out;
	}
	while (k < n && strchr("0123456789.-+eE", p[k]) != NULL && p[k] != '\0')
		k++;
	if (k == i)
		return NULL;
	out = xmalloc(k - i + 1);
	memcpy(out, p + i, k - i);
	out[k - i] = '\0';
	return out;
}

char *
rootcause_json_get(const char *p, size_t n, const char *key)
{
	size_t	i = 0, start, kl = strlen(key);

	while (i < n) {
		if (p[i] != '"') {
			i++;
			continue;
		}
		start = i;
		if (json_str(p, n, &i, NULL) < 0)
			return NULL;
		/* A key: the raw bytes between the quotes are the name. */
		if (i - start - 2 != kl || memcmp(p + start + 1, key, kl) != 0)
			continue;
		json_blank(p, n, &i);
		if (i >= n || p[i] != ':')
			continue;
		i++;
		json_blank(p, n, &i);
		return json_value(p, n, i);
	}
	return NULL;
}

const char *
rootcause_name(char **cmd, int ncmd)
{
	const char	*b, *s;

	if (ncmd < 1)
		return "dtrun";
	b = (b = strrchr(cmd[0], '/')) != NULL ? b + 1 : cmd[0];
	if (strncmp(b, "python", 6) != 0 || ncmd < 2 || cmd[1][0] == '-')
		return b;
	s = strrchr(cmd[1], '/');
	return s != NULL ? s + 1 : cmd[1];
}

char *
rootcause_traceback(const struct rootcause *rc)
{
	return rootcause_json_get(rc->data, rc->len, "py_callstack");
}

/* Appends "  LABEL: " and text's lines, the later ones indented under it. */
static void
add_text(struct strv *out, const char *label, const char *text)
{
	const char	*l = text, *nl;
	size_t		 n;
	int		 first = 1;

	do {
		nl = strchr(l, '\n');
		n = nl != NULL ? (size_t)(nl - l) : strlen(l);
		/* The traceback's last newline makes no line of its own. */
		if (n == 0 && nl == NULL && !first)
			break;
		if (first)
			strv_addf(out, "  %s: %.*s", label, (int)n, l);
		else
			strv_addf(out, "  %.*s", (int)n, l);
		first = 0;
		l = nl != NULL ? nl + 1 : NULL;
	} while (l != NULL);
}

/* When it failed, as torchrun writes it (local time, "2024-01-02_03:04:05"). */
static void
failure_time(const struct rootcause *rc, char *buf, size_t len)
{
	char		*ts = rootcause_json_get(rc->data, rc->len, "timestamp");
	time_t		 t = ts != NULL ? (time_t)strtoll(ts, NULL, 10) : 0;
	struct tm	 tm;

	if (t <= 0)
		t = time(NULL);
	free(ts);
	if (localtime_r(&t, &tm) == NULL ||
	    strftime(buf, len, "%Y-%m-%d_%H:%M:%S", &tm) == 0)
		snprintf(buf, len, "%lld", (long long)t);
}

void
rootcause_lines(const struct rootcause *rc, const struct rootcause_who *w,
    struct strv *out)
{
	static const char bar[] = "============================================"
	    "================", dash[] = "-----------------------------------"
	    "-------------------------";
	char	 when[64], *tb;

	failure_time(rc, when, sizeof(when));
	/* torch's order: the traceback, else the message, else the file. */
	if ((tb = rootcause_traceback(rc)) == NULL)
		tb = rootcause_json_get(rc->data, rc->len, "message");
	strv_addf(out, "%s", bar);
	strv_addf(out, "%s FAILED", w->name);
	strv_addf(out, "%s", dash);
	strv_addf(out, "Root Cause (first observed failure):");
	strv_addf(out, "[0]:");
	strv_addf(out, "  time      : %s", when);
	strv_addf(out, "  host      : %s", w->host);
	strv_addf(out, "  rank      : %u (local_rank: %d)", w->rank,
	    w->local_rank);
	strv_addf(out, "  exitcode  : %d (pid: %d)", w->exitcode, w->pid);
	/* The rank's own file goes with its agent; a copy stays. */
	strv_addf(out, "  error_file: %s%s", rc->path, rc->kept ? "" :
	    " (removed as the job ended; --output-dir keeps a copy)");
	add_text(out, "traceback ", tb != NULL ? tb : rc->data);
	if (rc->size > rc->len)
		strv_addf(out, "  (the error file has %u bytes: the first %zu "
		    "came back%s)", rc->size, rc->len, rc->kept ?
		    ", and are all the copy holds" : "");
	strv_addf(out, "%s", bar);
	free(tb);
}
