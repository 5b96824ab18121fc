/*
 * t_hf_hostfile.c -- hostfile parsing against the corpus in
 * tests/data/hostfile (good/NAME.hosts with NAME.expect, bad/NAME.hosts
 * with NAME.err), inline lists, ranges, the Slurm allocation and filters.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "hostfile/hostfile.h"
#include "test.h"
#include "t_hf.h"

#define DUMP_MAX	8192

char *
t_hf_read(const char *rel, size_t *lenp)
{
	char	 path[1024], *buf;
	FILE	*f;
	long	 n;

	snprintf(path, sizeof(path), "%s/hostfile/%s", t_datadir, rel);
	if ((f = fopen(path, "rb")) == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n + 1);
	if (buf != NULL && fread(buf, 1, n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf != NULL)
		buf[n] = '\0';
	if (lenp != NULL)
		*lenp = n;
	return buf;
}

/* One line per host: "name slots=N [default] [max_slots=M] [user=U] [port=P] [ids=..] @LINE". */
static const char *
hf_dump(const struct hf_hosts *hs, char *buf, size_t len)
{
	const struct hf_host	*h;
	size_t			 i, n = 0;
	int			 k;

	buf[0] = '\0';
	for (i = 0; i < hs->n && n < len; i++) {
		h = &hs->v[i];
		n += snprintf(buf + n, len - n, "%s slots=%d%s", h->name,
		    h->slots, h->slots_set ? "" : " default");
		if (h->max_slots && n < len)
			n += snprintf(buf + n, len - n, " max_slots=%d",
			    h->max_slots);
		if (h->user && n < len)
			n += snprintf(buf + n, len - n, " user=%s", h->user);
		if (h->port && n < len)
			n += snprintf(buf + n, len - n, " port=%d", h->port);
		for (k = 0; k < h->nslot_ids && n < len; k++)
			n += snprintf(buf + n, len - n, "%s%d",
			    k ? "," : " ids=", h->slot_ids[k]);
		if (n < len)
			n += snprintf(buf + n, len - n, " @%d\n", h->line);
	}
	return buf;
}

/* Dumps hs into buf, or "ERR: file:line:col: msg" if r failed; frees hs. */
static const char *
hf_result(struct hf_hosts *hs, int r, const struct dt_err *e, char *buf,
    size_t len)
{
	char	eb[1024];

	if (r != 0)
		snprintf(buf, len, "ERR: %s", dt_err_str(e, eb, sizeof(eb)));
	else
		hf_dump(hs, buf, len);
	hf_hosts_free(hs);
	return buf;
}

/* Parses inline list into a dump, or "ERR: file:line:col: msg". */
static const char *
hf_list(const char *list, char *buf, size_t len)
{
	struct hf_hosts	hs;
	struct dt_err	e;

	hf_hosts_init(&hs);
	return hf_result(&hs, hf_parse_list(&hs, list, &e), &e, buf, len);
}

int
t_hf_each(const char *dir, const char *suffix, void (*fn)(const char *))
{
	char		 path[1024];
	DIR		*d;
	struct dirent	*de;
	size_t		 n, s = strlen(suffix);
	int		 count = 0;

	snprintf(path, sizeof(path), "%s/hostfile/%s", t_datadir, dir);
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		n = strlen(de->d_name);
		if (n > s && strcmp(de->d_name + n - s, suffix) == 0) {
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			fn(path);
			count++;
		}
	}
	closedir(d);
	return count;
}

/*
 * Parses corpus file rel (under its base name) and compares the dump, or
 * the error line, with the file of the same name ending in ext.
 */
