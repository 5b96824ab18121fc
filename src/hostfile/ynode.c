/*
 * ynode.c -- builds a YAML tree from libyaml's event stream (anchors and
 * aliases copied, within YN_NODES_MAX nodes so alias bombs stop), and
 * merges a template under a config the way Determined does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "hostfile/hf_impl.h"
#include "hostfile/ynode.h"

/* An anchor and the node it names. */
struct yn_anchor {
	char		*name;
	struct ynode	*node;
};

/* The parser state. */
struct yn_parser {
	yaml_parser_t		 yp;
	const char		*file;
	struct yn_anchor	*anchors;
	size_t			 nanchors;
	size_t			 nnodes;
	struct dt_err		*e;
};

void
ynode_free(struct ynode *n)
{
	struct ynode	*c, *next;

	if (n == NULL)
		return;
	for (c = n->child; c != NULL; c = next) {
		next = c->next;
		ynode_free(c);
	}
	free(n->str);
	free(n->key);
	free(n);
}

int
ynode_isnull(const struct ynode *n)
{
	return n->type == YN_SCALAR && n->plain && (n->str[0] == '\0' ||
	    strcmp(n->str, "~") == 0 || strcmp(n->str, "null") == 0 ||
	    strcmp(n->str, "Null") == 0 || strcmp(n->str, "NULL") == 0);
}

const char *
ynode_kind(const struct ynode *n)
{
	static const char *const kinds[] = { "a string", "a list", "a map" };

	return ynode_isnull(n) ? "null" : kinds[n->type];
}

/* Appends c to the children of n. */
static void
yn_append(struct ynode *n, struct ynode *c)
{
	c->next = NULL;
	if (n->last != NULL)
		n->last->next = c;
	else
		n->child = c;
	n->last = c;
}

/* A new node at mark, counted against the budget. */
static struct ynode *
yn_new(struct yn_parser *p, int type, yaml_mark_t mark, int *r)
{
	struct ynode	*n;

	if (++p->nnodes > YN_NODES_MAX) {
		*r = dt_errf(p->e, p->file, (int)mark.line + 1,
		    (int)mark.column + 1, DT_ERR_RANGE, "more than %d YAML "
		    "nodes (aliases count each time they are used)",
		    YN_NODES_MAX);
		return NULL;
	}
	if ((n = calloc(1, sizeof(*n))) == NULL) {
		*r = dt_errf(p->e, p->file, 0, 0, DT_ERR_NOMEM, "out of memory");
		return NULL;
	}
	n->type = type;
	n->file = p->file;
	n->line = (int)mark.line + 1;
	n->col = (int)mark.column + 1;
	return n;
}

/* Copies n for an alias, counting the copies against the budget. */
static struct ynode *
yn_copy(struct yn_parser *p, const struct ynode *n, yaml_mark_t mark, int *r)
{
	struct ynode	*c, *k;
	const struct ynode *s;

	if ((c = yn_new(p, n->type, mark, r)) == NULL)
		return NULL;
	c->line = n->line;
	c->col = n->col;
	c->plain = n->plain;
	if (n->str != NULL && (c->str = strdup(n->str)) == NULL)
		goto nomem;
	for (s = n->child; s != NULL; s = s->next) {
		if ((k = yn_copy(p, s, mark, r)) == NULL)
			goto fail;
		yn_append(c, k);
		k->kline = s->kline;
		k->kcol = s->kcol;
		if (s->key != NULL && (k->key = strdup(s->key)) == NULL)
			goto nomem;
	}
	return c;
nomem:
	*r = dt_errf(p->e, p->file, 0, 0, DT_ERR_NOMEM, "out of memory");
fail:
	ynode_free(c);
	return NULL;
}

/* Reports libyaml's error. */
static int
yn_syntax(struct yn_parser *p)
{
	const yaml_parser_t	*yp = &p->yp;

	if (yp->error == YAML_MEMORY_ERROR)
		return dt_errf(p->e, p->file, 0, 0, DT_ERR_NOMEM,
		    "out of memory");
	char	from[64] = "";

	if (yp->context != NULL &&
	    yp->context_mark.line != yp->problem_mark.line)
		snprintf(from, sizeof(from), " (from line %d column %d)",
		    (int)yp->context_mark.line + 1,
		    (int)yp->context_mark.column + 1);
	return dt_errf(p->e, p->file, (int)yp->problem_mark.line + 1,
	    (int)yp->problem_mark.column + 1, DT_ERR_PARSE, "YAML: %s%s%s%s",
	    yp->problem != NULL ? yp->problem : "syntax error",
	    yp->context != NULL ? " " : "",
	    yp->context != NULL ? yp->context : "", from);
}

/* Reads the next event; returns 0 or the syntax error. */
static int
yn_event(struct yn_parser *p, yaml_event_t *ev)
{
	if (!yaml_parser_parse(&p->yp, ev))
		return yn_syntax(p);
	return 0;
}

