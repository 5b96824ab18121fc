/*
 * hostfile.c -- host entries ("[user@]host[:N] slots=N max_slots=M port=P
 * user=U") read from hostfiles, inline -H lists and engine.yaml, and the
 * -H rule "a file if one exists, else a list". See hostfile.h for the
 * grammar and the ":N" rule.
 */
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostfile/hf_impl.h"
#include "hostfile/hosts.h"

#define ENTRY_QUOTE	60	/* characters of an entry quoted in messages */
#define USER_MAX	64

/* The keys an entry may carry after the host. */
static const char *const entry_keys[] = {
	"slots", "max_slots", "max-slots", "port", "user", NULL
};

/* One entry being parsed: where it is, and the host it describes. */
struct entry {
	struct hf_hosts	*hs;
	struct hf_host	 t;
	const char	*p;		/* the entry, trimmed */
	size_t		 len;
	int		 col;		/* column of p[0] */
	struct dt_err	*e;
	int		 err;		/* hosts_add's error, for hfi_expand */
	int		 colon_slots;	/* slots came from host:N */
};

/* Nonzero for the blanks that separate tokens. */
static int
entry_blank(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* Nonzero if p[0..len) holds only blanks. */
static int
entry_isblank(const char *p, size_t len)
{
	while (len > 0 && entry_blank(p[len - 1]))
		len--;
	return len == 0;
}

/* Fills the error at offset off in the entry; returns code. */
static int
entry_error(struct entry *en, size_t off, int code, const char *fmt,
    const char *a, size_t alen)
{
	char	msg[256];
	int	n = alen > ENTRY_QUOTE ? ENTRY_QUOTE : (int)alen;

	snprintf(msg, sizeof(msg), fmt, n, a);
	return dt_errf(en->e, en->t.file, en->t.line, en->col + (int)off, code,
	    "%s", msg);
}

/* Checks a user name u[0..len) at offset off and stores a copy. */
static int
entry_user(struct entry *en, const char *u, size_t len, size_t off)
{
	size_t	i;

	if (en->t.user != NULL)
		return entry_error(en, off, DT_ERR_PARSE, "user \"%.*s\" given "
		    "twice (user@host and user=)", u, len);
	if (len == 0 || len > USER_MAX || u[0] == '-')
		return entry_error(en, off, DT_ERR_PARSE, "bad user name "
		    "\"%.*s\" (1 to 64 letters, digits, \".\", \"-\", \"_\", "
		    "not starting with \"-\")", u, len);
	for (i = 0; i < len; i++)
		if (!hfi_namechar((unsigned char)u[i]))
			return entry_error(en, off + i, DT_ERR_PARSE, "bad "
			    "character in user name \"%.*s\"", u, len);
	if ((en->t.user = hfi_strndup(u, len)) == NULL)
		return DT_ERR_NOMEM;
	return 0;
}

/* Reads a port p[0..len) at offset off. */
static int
entry_port(struct entry *en, const char *p, size_t len, size_t off)
{
	long	v;

	if (en->t.port != 0)
		return entry_error(en, off, DT_ERR_PARSE, "port \"%.*s\" given "
		    "twice", p, len);
	if (hfi_uint(p, len, DT_PORT_MAX, &v) != 0 || v == 0)
		return entry_error(en, off, DT_ERR_PARSE, "bad port \"%.*s\" "
		    "(want 1 to 65535)", p, len);
	en->t.port = (int)v;
	return 0;
}

/* Reads slots (max == 0) or max_slots (max == 1) from p[0..len). */
static int
entry_slots(struct entry *en, const char *p, size_t len, size_t off, int max)
{
	long	v;
	int	*dst = max ? &en->t.max_slots : &en->t.slots;

	if (max ? en->t.max_slots != 0 : en->t.slots_set)
		return entry_error(en, off, DT_ERR_PARSE, max ? "max_slots "
		    "\"%.*s\" given twice" : en->colon_slots ? "slots \"%.*s\" "
		    "given twice (host:N already gave the slots)" : "slots "
		    "\"%.*s\" given twice", p, len);
	switch (hfi_uint(p, len, HF_SLOTS_MAX, &v)) {
	case -1:
		return entry_error(en, off, DT_ERR_PARSE, "bad slot count "
		    "\"%.*s\" (want a number)", p, len);
	case -2:
		return entry_error(en, off, DT_ERR_RANGE, "slot count \"%.*s\" "
		    "is more than 1024", p, len);
	}
	if (v == 0)
		return entry_error(en, off, DT_ERR_RANGE, "slot count \"%.*s\" "
		    "must be at least 1", p, len);
	*dst = (int)v;
	if (!max)
		en->t.slots_set = 1;
	return 0;
}

/* Reads ":N" after host h[0..hlen): slots, or the port after "user@". */
static int
entry_colon(struct entry *en, const char *h, size_t hlen, size_t colon,
    size_t off)
{
	const char	*n = h + colon + 1;
	size_t		 nlen = hlen - colon - 1;
	long		 v;
	char		 msg[320];
	int		 q = hlen > ENTRY_QUOTE ? ENTRY_QUOTE : (int)hlen;

	if (en->t.user != NULL)
		return entry_port(en, n, nlen, off + colon + 1);
	if (hfi_uint(n, nlen, 1000000, &v) == 0 && v == 22)
		snprintf(msg, sizeof(msg), "\"%.*s\" is ambiguous: host:N means "
		    "N slots, but 22 is the ssh port; write \"%.*s slots=22\" "
		    "for 22 slots, or \"%.*s port=22\" or \"user@%.*s\" for "
		    "the port", q, h, (int)colon, h, (int)colon, h, q, h);
	else if (hfi_uint(n, nlen, 1000000, &v) == 0 && v > HF_SLOTS_MAX)
		snprintf(msg, sizeof(msg), "\"%.*s\": host:N means N slots, and "
		    "%ld is more than %d; for an ssh port write \"%.*s "
		    "port=%ld\" or \"user@%.*s\"", q, h, v, HF_SLOTS_MAX,
		    (int)colon, h, v, q, h);
	else {
		en->colon_slots = 1;
		return entry_slots(en, n, nlen, off + colon + 1, 0);
	}
	return dt_errf(en->e, en->t.file, en->t.line,
	    en->col + (int)(off + colon + 1), DT_ERR_PARSE, "%s", msg);
}

/* Reads one "key=value" token p[0..len) at offset off. */
static int
entry_key(struct entry *en, const char *p, size_t len, size_t off)
{
	const char	*eq = memchr(p, '=', len), *v, *near;
	size_t		 klen, vlen;

	if (eq == NULL) {
		near = hfi_closest(p, len, entry_keys);
		if (near != NULL)
			return entry_error(en, off, DT_ERR_PARSE, "\"%.*s\" "
			    "needs a value (slots=N, max_slots=M, port=P, "
			    "user=U)", p, len);
		return entry_error(en, off, DT_ERR_PARSE, "unexpected \"%.*s\" "
		    "after the host (one host per line; then only slots=N, "
		    "max_slots=M, port=P, user=U)", p, len);
	}
	klen = eq - p;
	v = eq + 1;
	vlen = len - klen - 1;
	if (klen == 5 && memcmp(p, "slots", 5) == 0)
		return entry_slots(en, v, vlen, off + 6, 0);
	if (klen == 9 && (memcmp(p, "max_slots", 9) == 0 ||
	    memcmp(p, "max-slots", 9) == 0))
		return entry_slots(en, v, vlen, off + 10, 1);
	if (klen == 4 && memcmp(p, "port", 4) == 0)
		return entry_port(en, v, vlen, off + 5);
	if (klen == 4 && memcmp(p, "user", 4) == 0)
		return entry_user(en, v, vlen, off + 5);
	near = hfi_closest(p, klen, entry_keys);
	if (near != NULL) {
		char	fmt[128];

		snprintf(fmt, sizeof(fmt), "unknown key \"%%.*s\" (did you mean "
		    "\"%s\"?)", near);
		return entry_error(en, off, DT_ERR_PARSE, fmt, p, klen);
	}
	return entry_error(en, off, DT_ERR_PARSE, "unknown key \"%.*s\" (want "
	    "slots, max_slots, port or user)", p, klen);
}

/* hfi_expand's callback: adds one expanded name. */
static int
entry_add(const char *name, size_t len, void *arg)
{
	struct entry	*en = arg;

	en->err = hosts_add(en->hs, name, len, &en->t, en->e);
	return en->err;
}

/* Parses the entry's tokens into en->t and adds its hosts. */
static int
entry_parse(struct entry *en)
{
	const char	*p = en->p, *h, *at;
	size_t		 len = en->len, i, tok, hlen, hoff, colon, budget;
	long		 r;

	for (tok = 0; tok < len && !entry_blank(p[tok]); tok++)
		;
	h = p;
	hlen = tok;
	hoff = 0;
	if ((at = memchr(p, '@', tok)) != NULL) {
		if ((r = entry_user(en, p, at - p, 0)) != 0)
			return r;
		hoff = at - p + 1;
		h = at + 1;
		hlen = tok - hoff;
		if ((at = memchr(h, '@', hlen)) != NULL)
			return entry_error(en, at - p, DT_ERR_PARSE, "more than "
			    "one \"@\" in \"%.*s\"", p, tok);
	}
	colon = hfi_item_end(h, hlen, ':');
	if (colon < hlen && (r = entry_colon(en, h, hlen, colon, hoff)) != 0)
		return r;
	for (i = tok; i < len;) {
		while (i < len && entry_blank(p[i]))
			i++;
		for (tok = i; tok < len && !entry_blank(p[tok]); tok++)
			;
		if (tok > i && (r = entry_key(en, p + i, tok - i, i)) != 0)
			return r;
		i = tok;
	}
	if (en->t.max_slots != 0 && en->t.max_slots < en->t.slots)
		return dt_errf(en->e, en->t.file, en->t.line, en->col,
		    DT_ERR_RANGE, "max_slots=%d is less than slots=%d",
		    en->t.max_slots, en->t.slots);
	budget = HF_EXPAND_MAX - en->hs->nexpanded;
	r = hfi_expand(h, colon, entry_add, en, &budget, en->t.file,
	    en->t.line, en->col + (int)hoff, en->e);
	en->hs->nexpanded = HF_EXPAND_MAX - budget;
	return r < 0 ? (int)r : 0;
}

int
hf_parse_entry(struct hf_hosts *hs, const char *file, int line, int col,
    const char *p, size_t len, struct dt_err *e)
{
	struct entry	en;
	int		r;

	while (len > 0 && entry_blank(*p)) {
		p++;
		len--;
		col++;
	}
	while (len > 0 && entry_blank(p[len - 1]))
		len--;
	memset(&en, 0, sizeof(en));
	en.hs = hs;
	en.p = p;
	en.len = len;
	en.col = col;
	en.e = e;
	en.t.slots = 1;
	en.t.line = line;
	en.t.col = col;
	if ((en.t.file = hosts_file(hs, file)) == NULL)
		return dt_errf(e, file, line, col, DT_ERR_NOMEM, "out of memory");
	r = entry_parse(&en);
	free(en.t.user);
	if (r == DT_ERR_NOMEM && e != NULL && e->code != DT_ERR_NOMEM)
		dt_errf(e, file, line, col, r, "out of memory");
	return r;
}

int
hf_parse_buf(struct hf_hosts *hs, const char *name, const char *buf,
    size_t len, struct dt_err *e)
{
	const char	*p = buf, *end = buf + len, *nl, *hash;
	int		 line = 0, r;

	hs->nexpanded = 0;
	for (; p < end; p = nl + 1) {
		line++;
		if ((nl = memchr(p, '\n', end - p)) == NULL)
			nl = end;
		if ((hash = memchr(p, '#', nl - p)) == NULL)
			hash = nl;
		if (entry_isblank(p, hash - p))
			continue;
		if ((r = hf_parse_entry(hs, name, line, 1, p, hash - p, e)) != 0)
			return r;
	}
	return 0;
}

int
hfi_parse_items(struct hf_hosts *hs, const char *file, int line, int col,
    const char *list, struct dt_err *e)
{
	size_t	len = strlen(list), off = 0, end;
	int	r;

	hs->nexpanded = 0;
	for (;;) {
		end = off + hfi_item_end(list + off, len - off, ',');
		if ((r = hf_parse_entry(hs, file, line, col + (int)off,
		    list + off, end - off, e)) != 0)
			return r;
		if (end == len)
			return 0;
		off = end + 1;
	}
}

int
hf_parse_list(struct hf_hosts *hs, const char *list, struct dt_err *e)
{
	return hfi_parse_items(hs, "-H", 1, 1, list, e);
}

int
hf_parse_file(struct hf_hosts *hs, const char *path, struct dt_err *e)
{
	char	*buf;
	size_t	 len;
	int	 r;

	if ((r = hfi_slurp(path, "hostfile", &buf, &len, e)) != 0)
		return r;
	r = hf_parse_buf(hs, path, buf, len, e);
	free(buf);
	return r;
}

int
hf_load_arg(struct hf_hosts *hs, const char *arg, struct dt_err *e)
{
	struct stat	st;

	if (stat(arg, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return dt_errf(e, arg, 0, 0, DT_ERR_INVAL, "is a "
			    "directory, not a hostfile");
		return hf_parse_file(hs, arg, e);
	}
	if (strchr(arg, '/') != NULL)
		return dt_errf(e, arg, 0, 0, DT_ERR_NOTFOUND, "no such hostfile "
		    "(an argument with \"/\" is a path, not a host list)");
	return hf_parse_list(hs, arg, e);
}

int
hf_hosts_default_slots(struct hf_hosts *hs, int n, struct dt_err *e)
{
	size_t	i;

	if (n < 1 || n > HF_SLOTS_MAX)
		return dt_errf(e, NULL, 0, 0, DT_ERR_RANGE, "slots per host %d "
		    "is outside 1..%d", n, HF_SLOTS_MAX);
	for (i = 0; i < hs->n; i++) {
		if (hs->v[i].slots_set || hs->v[i].slot_ids != NULL)
			continue;
		if (hs->v[i].max_slots != 0 && n > hs->v[i].max_slots)
			return dt_errf(e, hs->v[i].file, hs->v[i].line,
			    hs->v[i].col, DT_ERR_RANGE, "slots per host %d is "
			    "more than max_slots=%d of %s", n,
			    hs->v[i].max_slots, hs->v[i].name);
		hs->v[i].slots = n;
	}
	return 0;
}