static void
hf_corpus_one(const char *rel, const char *ext)
{
	struct hf_hosts	 hs;
	struct dt_err	 e;
	char		 exp[1024], got[DUMP_MAX], *want, *buf;
	size_t		 len;
	int		 r;

	buf = t_hf_read(rel, &len);
	snprintf(exp, sizeof(exp), "%.*s%s", (int)strlen(rel) - 6, rel, ext);
	want = t_hf_read(exp, NULL);
	CHECK(buf != NULL && want != NULL);
	if (buf != NULL && want != NULL) {
		hf_hosts_init(&hs);
		r = hf_parse_buf(&hs, strrchr(rel, '/') + 1, buf, len, &e);
		hf_result(&hs, r, &e, got, sizeof(got));
		if (r != 0) {	/* .err holds the error line without "ERR: " */
			memmove(got, got + 5, strlen(got + 5) + 1);
			strcat(got, "\n");
		}
		if (strcmp(got, want) != 0)
			t_fail(__FILE__, __LINE__, "%s:\n%swant:\n%s", rel,
			    got, want);
	}
	free(buf);
	free(want);
}

/* t_hf_each callbacks: good files dump as .expect, bad ones fail as .err. */
static void
hf_good_one(const char *rel)
{
	hf_corpus_one(rel, ".expect");
}

static void
hf_bad_one(const char *rel)
{
	hf_corpus_one(rel, ".err");
}

TEST(hf_corpus_good)
{
	CHECK_INT(t_hf_each("good", ".hosts", hf_good_one), 10);
}

TEST(hf_corpus_bad)
{
	CHECK_INT(t_hf_each("bad", ".hosts", hf_bad_one), 27);
}

TEST(hf_list_inline)
{
	char	b[DUMP_MAX];

	CHECK_STR(hf_list("a:2,b:4", b, sizeof(b)),
	    "a slots=2 @1\nb slots=4 @1\n");
	CHECK_STR(hf_list("gpu[1-3,7]:4,user@c:2222", b, sizeof(b)),
	    "gpu1 slots=4 @1\ngpu2 slots=4 @1\ngpu3 slots=4 @1\n"
	    "gpu7 slots=4 @1\nc slots=1 default user=user port=2222 @1\n");
	CHECK_STR(hf_list(" a slots=2 port=2200 , a port=2200", b,
	    sizeof(b)), "a slots=3 port=2200 @1\n");
	CHECK_STR(hf_list("a port=2200,a:3", b, sizeof(b)),
	    "ERR: -H:1:13: host \"a\" listed again with a different port "
	    "(first at -H:1); repeated hosts merge their slots only when "
	    "user and port agree");
	CHECK_STR(hf_list("a,,b", b, sizeof(b)),
	    "ERR: -H:1:3: empty host name");
	CHECK_STR(hf_list("a,", b, sizeof(b)),
	    "ERR: -H:1:3: empty host name");
	CHECK_STR(hf_list("a:2,b[5-2]:4", b, sizeof(b)),
	    "ERR: -H:1:7: bad range \"b[5-2]\" (low > high)");
	CHECK_STR(hf_list("a,a port=22", b, sizeof(b)),
	    "ERR: -H:1:3: host \"a\" listed again with a different port "
	    "(first at -H:1); repeated hosts merge their slots only when "
	    "user and port agree");
}

/* hf_expand callback: appends name and a space to the buffer arg. */
static int
hf_collect(const char *name, size_t len, void *arg)
{
	char	*buf = arg;

	CHECK_INT(strlen(name), len);
	if (strlen(buf) + len + 2 < DUMP_MAX) {
		strcat(buf, name);
		strcat(buf, " ");
	}
	return 0;
}

/* Expands spec into "name name ", or "ERR: ..." */
static const char *
hf_exp(const char *spec, char *buf)
{
	struct dt_err	e;
	char		eb[1024];
	long		n;

	buf[0] = '\0';
	if ((n = hf_expand(spec, hf_collect, buf, &e)) < 0)
		snprintf(buf, DUMP_MAX, "ERR: %s", dt_err_str(&e, eb,
		    sizeof(eb)));
	return buf;
}

