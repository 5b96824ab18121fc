/*
 * filter.c -- DeepSpeed's --include/--exclude ("host1:0,1@host2"): keep or
 * drop whole hosts, or single device ids of a host.
 *
 * A host named twice in --include ("w@w:2", "w:0@w:1") is refused:
 * DeepSpeed's own versions disagree on it (older ones keep the last item,
 * newer ones join the id lists and let "w:2" narrow a bare "w"), so any
 * answer would surprise someone. --exclude only removes, so repeats there
 * (of a host or an id) simply remove the union, in every version.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hostfile/hf_impl.h"
#include "hostfile/hosts.h"

#define IDS_WORDS	(HF_SLOTS_MAX / 64)

/* What one filter item chose on one host. */
struct filter_pick {
	int		 all;			/* the whole host */
	uint64_t	*ids;			/* or these ids (lazily made) */
	int		 col;			/* where it was named; 0 = not */
};

/* The filter being read. */
struct filter_state {
	struct hf_hosts		*hs;
	struct filter_pick	*pick;		/* one per host */
	const char		*opt;		/* "--include" or "--exclude" */
	int			 include;
	const char		*spec;
	size_t			 off;		/* current item */
	size_t			 colon;		/* its ":", or its end */
	size_t			 end;
	struct dt_err		*e;
};

/* Nonzero if device id is one of host h's. */
static int
filter_has(const struct hf_host *h, long id)
{
	int	i;

	if (h->slot_ids == NULL)
		return id < h->slots;
	for (i = 0; i < h->nslot_ids; i++)
		if (h->slot_ids[i] == id)
			return 1;
	return 0;
}

/* hfi_expand's callback: records the item's choice on host name. */
static int
filter_name(const char *name, size_t len, void *arg)
{
	struct filter_state	*st = arg;
	struct filter_pick	*pk;
	struct hf_host		*h;
	const char		*s = st->spec;
	size_t			 i, j;
	long			 k, id;

	if ((k = hf_hosts_find(st->hs, name)) < 0)
		return dt_errf(st->e, st->opt, 1, (int)st->off + 1,
		    DT_ERR_NOTFOUND, "host \"%s\" is not in the host list",
		    name);
	pk = &st->pick[k];
	h = &st->hs->v[k];
	if (pk->col != 0 && st->include)
		return dt_errf(st->e, st->opt, 1, (int)st->off + 1,
		    DT_ERR_INVAL, "host \"%s\" is named twice (first at "
		    "column %d): name each host once, with all its device ids "
		    "(\"%s:0,2\")", name, pk->col, name);
	pk->col = (int)st->off + 1;
	if (st->colon == st->end) {
		pk->all = 1;
		return 0;
	}
	if (pk->ids == NULL &&
	    (pk->ids = calloc(IDS_WORDS, sizeof(*pk->ids))) == NULL)
		return dt_errf(st->e, st->opt, 1, 0, DT_ERR_NOMEM,
		    "out of memory");
	for (i = st->colon + 1; i <= st->end; i = j + 1) {
		for (j = i; j < st->end && s[j] != ','; j++)
			;
		if (hfi_uint(s + i, j - i, HF_SLOTS_MAX - 1, &id) != 0)
			return dt_errf(st->e, st->opt, 1, (int)i + 1,
			    DT_ERR_PARSE, "bad device id \"%.*s\" (want "
			    "host:0,1@host2)", (int)(j - i), s + i);
		if (!filter_has(h, id))
			return dt_errf(st->e, st->opt, 1, (int)i + 1,
			    DT_ERR_NOTFOUND, "host \"%s\" has no device id %ld "
			    "(it has %d slots)", name, id, h->slots);
		pk->ids[id / 64] |= 1ULL << (id % 64);
	}
	return 0;
}

/* Applies the picks: include keeps them, exclude drops them. */
static int
filter_apply(struct filter_state *st, int include)
{
	struct hf_hosts		*hs = st->hs;
	struct hf_host		*h;
	struct filter_pick	*pk;
	int			*ids, n, i, id, picked;
	size_t			 k, out = 0;

	for (k = 0; k < hs->n; k++) {
		h = &hs->v[k];
		pk = &st->pick[k];
		if ((ids = calloc(h->slots, sizeof(*ids))) == NULL) {
			memmove(&hs->v[out], h, (hs->n - k) * sizeof(*h));
			hs->n = out + (hs->n - k);
			hosts_reindex(hs);
			return dt_errf(st->e, st->opt, 0, 0, DT_ERR_NOMEM,
			    "out of memory");
		}
		for (n = i = 0; i < h->slots; i++) {
			id = h->slot_ids != NULL ? h->slot_ids[i] : i;
			/* Ids are named below HF_SLOTS_MAX; Slurm's hosts
			   may have more slots than that. */
			picked = pk->all || (pk->ids != NULL &&
			    id < HF_SLOTS_MAX &&
			    (pk->ids[id / 64] >> (id % 64) & 1));
			if (picked == include)
				ids[n++] = id;
		}
		if (n == 0) {
			free(ids);
			hosts_host_free(h);
			continue;
		}
		if (n == h->slots && h->slot_ids == NULL) {
			free(ids);
		} else {
			free(h->slot_ids);
			h->slot_ids = ids;
			h->nslot_ids = h->slots = n;
			h->slots_set = 1;
		}
		hs->v[out++] = *h;
	}
	hs->n = out;
	if (out == 0)
		return dt_errf(st->e, st->opt, 0, 0, DT_ERR_INVAL,
		    "\"%s\" leaves no hosts", st->spec);
	return hosts_reindex(hs) == 0 ? 0 : dt_errf(st->e, st->opt, 0, 0,
	    DT_ERR_NOMEM, "out of memory");
}

int
hf_filter(struct hf_hosts *hs, const char *include, const char *exclude,
    struct dt_err *e)
{
	struct filter_state	 st;
	size_t			 len, k, n0 = hs->n, budget = HF_EXPAND_MAX;
	long			 r = 0;

	if (include != NULL && *include == '\0')
		include = NULL;
	if (exclude != NULL && *exclude == '\0')
		exclude = NULL;
	if (include == NULL && exclude == NULL)
		return 0;
	if (include != NULL && exclude != NULL)
		return dt_errf(e, "--include", 0, 0, DT_ERR_INVAL, "--include "
		    "and --exclude cannot be used together");
	memset(&st, 0, sizeof(st));
	st.hs = hs;
	st.e = e;
	st.include = include != NULL;
	st.opt = st.include ? "--include" : "--exclude";
	st.spec = include != NULL ? include : exclude;
	len = strlen(st.spec);
	if (hs->n == 0)
		return dt_errf(e, st.opt, 0, 0, DT_ERR_INVAL, "there are no "
		    "hosts to filter");
	if ((st.pick = calloc(hs->n, sizeof(*st.pick))) == NULL)
		return dt_errf(e, st.opt, 0, 0, DT_ERR_NOMEM, "out of memory");
	for (st.off = 0;; st.off = st.end + 1) {
		st.end = st.off + hfi_item_end(st.spec + st.off, len - st.off,
		    '@');
		st.colon = st.off + hfi_item_end(st.spec + st.off,
		    st.end - st.off, ':');
		r = hfi_expand(st.spec + st.off, st.colon - st.off, filter_name,
		    &st, &budget, st.opt, 1, (int)st.off + 1, e);
		if (r < 0 || st.end == len)
			break;
	}
	if (r >= 0)
		r = filter_apply(&st, st.include);
	for (k = 0; k < n0; k++)
		free(st.pick[k].ids);
	free(st.pick);
	return (int)r;
}
