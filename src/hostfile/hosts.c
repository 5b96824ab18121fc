/*
 * hosts.c -- the ordered host set: adding a host (merging a repeated name
 * into its first entry), finding one by name through a hash table, and
 * freeing. The parsers in hostfile.c, slurm.c and config.c feed it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strs.h"
#include "hostfile/hf_impl.h"
#include "hostfile/hosts.h"

void
hf_hosts_init(struct hf_hosts *hs)
{
	memset(hs, 0, sizeof(*hs));
}

void
hf_hosts_free(struct hf_hosts *hs)
{
	hf_here_fn	here = hs->here;
	size_t		i;

	for (i = 0; i < hs->n; i++)
		hosts_host_free(&hs->v[i]);
	free(hs->v);
	free(hs->ht);
	dt_strs_free(hs->notes, hs->nnotes);
	dt_strs_free(hs->files, hs->nfiles);
	hf_hosts_init(hs);
	hs->here = here;	/* the caller's setting, not a host */
}

void
hosts_host_free(struct hf_host *h)
{
	free(h->name);
	free(h->user);
	free(h->slot_ids);
}

/* FNV-1a over name[0..len). */
static size_t
hosts_hash(const char *name, size_t len)
{
	size_t	h = 1469598103934665603ULL & (size_t)-1, i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)name[i];
		h *= 1099511628211ULL & (size_t)-1;
	}
	return h;
}

/* The hash slot of name: its entry, or the empty slot where it would go. */
static size_t
hosts_slot(const struct hf_hosts *hs, const char *name, size_t len)
{
	size_t	i = hosts_hash(name, len) & (hs->htcap - 1), k;

	while ((k = hs->ht[i]) != 0) {
		if (strncmp(hs->v[k - 1].name, name, len) == 0 &&
		    hs->v[k - 1].name[len] == '\0')
			break;
		i = (i + 1) & (hs->htcap - 1);
	}
	return i;
}

/* Rebuilds the table at cap slots. */
static int
hosts_rehash(struct hf_hosts *hs, size_t cap)
{
	size_t	i;

	free(hs->ht);
	if ((hs->ht = calloc(cap, sizeof(*hs->ht))) == NULL) {
		hs->htcap = 0;
		return DT_ERR_NOMEM;
	}
	hs->htcap = cap;
	for (i = 0; i < hs->n; i++)
		hs->ht[hosts_slot(hs, hs->v[i].name, strlen(hs->v[i].name))] =
		    i + 1;
	return 0;
}

int
hosts_reindex(struct hf_hosts *hs)
{
	size_t	cap = 64;

	while (cap < hs->n * 2 + 2)
		cap *= 2;
	return hosts_rehash(hs, cap);
}

long
hf_hosts_find(const struct hf_hosts *hs, const char *name)
{
	size_t	k;

	if (hs->htcap == 0)
		return -1;
	k = hs->ht[hosts_slot(hs, name, strlen(name))];
	return k == 0 ? -1 : (long)k - 1;
}

const char *
hosts_intern(char ***files, size_t *n, const char *file)
{
	size_t	i;

	if (file == NULL)
		return NULL;
	for (i = *n; i-- > 0;)
		if (strcmp((*files)[i], file) == 0)
			return (*files)[i];
	if (dt_strs_push(files, n, strdup(file)) != 0)
		return NULL;
	return (*files)[*n - 1];
}

const char *
hosts_file(struct hf_hosts *hs, const char *file)
{
	return hosts_intern(&hs->files, &hs->nfiles, file);
}

int
hosts_copy(struct hf_host *dst, const struct hf_host *src, char ***files,
    size_t *nfiles)
{
	*dst = *src;
	dst->user = dst->name = NULL;
	dst->slot_ids = NULL;
	if ((dst->name = strdup(src->name)) == NULL)
		return DT_ERR_NOMEM;
	if (src->user != NULL && (dst->user = strdup(src->user)) == NULL)
		return DT_ERR_NOMEM;
	if (src->slot_ids != NULL) {
		dst->slot_ids = malloc(src->nslot_ids * sizeof(*dst->slot_ids));
		if (dst->slot_ids == NULL)
			return DT_ERR_NOMEM;
		memcpy(dst->slot_ids, src->slot_ids,
		    src->nslot_ids * sizeof(*dst->slot_ids));
	}
	if (src->file != NULL &&
	    (dst->file = hosts_intern(files, nfiles, src->file)) == NULL)
		return DT_ERR_NOMEM;
	return 0;
}