TEST(hf_range_expand)
{
	char	b[DUMP_MAX];

	CHECK_STR(hf_exp("gpu[01-03]", b), "gpu01 gpu02 gpu03 ");
	CHECK_STR(hf_exp("gpu[8-10]", b), "gpu8 gpu9 gpu10 ");
	CHECK_STR(hf_exp("gpu[08-10]", b), "gpu08 gpu09 gpu10 ");
	CHECK_STR(hf_exp("n[001-2]", b), "n001 n002 ");
	CHECK_STR(hf_exp("gpu[1-3,7]", b), "gpu1 gpu2 gpu3 gpu7 ");
	CHECK_STR(hf_exp("rack[1-2]-gpu[01-02]", b),
	    "rack1-gpu01 rack1-gpu02 rack2-gpu01 rack2-gpu02 ");
	/* Three brackets: scontrol's order, the middle one slowest. */
	CHECK_STR(hf_exp("p[1-2]x[1-2][0]", b), "p1x10 p2x10 p1x20 p2x20 ");
	CHECK_STR(hf_exp("a[1-2]b[1-2]c[1-2]", b), "a1b1c1 a1b1c2 a2b1c1 "
	    "a2b1c2 a1b2c1 a1b2c2 a2b2c1 a2b2c2 ");
	CHECK_STR(hf_exp("[1-2]x", b), "1x 2x ");
	CHECK_STR(hf_exp("a,b[2,1],c", b), "a b2 b1 c ");
	CHECK_STR(hf_exp("plain.example.com", b), "plain.example.com ");
	CHECK_STR(hf_exp("n[1-500000],m[1-500001]", b),
	    "ERR: spec:1:13: too many hosts from \"m[1-500001]\" (more than "
	    "the 1000000 names one source may expand to)");
	CHECK_STR(hf_exp("n[0-999999999999999999]", b),
	    "ERR: spec:1:1: too many hosts from \"n[0-999999999999999999]\" "
	    "(more than 1000000 names)");
	CHECK_STR(hf_exp("n[0-9999999999999999999]", b),
	    "ERR: spec:1:5: bad range \"n[0-9999999999999999999]\" (want "
	    "N-M inside [ ], up to 18 digits)");
	CHECK_STR(hf_exp("gpu[5-2]", b),
	    "ERR: spec:1:5: bad range \"gpu[5-2]\" (low > high)");
	CHECK_STR(hf_exp("gpu[1-2", b),
	    "ERR: spec:1:8: unclosed \"[\" in \"gpu[1-2\"");
	CHECK_STR(hf_exp("gpu[1-2[3]]", b),
	    "ERR: spec:1:8: bad range \"gpu[1-2[3]]\" (want \",\" or \"]\" "
	    "after a number)");
	CHECK_STR(hf_exp("", b), "ERR: spec:1:1: empty host name");
}

TEST(hf_range_long_name)
{
	char	spec[400], want[1024], b[DUMP_MAX];

	memset(spec, 'a', 250);
	strcpy(spec + 250, "[1-3]");
	snprintf(want, sizeof(want), "%.250s1 %.250s2 %.250s3 ", spec, spec,
	    spec);
	CHECK_STR(hf_exp(spec, b), want);
	strcpy(spec + 250, "[1-100000]");
	CHECK(strncmp(hf_exp(spec, b), "ERR: spec:1:1: host name too long "
	    "in \"", 34) == 0);
}

/* Counts names, stopping at the third. */
static int
hf_stop3(const char *name, size_t len, void *arg)
{
	return ++*(int *)arg == 3 ? 42 : 0;
}

TEST(hf_range_callback_stops)
{
	struct dt_err	e;
	int		n = 0;

	CHECK_INT(hf_expand("n[1-10]", hf_stop3, &n, &e), 42);
	CHECK_INT(n, 3);
}