/* Remembers anchor (may be NULL) as naming n. */
static int
yn_anchor(struct yn_parser *p, const yaml_char_t *anchor, struct ynode *n)
{
	struct yn_anchor	*na;

	if (anchor == NULL)
		return 0;
	na = realloc(p->anchors, (p->nanchors + 1) * sizeof(*na));
	if (na == NULL)
		return dt_errf(p->e, p->file, 0, 0, DT_ERR_NOMEM,
		    "out of memory");
	p->anchors = na;
	if ((na[p->nanchors].name = strdup((const char *)anchor)) == NULL)
		return dt_errf(p->e, p->file, 0, 0, DT_ERR_NOMEM,
		    "out of memory");
	na[p->nanchors++].node = n;
	return 0;
}

static int	yn_node(struct yn_parser *, yaml_event_t *, struct ynode **,
		    int);

/* Reads a map's entries after its start event into n. */
static int
yn_map(struct yn_parser *p, struct ynode *n, int depth)
{
	yaml_event_t	 ev, kev;
	struct ynode	*v, *c;
	size_t		 nkeys = 0;
	int		 r;

	for (;;) {
		if ((r = yn_event(p, &ev)) != 0)
			return r;
		if (ev.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&ev);
			return 0;
		}
		if (ev.type != YAML_SCALAR_EVENT) {
			r = dt_errf(p->e, p->file, (int)ev.start_mark.line + 1,
			    (int)ev.start_mark.column + 1, DT_ERR_PARSE,
			    "map keys must be plain strings");
			yaml_event_delete(&ev);
			return r;
		}
		if (++nkeys > YN_KEYS_MAX) {
			r = dt_errf(p->e, p->file, (int)ev.start_mark.line + 1,
			    (int)ev.start_mark.column + 1, DT_ERR_RANGE,
			    "more than %d keys in one map", YN_KEYS_MAX);
			yaml_event_delete(&ev);
			return r;
		}
		for (c = n->child; c != NULL; c = c->next)
			if (strcmp(c->key, (char *)ev.data.scalar.value) == 0)
				break;
		if (c != NULL) {
			r = dt_errf(p->e, p->file, (int)ev.start_mark.line + 1,
			    (int)ev.start_mark.column + 1, DT_ERR_PARSE,
			    "key \"%.64s\" given twice (first at line %d)",
			    (char *)ev.data.scalar.value, c->kline);
			yaml_event_delete(&ev);
			return r;
		}
		kev = ev;
		if ((r = yn_event(p, &ev)) != 0) {
			yaml_event_delete(&kev);
			return r;
		}
		if ((r = yn_node(p, &ev, &v, depth + 1)) != 0) {
			yaml_event_delete(&kev);
			return r;
		}
		v->key = strdup((char *)kev.data.scalar.value);
		v->kline = (int)kev.start_mark.line + 1;
		v->kcol = (int)kev.start_mark.column + 1;
		yaml_event_delete(&kev);
		yn_append(n, v);
		if (v->key == NULL)
			return dt_errf(p->e, p->file, 0, 0, DT_ERR_NOMEM,
			    "out of memory");
	}
}

/* Reads a sequence's items after its start event into n. */
static int
yn_seq(struct yn_parser *p, struct ynode *n, int depth)
{
	yaml_event_t	 ev;
	struct ynode	*v;
	int		 r;

	for (;;) {
		if ((r = yn_event(p, &ev)) != 0)
			return r;
		if (ev.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&ev);
			return 0;
		}
		if ((r = yn_node(p, &ev, &v, depth + 1)) != 0)
			return r;
		yn_append(n, v);
	}
}