/* Both NULL, or equal strings. */
static int
hosts_same(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

/* The hint for two names of this machine that cannot merge. */
#define HOSTS_SIMULATE	"; every name of this machine is one host: to " \
	"simulate several hosts here, give them names of their own with " \
	"--launcher local (-H a:2,b:2 --launcher local)"

/*
 * Merges t (the repeat of h, or with as != NULL another name of this
 * machine) into its first entry h, by Open MPI's hostfile rules
 * (orte/prrte hostfile.c): a repeat adds one slot, a second slot count is
 * refused, and a max_slots on the repeat replaces the limit if it is not
 * below the slots. Unlike Open MPI, a repeat may not take the slots past
 * max_slots: dtrun promises never to go past it.
 */
static int
hosts_merge(struct hf_hosts *hs, struct hf_host *h, const struct hf_host *t,
    const char *as, struct dt_err *e)
{
	char	what[2 * HF_NAME_MAX + 64], at[HF_NAME_MAX + 64];
	int	n = h->slots + 1;

	if (as == NULL)
		snprintf(what, sizeof(what), "host \"%s\" listed again",
		    h->name);
	else
		snprintf(what, sizeof(what), "host \"%s\" names this machine "
		    "as \"%s\" does", as, h->name);
	snprintf(at, sizeof(at), "(first at %s:%d)", h->file, h->line);
	if (!hosts_same(h->user, t->user) || h->port != t->port)
		return dt_errf(e, t->file, t->line, t->col, DT_ERR_INVAL,
		    "%s with a different %s %s; repeated hosts merge their "
		    "slots only when user and port agree", what,
		    h->port != t->port ? "port" : "user", at);
	if (t->slots_set)
		return dt_errf(e, t->file, t->line, t->col, DT_ERR_INVAL,
		    "%s with a slot count %s; as in Open MPI, give one line "
		    "with slots=N, or one line per slot without%s", what, at,
		    as != NULL ? HOSTS_SIMULATE : "");
	if (n > HF_SLOTS_MAX)
		return dt_errf(e, t->file, t->line, t->col, DT_ERR_RANGE,
		    "%s %s: merged slots %d are more than %d", what, at, n,
		    HF_SLOTS_MAX);
	if (t->max_slots != 0 && t->max_slots < n)
		return dt_errf(e, t->file, t->line, t->col, DT_ERR_RANGE,
		    "%s %s: max_slots=%d is less than its %d slots", what, at,
		    t->max_slots, n);
	if (t->max_slots != 0)
		h->max_slots = t->max_slots;
	if (h->max_slots != 0 && n > h->max_slots)
		return dt_errf(e, t->file, t->line, t->col, DT_ERR_RANGE,
		    "%s %s: %d slots would pass its max_slots=%d", what, at, n,
		    h->max_slots);
	h->slots = n;
	h->slots_set = 1;	/* a repeat is a count, as in Open MPI */
	if (as != NULL)
		return hfi_note(&hs->notes, &hs->nnotes, "%s:%d: %s names this "
		    "machine, as %s %s does: one host, slots merged to %d",
		    t->file, t->line, as, h->name, at, h->slots);
	return hfi_note(&hs->notes, &hs->nnotes, "%s:%d: %s listed again %s, "
	    "slots merged to %d", t->file, t->line, h->name, at, h->slots);
}

/* Merges t, called name[0..len), into the first host that is this machine. */
static int
hosts_merge_here(struct hf_hosts *hs, const char *name, size_t len,
    const struct hf_host *t, struct dt_err *e)
{
	char	*as;
	int	 r;

	if ((as = hfi_strndup(name, len)) == NULL)
		return dt_errf(e, t->file, t->line, t->col, DT_ERR_NOMEM,
		    "out of memory adding host %zu", hs->n + 1);
	r = hosts_merge(hs, &hs->v[hs->here_first - 1], t, as, e);
	free(as);
	return r;
}

/* True if name[0..len) names this machine, by the caller's hs->here. */
static int
hosts_here(const struct hf_hosts *hs, const char *name, size_t len)
{
	char	*s;
	int	 r;

	if (hs->here == NULL || (s = hfi_strndup(name, len)) == NULL)
		return 0;
	r = hs->here(s);
	free(s);
	return r;
}

int
hosts_add(struct hf_hosts *hs, const char *name, size_t len,
    const struct hf_host *t, struct dt_err *e)
{
	struct hf_host	*nv, *h;
	size_t		 cap, i;
	int		 r, here;

	if (hs->htcap == 0 || (hs->n + 1) * 2 > hs->htcap)
		if ((r = hosts_rehash(hs, hs->htcap ? hs->htcap * 2 : 64)) != 0)
			goto nomem;
	i = hosts_slot(hs, name, len);
	if (hs->ht[i] != 0)
		return hosts_merge(hs, &hs->v[hs->ht[i] - 1], t, NULL, e);
	if ((here = hosts_here(hs, name, len)) && hs->here_first != 0)
		return hosts_merge_here(hs, name, len, t, e);
	if (hs->n == hs->cap) {
		cap = hs->cap ? hs->cap * 2 : 16;
		if ((nv = realloc(hs->v, cap * sizeof(*nv))) == NULL)
			goto nomem;
		hs->v = nv;
		hs->cap = cap;
	}
	h = &hs->v[hs->n];
	*h = *t;
	h->slot_ids = NULL;
	h->nslot_ids = 0;
	h->user = NULL;
	/* Open MPI: max_slots without slots gives that many slots. */
	if (!h->slots_set && h->max_slots != 0) {
		h->slots = h->max_slots;
		h->slots_set = 1;
	}
	if ((h->name = hfi_strndup(name, len)) == NULL)
		goto nomem;
	if (t->user != NULL && (h->user = strdup(t->user)) == NULL) {
		free(h->name);
		goto nomem;
	}
	hs->ht[i] = ++hs->n;
	if (here)
		hs->here_first = hs->n;
	return 0;
nomem:
	return dt_errf(e, t->file, t->line, t->col, DT_ERR_NOMEM,
	    "out of memory adding host %zu", hs->n + 1);
}