/* Loads the Slurm allocation into a dump, or "ERR: ...". */
static const char *
hf_slurm(const char *nodes, const char *tasks, char *buf)
{
	struct hf_hosts	hs;
	struct dt_err	e;

	hf_hosts_init(&hs);
	return hf_result(&hs, hf_from_slurm(&hs, nodes, tasks, &e), &e, buf,
	    DUMP_MAX);
}

TEST(hf_slurm_allocation)
{
	char	b[DUMP_MAX];

	CHECK_STR(hf_slurm("gpu[01-03],login1", "2(x3),1", b),
	    "gpu01 slots=2 @1\ngpu02 slots=2 @1\ngpu03 slots=2 @1\n"
	    "login1 slots=1 @1\n");
	CHECK_STR(hf_slurm("n[1-2]", "4,8", b),
	    "n1 slots=4 @1\nn2 slots=8 @1\n");
	CHECK_STR(hf_slurm("n[1-2]", NULL, b),
	    "n1 slots=1 default @1\nn2 slots=1 default @1\n");
	CHECK_STR(hf_slurm("n[1-3]", "2(x2)", b),
	    "ERR: SLURM_JOB_NODELIST: names more nodes than "
	    "SLURM_TASKS_PER_NODE gives counts for (2)");
	CHECK_STR(hf_slurm("n[1-2]", "2(x3)", b),
	    "ERR: SLURM_JOB_NODELIST: names 2 nodes but "
	    "SLURM_TASKS_PER_NODE=\"2(x3)\" gives counts for 3");
	CHECK_STR(hf_slurm("n[1-2]", "2(3)", b),
	    "ERR: SLURM_TASKS_PER_NODE:1:2: bad repeat \"(3)\" (want "
	    "\"(xN)\", as in \"2(x3)\")");
	CHECK_STR(hf_slurm("n[1-2]", "2,x", b),
	    "ERR: SLURM_TASKS_PER_NODE:1:3: bad task count \"x\" (want 1 to "
	    "1000000, as in \"2(x3),1\")");
	/*
	 * The limits dtrun.yaml(5) states: counts 1..1000000 (what a host
	 * takes anywhere: Slurm gave them), repeats from 1.
	 */
	CHECK_STR(hf_slurm("n[1-2]", "0,1", b),
	    "ERR: SLURM_TASKS_PER_NODE:1:1: bad task count \"0\" (want 1 to "
	    "1000000, as in \"2(x3),1\")");
	CHECK_STR(hf_slurm("n[1-2]", "1024,1000001", b),
	    "ERR: SLURM_TASKS_PER_NODE:1:6: bad task count \"1000001\" (want "
	    "1 to 1000000, as in \"2(x3),1\")");
	CHECK_STR(hf_slurm("n[1-2]", "1024(x2)", b),
	    "n1 slots=1024 @1\nn2 slots=1024 @1\n");
	CHECK_STR(hf_slurm("n[1-2]", "4000,1025", b),
	    "n1 slots=4000 @1\nn2 slots=1025 @1\n");
	CHECK_STR(hf_slurm("n[1-2]", "1(x0),2", b),
	    "ERR: SLURM_TASKS_PER_NODE:1:2: bad repeat \"(x0)\" (want "
	    "\"(xN)\", as in \"2(x3)\")");
	CHECK_STR(hf_slurm("n[000000000000000001-2]", "1(x2)", b),
	    "n000000000000000001 slots=1 @1\nn000000000000000002 slots=1 @1\n");
	CHECK_STR(hf_slurm("n[0000000000000000001-2]", NULL, b),
	    "ERR: SLURM_JOB_NODELIST:1:3: bad range \"n[0000000000000000001-2]\" "
	    "(want N or N-M inside [ ], up to 18 digits)");
	CHECK_STR(hf_slurm("n[2-1]", "1", b),
	    "ERR: SLURM_JOB_NODELIST:1:3: bad range \"n[2-1]\" (low > high)");
}

