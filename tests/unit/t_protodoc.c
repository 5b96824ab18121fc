/*
 * t_protodoc.c -- doc/agent-protocol.md against the code: every frame type
 * of agentproto.h's enum ap_type is in the document with its number and
 * name (and in ap_type_name), nothing else is, the version agrees with
 * AP_VERSION, and every documented payload is the byte layout the
 * encoders write: a sample of each frame is walked field by field as the
 * document says and must come out whole, with the sample's values.
 *
 * The Phases tables are phase.c's, cell by cell.
 *
 * A failure says what to add where: frames are added this way by several
 * people at once, and the one who merges brings the document up to date.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "proto/agentproto.h"
#include "common/pack.h"
#include "proto/phase.h"
#include "test.h"
#include "t_hf.h"

#define DOC	"doc/agent-protocol.md"
#define HDR	"src/proto/agentproto.h"
#define PD_STR2(x)	#x
#define PD_STR(x)	PD_STR2(x)

/* One frame type, as the header's enum or the document's table has it. */
struct pd_type {
	int	 num;
	char	 name[32];
	char	 payload[512];	/* the document's payload cell */
};

/* Reads a file of the source tree (t_hf_read reads below the data directory). */
static char *
pd_slurp(const char *rel)
{
	char	path[1024];

	snprintf(path, sizeof(path), "../../../%s", rel);
	return t_hf_read(path, NULL);
}

/* The members of enum ap_type in the header: "AP_NAME = N," lines. */
static int
pd_enum(const char *hdr, struct pd_type *t, int max)
{
	const char	*p = strstr(hdr, "enum ap_type {"), *end;
	int		 n = 0;

	if (p == NULL || (end = strstr(p, "};")) == NULL)
		return -1;
	while ((p = strstr(p, "AP_")) != NULL && p < end && n < max) {
		if (sscanf(p, "AP_%31[A-Z0-9_] = %d", t[n].name, &t[n].num) == 2)
			n++;
		p += 3;
	}
	return n;
}