/* Builds the node that event ev starts (consuming ev) into *out. */
static int
yn_node(struct yn_parser *p, yaml_event_t *ev, struct ynode **out, int depth)
{
	struct ynode	*n = NULL;
	const yaml_char_t *anchor = NULL;
	size_t		 i;
	int		 r = 0;

	*out = NULL;
	if (depth > YN_DEPTH_MAX) {
		r = dt_errf(p->e, p->file, (int)ev->start_mark.line + 1,
		    (int)ev->start_mark.column + 1, DT_ERR_RANGE, "nested more "
		    "than %d deep", YN_DEPTH_MAX);
		goto out;
	}
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		if ((n = yn_new(p, YN_SCALAR, ev->start_mark, &r)) == NULL)
			goto out;
		n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		n->str = hfi_strndup((char *)ev->data.scalar.value,
		    ev->data.scalar.length);
		if (n->str == NULL)
			r = dt_errf(p->e, p->file, 0, 0, DT_ERR_NOMEM,
			    "out of memory");
		anchor = ev->data.scalar.anchor;
		break;
	case YAML_SEQUENCE_START_EVENT:
		if ((n = yn_new(p, YN_SEQ, ev->start_mark, &r)) == NULL)
			goto out;
		anchor = ev->data.sequence_start.anchor;
		r = yn_seq(p, n, depth);
		break;
	case YAML_MAPPING_START_EVENT:
		if ((n = yn_new(p, YN_MAP, ev->start_mark, &r)) == NULL)
			goto out;
		anchor = ev->data.mapping_start.anchor;
		r = yn_map(p, n, depth);
		break;
	case YAML_ALIAS_EVENT:
		for (i = p->nanchors; i-- > 0;)
			if (strcmp(p->anchors[i].name,
			    (char *)ev->data.alias.anchor) == 0)
				break;
		if (i == (size_t)-1) {
			r = dt_errf(p->e, p->file, (int)ev->start_mark.line + 1,
			    (int)ev->start_mark.column + 1, DT_ERR_PARSE,
			    "unknown alias \"*%.64s\"",
			    (char *)ev->data.alias.anchor);
			goto out;
		}
		n = yn_copy(p, p->anchors[i].node, ev->start_mark, &r);
		break;
	default:
		r = dt_errf(p->e, p->file, (int)ev->start_mark.line + 1,
		    (int)ev->start_mark.column + 1, DT_ERR_PARSE,
		    "YAML: unexpected event");
		break;
	}
	if (r == 0)
		r = yn_anchor(p, anchor, n);
out:
	yaml_event_delete(ev);
	if (r != 0) {
		ynode_free(n);
		return r;
	}
	*out = n;
	return 0;
}

int
ynode_parse(const char *file, const char *buf, size_t len,
    struct ynode **root, struct dt_err *e)
{
	struct yn_parser	p;
	yaml_event_t		ev;
	size_t			i;
	int			r;

	*root = NULL;
	memset(&p, 0, sizeof(p));
	p.file = file;
	p.e = e;
	if (!yaml_parser_initialize(&p.yp))
		return dt_errf(e, file, 0, 0, DT_ERR_NOMEM, "out of memory");
	yaml_parser_set_input_string(&p.yp, (const unsigned char *)buf, len);
	/* STREAM-START, then DOCUMENT-START or STREAM-END. */
	if ((r = yn_event(&p, &ev)) != 0)
		goto out;
	yaml_event_delete(&ev);
	if ((r = yn_event(&p, &ev)) != 0)
		goto out;
	if (ev.type == YAML_STREAM_END_EVENT) {
		yaml_event_delete(&ev);
		goto out;
	}
	yaml_event_delete(&ev);
	if ((r = yn_event(&p, &ev)) != 0 ||
	    (r = yn_node(&p, &ev, root, 0)) != 0)
		goto out;
	if ((r = yn_event(&p, &ev)) != 0)	/* DOCUMENT-END */
		goto out;
	yaml_event_delete(&ev);
	if ((r = yn_event(&p, &ev)) != 0)
		goto out;
	if (ev.type != YAML_STREAM_END_EVENT)
		r = dt_errf(e, file, (int)ev.start_mark.line + 1,
		    (int)ev.start_mark.column + 1, DT_ERR_PARSE, "more than "
		    "one YAML document (remove the second \"---\")");
	yaml_event_delete(&ev);
out:
	if (r != 0) {
		ynode_free(*root);
		*root = NULL;
	}
	for (i = 0; i < p.nanchors; i++)
		free(p.anchors[i].name);
	free(p.anchors);
	yaml_parser_delete(&p.yp);
	return r;
}

struct ynode *
ynode_merge(struct ynode *c, struct ynode *t)
{
	struct ynode	*tc, *next, *cc, *prev, *m, *after;
	char		*key;
	int		 kl, kc;

	if (t == NULL)
		return c;
	/* Determined's nil: a null (or absent) value takes the template's. */
	if (c == NULL || ynode_isnull(c)) {
		ynode_free(c);
		return t;
	}
	/* Lists are not merged: the job file's, even [], replaces the template's. */
	if (c->type != YN_MAP || t->type != YN_MAP) {
		ynode_free(t);
		return c;
	}
	for (tc = t->child; tc != NULL; tc = next) {
		next = tc->next;
		for (prev = NULL, cc = c->child; cc != NULL;
		    prev = cc, cc = cc->next)
			if (strcmp(cc->key, tc->key) == 0)
				break;
		if (cc == NULL) {
			yn_append(c, tc);
			continue;
		}
		/* Replace cc by the merge of cc and tc, in place. */
		after = cc->next;
		key = cc->key;
		kl = cc->kline;
		kc = cc->kcol;
		cc->key = NULL;
		free(tc->key);
		tc->key = NULL;
		m = ynode_merge(cc, tc);
		m->key = key;
		m->kline = kl;
		m->kcol = kc;
		m->next = after;
		if (prev == NULL)
			c->child = m;
		else
			prev->next = m;
		if (after == NULL)
			c->last = m;
	}
	t->child = t->last = NULL;
	ynode_free(t);
	return c;
}