/* Filters the hosts of list with include/exclude into a dump. */
static const char *
hf_filt(const char *list, const char *inc, const char *exc, char *buf)
{
	struct hf_hosts	hs;
	struct dt_err	e;
	int		r;

	hf_hosts_init(&hs);
	if ((r = hf_parse_list(&hs, list, &e)) == 0)
		r = hf_filter(&hs, inc, exc, &e);
	return hf_result(&hs, r, &e, buf, DUMP_MAX);
}

TEST(hf_filter_deepspeed)
{
	char	b[DUMP_MAX];

	CHECK_STR(hf_filt("w1:4,w2:4,w3:4", "w1:0,1@w3", NULL, b),
	    "w1 slots=2 ids=0,1 @1\nw3 slots=4 @1\n");
	CHECK_STR(hf_filt("w1:4,w2:4,w3:4", "w3@w1:2", NULL, b),
	    "w1 slots=1 ids=2 @1\nw3 slots=4 @1\n");
	CHECK_STR(hf_filt("w1:4,w2:4,w3:4", NULL, "w2@w1:0,3", b),
	    "w1 slots=2 ids=1,2 @1\nw3 slots=4 @1\n");
	CHECK_STR(hf_filt("w[1-4]:2", NULL, "w[2-3]", b),
	    "w1 slots=2 @1\nw4 slots=2 @1\n");
	CHECK_STR(hf_filt("w[1-4]:2", "w[3-4]:1", "", b),
	    "w3 slots=1 ids=1 @1\nw4 slots=1 ids=1 @1\n");
	CHECK_STR(hf_filt("w1:2", NULL, "w1:0,1", b),
	    "ERR: --exclude: \"w1:0,1\" leaves no hosts");
	CHECK_STR(hf_filt("w1:2", "w1", "w1", b),
	    "ERR: --include: --include and --exclude cannot be used together");
	CHECK_STR(hf_filt("w1:2,w2", "w1@w9", NULL, b),
	    "ERR: --include:1:4: host \"w9\" is not in the host list");
	CHECK_STR(hf_filt("w1:2,w2", "w1:2", NULL, b),
	    "ERR: --include:1:4: host \"w1\" has no device id 2 (it has 2 "
	    "slots)");
	CHECK_STR(hf_filt("w1:2,w2", "w1:a", NULL, b),
	    "ERR: --include:1:4: bad device id \"a\" (want host:0,1@host2)");
}

/*
 * Checks one block of a filter corpus: "hosts:", "include:" or "exclude:",
 * then the dump hf_filter should leave (or "ERR: ..."). *block is NUL-ended.
 */
static void
hf_filter_block(const char *rel, int line, char *block)
{
	char	*hosts = NULL, *inc = NULL, *exc = NULL, *want, *p, *nl;
	char	 got[DUMP_MAX];

	for (p = block; strncmp(p, "hosts: ", 7) == 0 ||
	    strncmp(p, "include: ", 9) == 0 || strncmp(p, "exclude: ", 9) == 0;
	    p = nl + 1) {
		if ((nl = strchr(p, '\n')) == NULL)
			break;
		*nl = '\0';
		if (p[0] == 'h')
			hosts = p + 7;
		else if (p[0] == 'i')
			inc = p + 9;
		else
			exc = p + 9;
	}
	want = p;
	if (hosts == NULL || (inc == NULL && exc == NULL)) {
		t_fail(__FILE__, __LINE__, "%s:%d: block without hosts: and "
		    "include: or exclude:", rel, line);
		return;
	}
	hf_filt(hosts, inc, exc, got);
	if (strncmp(got, "ERR: ", 5) == 0)
		strcat(got, "\n");
	if (strcmp(got, want) != 0)
		t_fail(__FILE__, __LINE__, "%s:%d:\n%swant:\n%s", rel, line, got,
		    want);
}