/* Copies the cell at s (up to the next '|'), trimmed; returns the '|'. */
static const char *
pd_cell(const char *s, char *out, size_t max)
{
	const char	*e = s;
	size_t		 n;

	while (*e != '\0' && *e != '|' && *e != '\n')
		e++;
	while (s < e && isspace((unsigned char)*s))
		s++;
	n = (size_t)(e - s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	if (n >= max)
		n = max - 1;
	memcpy(out, s, n);
	out[n] = '\0';
	return *e == '|' ? e + 1 : NULL;
}

/* The rows "| N | NAME | payload | when |" of the document's tables. */
static int
pd_doc(const char *doc, struct pd_type *t, int max)
{
	const char	*l, *p;
	char		 num[32];
	int		 n = 0;

	for (l = doc; l != NULL && *l != '\0' && n < max;
	    l = (l = strchr(l, '\n')) != NULL ? l + 1 : NULL) {
		if (l[0] != '|')
			continue;
		if ((p = pd_cell(l + 1, num, sizeof(num))) == NULL ||
		    num[0] == '\0' || strspn(num, "0123456789") != strlen(num))
			continue;
		t[n].num = atoi(num);
		if ((p = pd_cell(p, t[n].name, sizeof(t[n].name))) == NULL ||
		    pd_cell(p, t[n].payload, sizeof(t[n].payload)) == NULL)
			continue;
		/* Only the frame tables have an upper-case name there. */
		if (!isupper((unsigned char)t[n].name[0]))
			continue;
		n++;
	}
	return n;
}

static const struct pd_type *
pd_find(const struct pd_type *t, int n, int num)
{
	int	i;

	for (i = 0; i < n; i++)
		if (t[i].num == num)
			return &t[i];
	return NULL;
}

TEST(protodoc_frame_types)
{
	static struct pd_type	 e[256], d[256];
	const struct pd_type	*x;
	char			*hdr = pd_slurp(HDR), *doc = pd_slurp(DOC);
	int			 ne, nd, i;

	CHECK(hdr != NULL);
	CHECK(doc != NULL);
	if (hdr == NULL || doc == NULL)
		goto out;
	ne = pd_enum(hdr, e, 256);
	nd = pd_doc(doc, d, 256);
	CHECK(ne >= 20);
	for (i = 0; i < ne; i++) {
		if (strcmp(ap_type_name(e[i].num), e[i].name) != 0)
			t_fail(__FILE__, __LINE__, "ap_type_name(AP_%s) is "
			    "\"%s\": add 'case AP_%s: return \"%s\";' to "
			    "ap_type_name in src/proto/agentproto.c",
			    e[i].name, ap_type_name(e[i].num), e[i].name,
			    e[i].name);
		if ((x = pd_find(d, nd, e[i].num)) == NULL)
			t_fail(__FILE__, __LINE__, "frame AP_%s = %d is not in "
			    DOC ": add the row \"| %d | %s | `FIELDS` | sent "
			    "when |\" to its %s table (FIELDS as \"u32 rank, "
			    "str msg\", or (empty)), and a line for it to its "
			    "Versions table", e[i].name, e[i].num, e[i].num,
			    e[i].name, e[i].num < 64 ? "\"Launcher to agent\"" :
			    e[i].num < 128 ? "\"Agent to launcher\"" :
			    "\"Both ways\"");
		else if (strcmp(x->name, e[i].name) != 0)
			t_fail(__FILE__, __LINE__, DOC " calls frame %d %s: "
			    "rename it to %s (AP_%s in " HDR ")", e[i].num,
			    x->name, e[i].name, e[i].name);
	}
	for (i = 0; i < nd; i++)
		if (pd_find(e, ne, d[i].num) == NULL)
			t_fail(__FILE__, __LINE__, DOC " has frame %d %s, which "
			    "enum ap_type in " HDR " lacks: remove its row",
			    d[i].num, d[i].name);
out:
	free(hdr);
	free(doc);
}

TEST(protodoc_version)
{
	char	*doc = pd_slurp(DOC), want[64], *vs;

	CHECK(doc != NULL);
	if (doc == NULL)
		return;
	snprintf(want, sizeof(want), "# dtrun agent protocol, version %d\n",
	    AP_VERSION);
	if (strncmp(doc, want, strlen(want)) != 0)
		t_fail(__FILE__, __LINE__, DOC "'s title must be \"%.*s\" "
		    "(AP_VERSION)", (int)strlen(want) - 1, want);
	snprintf(want, sizeof(want), "`AP_VERSION` (now %d)", AP_VERSION);
	if (strstr(doc, want) == NULL)
		t_fail(__FILE__, __LINE__, DOC "'s Versions section must say "
		    "\"%s\"", want);
	snprintf(want, sizeof(want), "\n| %d | ", AP_VERSION);
	if ((vs = strstr(doc, "\n## Versions")) == NULL ||
	    strstr(vs, want) == NULL)
		t_fail(__FILE__, __LINE__, DOC "'s Versions table lacks a row "
		    "\"| %d | what changed |\"", AP_VERSION);
	free(doc);
}

/*
 * Walks payload p[0..n) as the document's field list spec says
 * ("u32 rank, u8 stream, rest data"), writing "rank=1 stream=2 data=3
 * bytes" to out. Returns NULL, or what went wrong.
 */
static const char *
pd_walk(const char *spec, const uint8_t *p, size_t n, char *out, size_t max)
{
	static char	 why[256];
	struct dt_rbuf	 r;
	char		 s[512], *f, *save = NULL, type[16], name[64], cnt[64];
	char		 names[16][64];
	uint64_t	 vals[16], v;
	size_t		 len, k, i, nf = 0, o = 0;
	const uint8_t	*b;
	int		 isint;

	out[0] = '\0';
	dt_rbuf_init(&r, p, n);
	if (strcmp(spec, "(empty)") == 0)
		return n == 0 ? NULL : "not empty";
	if (spec[0] != '`' || (len = strlen(spec)) < 2 || spec[len - 1] != '`')
		return "the payload cell is neither (empty) nor `fields`";
	snprintf(s, sizeof(s), "%.*s", (int)len - 2, spec + 1);
	for (f = strtok_r(s, ",", &save); f != NULL;
	    f = strtok_r(NULL, ",", &save)) {
		if (sscanf(f, " %15s %63s", type, name) != 2)
			return "a field is not \"TYPE NAME\"";
		v = 0;
		isint = 1;
		if (strcmp(type, "u8") == 0)
			v = dt_rbuf_u8(&r);
		else if (strcmp(type, "u16") == 0)
			v = dt_rbuf_u16(&r);
		else if (strcmp(type, "u32") == 0)
			v = dt_rbuf_u32(&r);
		else if (strcmp(type, "u64") == 0)
			v = dt_rbuf_u64(&r);
		else
			isint = 0;
		if (isint)
			;
		else if (strcmp(type, "str") == 0) {
			b = dt_rbuf_blob(&r, &len, n);
			o += snprintf(out + o, max - o, "%s=%.*s ", name,
			    (int)len, b != NULL ? (const char *)b : "");
		} else if (strcmp(type, "strv") == 0) {
			k = dt_rbuf_u32(&r);
			o += snprintf(out + o, max - o, "%s=[", name);
			for (i = 0; i < k && !r.err && o < max; i++) {
				b = dt_rbuf_blob(&r, &len, n);
				o += snprintf(out + o, max - o, "%s%.*s",
				    i ? "," : "", (int)len,
				    b != NULL ? (const char *)b : "");
			}
			o += snprintf(out + o, max - o, "] ");
		} else if (strcmp(type, "rest") == 0) {
			len = dt_rbuf_left(&r);
			r.off = r.len;
			o += snprintf(out + o, max - o, "%s=%zu bytes ", name,
			    len);
		} else if (sscanf(type, "progress[%63[a-z_]]", cnt) == 1) {
			/* PROGRESS's items, each as the document lists them. */
			for (k = 0, i = 0; i < nf; i++)
				if (strcmp(names[i], cnt) == 0)
					k = vals[i];
			o += snprintf(out + o, max - o, "%s=[", name);
			for (i = 0; i < k && !r.err && o < max; i++) {
				unsigned rk = dt_rbuf_u32(&r), fr = dt_rbuf_u8(&r);
				unsigned long long st = dt_rbuf_u64(&r);
				unsigned age = dt_rbuf_u32(&r);
				unsigned long long cpu = dt_rbuf_u64(&r);

				o += snprintf(out + o, max - o, "%s%u:%u:%llu:%u:"
				    "%llu:%u", i ? "," : "", rk, fr, st, age, cpu,
				    dt_rbuf_u32(&r));
			}
			o += snprintf(out + o, max - o, "] ");
		} else if (sscanf(type, "coll[%63[a-z_]]", cnt) == 1) {
			/* COLLS's items: rank, nranks, comm, seq, ns. */
			for (k = 0, i = 0; i < nf; i++)
				if (strcmp(names[i], cnt) == 0)
					k = vals[i];
			o += snprintf(out + o, max - o, "%s=[", name);
			for (i = 0; i < k && !r.err && o < max; i++) {
				unsigned rk = dt_rbuf_u32(&r), nr = dt_rbuf_u32(&r);
				unsigned long long cm = dt_rbuf_u64(&r);
				unsigned long long sq = dt_rbuf_u64(&r);

				o += snprintf(out + o, max - o, "%s%u:%u:%llu:%llu:"
				    "%llu", i ? "," : "", rk, nr, cm, sq,
				    (unsigned long long)dt_rbuf_u64(&r));
			}
			o += snprintf(out + o, max - o, "] ");
		} else if (sscanf(type, "wait[%63[a-z_]]", cnt) == 1) {
			/* WAITS's items, each as the document lists them. */
			for (k = 0, i = 0; i < nf; i++)
				if (strcmp(names[i], cnt) == 0)
					k = vals[i];
			o += snprintf(out + o, max - o, "%s=[", name);
			for (i = 0; i < k && !r.err && o < max; i++) {
				unsigned rk = dt_rbuf_u32(&r), wl = dt_rbuf_u32(&r);
				unsigned sa = dt_rbuf_u16(&r), wk = dt_rbuf_u16(&r);
				unsigned pe = dt_rbuf_u16(&r), in = dt_rbuf_u16(&r);
				unsigned cp = dt_rbuf_u32(&r), dl = dt_rbuf_u32(&r);

				b = dt_rbuf_blob(&r, &len, n);
				o += snprintf(out + o, max - o, "%s%u:%u:%u:%u:%u:"
				    "%u:%u:%u:%.*s", i ? "," : "", rk, wl, sa, wk,
				    pe, in, cp, dl, (int)len,
				    b != NULL ? (const char *)b : "");
			}
			o += snprintf(out + o, max - o, "] ");
		} else if (sscanf(type, "u16[%63[a-z_]]", cnt) == 1) {
			for (k = 0, i = 0; i < nf; i++)
				if (strcmp(names[i], cnt) == 0)
					k = vals[i];
			o += snprintf(out + o, max - o, "%s=[", name);
			for (i = 0; i < k && !r.err && o < max; i++)
				o += snprintf(out + o, max - o, "%s%u",
				    i ? "," : "", dt_rbuf_u16(&r));
			o += snprintf(out + o, max - o, "] ");
		} else {
			snprintf(why, sizeof(why), "unknown field type %s",
			    type);
			return why;
		}
		if (isint) {
			o += snprintf(out + o, max - o, "%s=%llu ", name,
			    (unsigned long long)v);
			if (nf < 16) {
				snprintf(names[nf], sizeof(names[nf]), "%s",
				    name);
				vals[nf++] = v;
			}
		}
		if (o >= max)
			return "too many fields";
	}
	if (o > 0)
		out[o - 1] = '\0';
	if (r.err)
		return "the payload ends before the fields do";
	if (dt_rbuf_left(&r) != 0) {
		snprintf(why, sizeof(why), "%zu bytes are left after the last "
		    "field", dt_rbuf_left(&r));
		return why;
	}
	return NULL;
}

/* Writes one sample frame of its type into b. */
typedef void	(*pd_put)(struct dt_wbuf *);

static void
put_job(struct dt_wbuf *b)
{
	char		*env[] = { "A=1", "B=" }, *defs[] = { "OMP_NUM_THREADS=1" };
	struct ap_job	 j = { AP_VERSION, "j1", "/w", 5000, 2, env, 2, "s",
			    "eth0", "10.0.0.1", AP_IF_NCCL, 1, defs, 1, 1 };

	ap_put_job(b, &j);
}

static void
put_rank(struct dt_wbuf *b)
{
	char		*argv[] = { "python", "t.py" }, *env[] = { "R=3" };
	struct ap_rank	 r = { 3, 1, argv, 2, env, 1 };

	ap_put_rank(b, &r);
}

static void
put_signal(struct dt_wbuf *b)
{
	ap_put_signal(b, 10);
}

static void
put_stop(struct dt_wbuf *b)
{
	struct ap_stop	s = { 15, 5000 };

	ap_put_stop(b, &s);
}

static void
put_ports(struct dt_wbuf *b)
{
	ap_put_ports(b, 2);
}

/* Ten OUTPUT frames of 396 bytes, packed as the link packs them. */
static void
put_packed(struct dt_wbuf *b)
{
	struct dt_wbuf	raw;
	char		data[400 - 14];
	int		i;

	memset(data, 'x', sizeof(data));
	dt_wbuf_init(&raw);
	for (i = 0; i < 10; i++)
		ap_put_output(&raw, 3, AP_STDOUT, data, sizeof(data));
	CHECK_INT(pack_frames(b, raw.p, raw.len, AP_FRAME_MAX), 1);
	dt_wbuf_free(&raw);
}

/* A JOB over one frame (5 strings of 256 KiB): the first frame is a CONT. */
static void
put_cont(struct dt_wbuf *b)
{
	static char	 big[AP_MAX_STR + 1];
	char		*env[] = { big, big, big, big, big };
	struct ap_job	 j = { AP_VERSION, "j1", "/w", 5000, 1, env, 5, "", "",
			    "", 0, 0, NULL, 0, 0 };
	uint32_t	 len;

	memset(big, 'x', sizeof(big) - 1);
	ap_put_job(b, &j);
	len = (uint32_t)b->p[0] << 24 | b->p[1] << 16 | b->p[2] << 8 | b->p[3];
	b->len = 4 + len;		/* keep the first frame only */
}

static void
put_empty(struct dt_wbuf *b)
{
	/* Every empty frame looks alike: the caller sets the type. */
	ap_put_empty(b, AP_START);
}

static void
put_hello(struct dt_wbuf *b)
{
	struct ap_hello	h = { AP_VERSION, "h1", 42, 29500 };

	ap_put_hello(b, &h);
}

static void
put_started(struct dt_wbuf *b)
{
	ap_put_started(b, 3, 42);
}

static void
put_output(struct dt_wbuf *b)
{
	ap_put_output(b, 3, AP_STDERR, "hi\n", 3);
}

static void
put_rdzv(struct dt_wbuf *b)
{
	ap_put_rdzv(b, 5, "join", 4);
}

static void
put_store(struct dt_wbuf *b)
{
	ap_put_store(b, 2, "\x03\x00", 2);
}

static void
put_exit(struct dt_wbuf *b)
{
	struct ap_exit	x = { 3, AP_SIGNALED, 9 };

	ap_put_exit(b, &x);
}

static void
put_error(struct dt_wbuf *b)
{
	struct ap_error	e = { AP_NORANK, 2, "no" };

	ap_put_error(b, &e);
}

static void
put_portlist(struct dt_wbuf *b)
{
	int	ports[] = { 4000, 4001 };

	ap_put_portlist(b, ports, 2);
}

static void
put_stack(struct dt_wbuf *b)
{
	struct ap_stack	k = { 3, 42, AP_STK_OK, "gdb", "#0 main" };

	ap_put_stack(b, &k);
}

static void
put_errfile(struct dt_wbuf *b)
{
	struct ap_errfile	f = { 3, "/r/rank.3.json", 9, (const uint8_t *)
				    "{\"m\": 1}", 8 };

	ap_put_errfile(b, &f);
}

static void
put_iface(struct dt_wbuf *b)
{
	struct ap_iface	f = { 1, "eth1", "10.0.0.2", "route" };

	ap_put_iface(b, &f);
}

static void
put_check(struct dt_wbuf *b)
{
	char		*env[] = { "PATH=/b" };
	struct ap_check	 c = { AP_CHK_GATHER, AP_CHK_FAST, 7, "eth0",
			    "10.0.0.1", "python3", "/w", env, 1, ". venv",
			    1024, 4, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" };

	ap_put_check(b, &c);
}

static void
put_checked(struct dt_wbuf *b)
{
	char			*kv[] = { "version=1", "iface=eth0" };
	struct ap_checked	 k = { AP_CHK_PROBE, 8, 9, kv, 2 };

	ap_put_checked(b, &k);
}

static void
put_progress(struct dt_wbuf *b)
{
	struct ap_progress	v[2] = { { 3, 1, 120, 15, 2500, 81920 },
				    { 4, 0, 119, 480, 2400, 80000 } };

	ap_put_progress(b, v, 2);
}

static void
put_colls(struct dt_wbuf *b)
{
	struct ap_coll	v[2] = { { 3, 4, 77, 12, 1000 }, { 1, 4, 77, 12, 990 } };

	ap_put_colls(b, 5000, v, 2);
}

static void
put_waits(struct dt_wbuf *b)
{
	struct ap_wait	v[2] = { { 3, 1000, 20, 19, 0, 1, 980, 12, "" },
			    { 1, 1000, 20, 8, 12, 0, 400, 30, "sleep" } };

	ap_put_waits(b, v, 2);
}

static void
put_heartbeat(struct dt_wbuf *b)
{
	ap_put_heartbeat(b, 15000);
}

/* A sample of every frame type and how the document's fields read it. */
static const struct {
	int		 type;
	pd_put		 put;
	const char	*want;
} samples[] = {
	{ AP_JOB, put_job, "version=" PD_STR(AP_VERSION) " job_id=j1 cwd=/w "
	    "kill_grace_ms=5000 nranks=2 env=[A=1,B=] setup=s iface=eth0 "
	    "rank0=10.0.0.1 ifvars=1 pack=1 defaults=[OMP_NUM_THREADS=1] "
	    "errfile=1" },
	{ AP_RANK, put_rank, "rank=3 local_rank=1 argv=[python,t.py] "
	    "env=[R=3]" },
	{ AP_PREPARE, put_empty, "" },
	{ AP_START, put_empty, "" },
	{ AP_SIGNAL, put_signal, "signo=10" },
	{ AP_STOP, put_stop, "signo=15 grace_ms=5000" },
	{ AP_PORTS, put_ports, "n=2" },
	{ AP_CONT, put_cont, "part=1048571 bytes" },
	{ AP_STACKS, put_empty, "" },
	{ AP_AGAIN, put_empty, "" },
	{ AP_HELLO, put_hello, "version=" PD_STR(AP_VERSION) " hostname=h1 "
	    "pid=42 free_port=29500" },
	{ AP_PREPARED, put_empty, "" },
	{ AP_STARTED, put_started, "rank=3 pid=42" },
	{ AP_OUTPUT, put_output, "rank=3 stream=2 data=3 bytes" },
	{ AP_EXIT, put_exit, "rank=3 how=1 code=9" },
	{ AP_ERROR, put_error, "rank=4294967295 code=2 msg=no" },
	{ AP_DONE, put_empty, "" },
	{ AP_PORTLIST, put_portlist, "n=2 ports=[4000,4001]" },
	{ AP_STACK, put_stack, "rank=3 pid=42 status=0 tool=gdb text=#0 main" },
	{ AP_STACKASK, put_empty, "" },
	{ AP_ERRFILE, put_errfile, "rank=3 path=/r/rank.3.json size=9 "
	    "data=8 bytes" },
	{ AP_IFACE, put_iface, "ok=1 name=eth1 addr=10.0.0.2 why=route" },
	{ AP_CHECK, put_check, "step=1 flags=1 now_ms=7 iface=eth0 "
	    "target=10.0.0.1 cmd=python3 cwd=/w env=[PATH=/b] setup=. venv "
	    "bytes=1024 streams=4 key=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" },
	{ AP_CHECKED, put_checked, "step=2 now_ms=8 took_ms=9 "
	    "kv=[version=1,iface=eth0]" },
	{ AP_HEARTBEAT, put_heartbeat, "timeout_ms=15000" },
	{ AP_COLLS, put_colls, "now_ns=5000 n=2 arrivals=[3:4:77:12:1000,"
	    "1:4:77:12:990]" },
	{ AP_WAITS, put_waits, "n=2 ranks=[3:1000:20:19:0:1:980:12:,"
	    "1:1000:20:8:12:0:400:30:sleep]" },
	{ AP_PROGRESS, put_progress, "n=2 ranks=[3:1:120:15:2500:81920,"
	    "4:0:119:480:2400:80000]" },
	{ AP_PACKED, put_packed, "raw=3960 block=39 bytes" },
	{ AP_RDZV, put_rdzv, "chan=5 data=4 bytes" },
	{ AP_STORE, put_store, "chan=2 data=2 bytes" },
};

TEST(protodoc_payload_layouts)
{
	static struct pd_type	 d[256], e[256];
	char			*doc = pd_slurp(DOC), *hdr = pd_slurp(HDR);
	char			 got[1024], lower[32];
	const char		*why;
	const uint8_t		*pl;
	struct dt_wbuf		 b;
	size_t			 plen, used, k;
	uint8_t			 type;
	int			 nd, ne, i, found;

	CHECK(doc != NULL && hdr != NULL);
	if (doc == NULL || hdr == NULL)
		goto out;
	nd = pd_doc(doc, d, 256);
	ne = pd_enum(hdr, e, 256);
	for (i = 0; i < ne; i++) {
		for (k = 0; k < sizeof(lower) - 1 && e[i].name[k] != '\0'; k++)
			lower[k] = (char)tolower((unsigned char)e[i].name[k]);
		lower[k] = '\0';
		for (found = 0, k = 0; k < sizeof(samples) / sizeof(*samples);
		    k++)
			found |= samples[k].type == e[i].num;
		if (!found)
			t_fail(__FILE__, __LINE__, "frame AP_%s has no sample "
			    "in samples[] of tests/unit/t_protodoc.c: add "
			    "\"{ AP_%s, put_%s, \\\"field=value ...\\\" }\" "
			    "(put_%s: a function that calls its ap_put_*), so "
			    "its documented layout is checked", e[i].name,
			    e[i].name, lower, lower);
	}
	for (k = 0; k < sizeof(samples) / sizeof(*samples); k++) {
		const struct pd_type *x = pd_find(d, nd, samples[k].type);

		if (x == NULL)
			continue;	/* protodoc_frame_types says so */
		dt_wbuf_init(&b);
		samples[k].put(&b);
		if (dt_frame_parse(b.p, b.len, AP_FRAME_MAX, &type, &pl, &plen,
		    &used) != 0) {
			t_fail(__FILE__, __LINE__, "the %s sample makes no "
			    "frame", x->name);
			dt_wbuf_free(&b);
			continue;
		}
		if ((why = pd_walk(x->payload, pl, plen, got,
		    sizeof(got))) != NULL)
			t_fail(__FILE__, __LINE__, DOC "'s payload of %d %s "
			    "(%s) is not what ap_put_* writes: %s", x->num,
			    x->name, x->payload, why);
		else if (strcmp(got, samples[k].want) != 0)
			t_fail(__FILE__, __LINE__, DOC "'s payload of %d %s "
			    "(%s) reads the sample as \"%s\", want \"%s\": "
			    "fix the field names or order", x->num, x->name,
			    x->payload, got, samples[k].want);
		dt_wbuf_free(&b);
	}
out:
	free(doc);
	free(hdr);
}

/*
 * The document's Phases tables against phase.c's: for each side, every
 * frame it receives is in a row, and for every phase of that side the
 * row's "taken while" and "stale while" say what the verdict function
 * does. A phase is named by its word ("waiting" for "waiting for the
 * job"); "any" is every phase, "any but X" every phase but X.
 */
typedef enum ap_verdict (*pd_verdict_fn)(int, uint8_t);
typedef const char *(*pd_phase_name_fn)(int);

static enum ap_verdict
pd_host_verdict(int ph, uint8_t type)
{
	return host_frame_verdict((enum host_phase)ph, type);
}

static enum ap_verdict
pd_agent_verdict(int ph, uint8_t type)
{
	return agent_frame_verdict((enum agent_phase)ph, type);
}

static const char *
pd_host_phase(int ph)
{
	return host_phase_name((enum host_phase)ph);
}

static const char *
pd_agent_phase(int ph)
{
	return agent_phase_name((enum agent_phase)ph);
}

/* Whether cell (a list of phase words) names phase ph. */
static int
pd_cell_has(const char *cell, pd_phase_name_fn name, int ph)
{
	const char	*n = name(ph), *p;
	size_t		 len;

	if (strcmp(cell, "any") == 0)
		return 1;
	if (strncmp(cell, "any but ", 8) == 0)
		return !pd_cell_has(cell + 8, name, ph);
	for (p = cell; *p != '\0'; p += strspn(p, ", ")) {
		len = strcspn(p, ",");
		/* The word, or the name's first words ("waiting"). */
		if (strncmp(n, p, len) == 0 && (n[len] == '\0' || n[len] == ' '))
			return 1;
		p += len;
	}
	return 0;
}

/* Checks the table under heading; returns how many frame types it lists. */
static int
pd_phase_table(const char *doc, const char *heading, int nphases,
    pd_verdict_fn verdict, pd_phase_name_fn name, uint8_t *listed)
{
	const char	*p = strstr(doc, heading), *q;
	char		 names[256], taken[128], stale[128], one[32];
	int		 rows = 0, ph, t;
	size_t		 len;

	if (p == NULL)
		return -1;
	p = strchr(p, '\n');
	p = p != NULL ? strchr(p + 1, '\n') : NULL;	/* the |---| line */
	while (p != NULL && p[1] == '|') {
		q = pd_cell(p + 2, names, sizeof(names));
		q = q != NULL ? pd_cell(q, taken, sizeof(taken)) : NULL;
		if (q == NULL || pd_cell(q, stale, sizeof(stale)) == NULL)
			return -1;
		for (q = names; *q != '\0'; q += strspn(q, ", ")) {
			len = strcspn(q, ",");
			snprintf(one, sizeof(one), "%.*s", (int)len, q);
			q += len;
			for (t = 1; t < 256; t++)
				if (strcmp(ap_type_name(t), one) == 0)
					break;
			if (t == 256) {
				fprintf(stderr, "# %s: no frame type %s\n",
				    DOC, one);
				return -1;
			}
			listed[t] = 1;
			rows++;
			for (ph = 0; ph < nphases; ph++) {
				enum ap_verdict want = pd_cell_has(taken, name,
				    ph) ? AP_TAKE : pd_cell_has(stale, name,
				    ph) ? AP_STALE : AP_ILLEGAL;
				if (verdict(ph, (uint8_t)t) == want)
					continue;
				fprintf(stderr, "# %s: %s while %s: the document "
				    "says %d, phase.c %d\n", DOC, one, name(ph),
				    want, verdict(ph, (uint8_t)t));
				return -1;
			}
		}
		p = strchr(p + 1, '\n');
	}
	/* Every frame this side takes or drops anywhere is in a row. */
	for (t = 1; t < 256; t++)
		for (ph = 0; ph < nphases; ph++)
			if (!listed[t] && verdict(ph, (uint8_t)t) != AP_ILLEGAL) {
				fprintf(stderr, "# %s: %s is missing from the "
				    "table \"%s\"\n", DOC, ap_type_name(t),
				    heading);
				return -1;
			}
	return rows;
}

TEST(protodoc_phase_tables_are_phase_c)
{
	char	*doc = pd_slurp(DOC);
	uint8_t	 host[256] = { 0 }, agent[256] = { 0 };

	CHECK(doc != NULL);
	if (doc == NULL)
		return;
	CHECK(pd_phase_table(doc, "| frame from the agent |", HP_NPHASES,
	    pd_host_verdict, pd_host_phase, host) > 0);
	CHECK(pd_phase_table(doc, "| frame from dtrun |", AGP_NPHASES,
	    pd_agent_verdict, pd_agent_phase, agent) > 0);
	free(doc);
}