/* Runs every blank-line-separated block of a filter corpus file. */
static void
hf_filter_corpus_one(const char *rel)
{
	char	*buf = t_hf_read(rel, NULL), *p, *end, *out;
	int	 line = 1, start, nblocks = 0;
	char	 block[DUMP_MAX];
	size_t	 n;

	CHECK(buf != NULL);
	for (p = buf; buf != NULL && *p != '\0';) {
		/* Skip blank and comment lines, then take lines to a blank one. */
		if (*p == '\n' || *p == '#') {
			p += strcspn(p, "\n");
			p += *p == '\n';
			line++;
			continue;
		}
		start = line;
		out = block;
		for (end = p; *end != '\0' && *end != '\n'; line++) {
			n = strcspn(end, "\n") + 1;
			if (end[n - 1] != '\n')
				n--;
			if ((size_t)(out - block) + n + 1 > sizeof(block))
				break;
			memcpy(out, end, n);
			out += n;
			end += n;
		}
		*out = '\0';
		hf_filter_block(rel, start, block);
		nblocks++;
		p = end;
	}
	CHECK(nblocks > 0);
	free(buf);
}

TEST(hf_filter_corpus)
{
	CHECK_INT(t_hf_each("filter", ".golden", hf_filter_corpus_one), 1);
}

TEST(hf_filter_twice_uses_device_ids)
{
	struct hf_hosts	hs;
	struct dt_err	e;
	char		b[DUMP_MAX];

	hf_hosts_init(&hs);
	CHECK_INT(hf_parse_list(&hs, "w1:4", &e), 0);
	CHECK_INT(hf_filter(&hs, NULL, "w1:0", &e), 0);
	CHECK_INT(hf_filter(&hs, "w1:2,3", NULL, &e), 0);
	CHECK_STR(hf_dump(&hs, b, sizeof(b)), "w1 slots=2 ids=2,3 @1\n");
	CHECK_INT(hf_filter(&hs, "w1:0", NULL, &e), DT_ERR_NOTFOUND);
	CHECK_INT(hf_hosts_find(&hs, "w1"), 0);
	CHECK_INT(hf_hosts_find(&hs, "w2"), -1);
	hf_hosts_free(&hs);
}

TEST(hf_load_arg_file_or_list)
{
	struct hf_hosts	hs;
	struct dt_err	e;
	char		path[1024], b[DUMP_MAX], eb[2048];

	hf_hosts_init(&hs);
	snprintf(path, sizeof(path), "%s/hostfile/good/deepspeed.hosts",
	    t_datadir);
	CHECK_INT(hf_load_arg(&hs, path, &e), 0);
	CHECK_INT(hs.n, 3);
	CHECK_STR(hs.v[0].file, path);
	CHECK_INT(hf_load_arg(&hs, "worker-1,extra", &e), 0);
	CHECK_STR(hf_dump(&hs, b, sizeof(b)), "worker-1 slots=5 @2\n"
	    "worker-2 slots=4 @3\nworker-3 slots=8 @4\n"
	    "extra slots=1 default @1\n");
	CHECK_INT(hs.nnotes, 1);
	snprintf(eb, sizeof(eb), "-H:1: worker-1 listed again (first at "
	    "%s:2), slots merged to 5", path);
	CHECK_STR(hs.notes[0], eb);
	CHECK_STR(hs.v[3].file, "-H");
	CHECK_INT(hf_load_arg(&hs, "no/such/file", &e), DT_ERR_NOTFOUND);
	CHECK_STR(dt_err_str(&e, eb, sizeof(eb)), "no/such/file: no such "
	    "hostfile (an argument with \"/\" is a path, not a host list)");
	CHECK_INT(hf_load_arg(&hs, t_datadir, &e), DT_ERR_INVAL);
	CHECK_INT(hf_hosts_default_slots(&hs, 8, &e), 0);
	CHECK_INT(hs.v[3].slots, 8);
	CHECK_INT(hs.v[0].slots, 5);
	CHECK_INT(hf_hosts_default_slots(&hs, 0, &e), DT_ERR_RANGE);
	hf_hosts_free(&hs);
	CHECK_INT(hs.n, 0);
}

/* A here function for the test: names that start "me" are this machine. */
static int
hf_is_me(const char *name)
{
	return strncmp(name, "me", 2) == 0;
}

TEST(hf_here_names_are_one_host)
{
	struct hf_hosts	hs;
	struct dt_err	e;
	char		b[DUMP_MAX], eb[2048];

	hf_hosts_init(&hs);
	hs.here = hf_is_me;
	CHECK_INT(hf_parse_list(&hs, "me1,x,me2,me1", &e), 0);
	CHECK_STR(hf_dump(&hs, b, sizeof(b)), "me1 slots=3 @1\n"
	    "x slots=1 default @1\n");
	CHECK_STR(hs.notes[0], "-H:1: me2 names this machine, as me1 (first "
	    "at -H:1) does: one host, slots merged to 2");
	hf_hosts_free(&hs);
	CHECK(hs.here == hf_is_me);
	CHECK_INT(hf_parse_buf(&hs, "h", "me1 slots=2\nme2 slots=2\n", 24,
	    &e), DT_ERR_INVAL);
	CHECK(strstr(dt_err_str(&e, eb, sizeof(eb)), "h:2:1: host \"me2\" "
	    "names this machine as \"me1\" does with a slot count (first at "
	    "h:1); ") == eb);
	CHECK(strstr(eb, "to simulate several hosts here") != NULL);
	hf_hosts_free(&hs);
	hs.here = NULL;		/* without it, every name is a host */
	CHECK_INT(hf_parse_list(&hs, "me1,me2", &e), 0);
	CHECK_INT(hs.n, 2);
	hf_hosts_free(&hs);
}

/* hf_expand callback: counts names. */
static int
hf_count(const char *name, size_t len, void *arg)
{
	++*(long *)arg;
	return 0;
}

/* Parses n plain names, one a line, as the hostfile "big"; 0 or DT_ERR_*. */
static int
hf_plain_names(long n, struct dt_err *e)
{
	struct hf_hosts	 hs;
	char		*buf, *p;
	long		 i;
	int		 r;

	if ((buf = p = malloc((size_t)n * 9 + 1)) == NULL)
		return DT_ERR_NOMEM;
	for (i = 0; i < n; i++)
		p += sprintf(p, "h%ld\n", i);
	hf_hosts_init(&hs);
	r = hf_parse_buf(&hs, "big", buf, (size_t)(p - buf), e);
	CHECK(r != 0 || hs.n == (size_t)n);
	hf_hosts_free(&hs);
	free(buf);
	return r;
}

TEST(hf_expand_cap_boundary)
{
	struct dt_err	e;
	char		eb[DUMP_MAX];
	long		n = 0;

	/* Exactly HF_EXPAND_MAX names, plain ones counted too; not one more. */
	CHECK_INT(hf_expand("n[1-999999],b", hf_count, &n, &e), 1000000);
	CHECK_INT(n, 1000000);
	n = 0;
	CHECK(hf_expand("n[1-999999],b,c", hf_count, &n, &e) == DT_ERR_RANGE);
	CHECK_STR(dt_err_str(&e, eb, sizeof(eb)), "spec:1:15: too many hosts "
	    "from \"c\" (more than the 1000000 names one source may expand "
	    "to)");
	CHECK(strncmp(hf_slurm("n[1-999999],b,c", NULL, eb), "ERR: "
	    "SLURM_JOB_NODELIST:1:15: too many hosts from \"c\"", 47) == 0);
	CHECK(hf_plain_names(1000000, &e) == 0);
	CHECK(hf_plain_names(1000001, &e) == DT_ERR_RANGE);
	CHECK_STR(dt_err_str(&e, eb, sizeof(eb)), "big:1000001:1: too many "
	    "hosts from \"h1000000\" (more than the 1000000 names one source "
	    "may expand to)");
}
