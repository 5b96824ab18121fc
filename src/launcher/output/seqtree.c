/*
 * seqtree.c -- a sequence as a treap with sizes, stops and least keys
 * (seqtree.h). Every change fixes the counts from the changed node up to
 * the root; rotations keep a subtree's nodes, so what is above them stays
 * right.
 */
#include "launcher/output/seqtree.h"

/* Nodes in x's subtree (0 for none). */
static uint32_t
seq_size(const struct seqnode *x)
{
	return x != NULL ? x->size : 0;
}

/* The node of lesser key of a and b, either may be NULL. */
static struct seqnode *
seq_lesser(struct seqnode *a, struct seqnode *b)
{
	if (a == NULL)
		return b;
	return b != NULL && b->key < a->key ? b : a;
}

/* Recounts x from its children. */
static void
seq_fix(struct seqnode *x)
{
	struct seqnode	*l = x->kid[0], *r = x->kid[1];

	x->size = 1 + seq_size(l) + seq_size(r);
	x->nstop = (x->stop != 0) + (l ? l->nstop : 0) + (r ? r->nstop : 0);
	x->least = seq_lesser(seq_lesser(x, l ? l->least : NULL),
	    r ? r->least : NULL);
}

/* Recounts x and every node above it. */
static void
seq_fix_up(struct seqnode *x)
{
	for (; x != NULL; x = x->up)
		seq_fix(x);
}

/* Puts x (may be NULL) where old was, under p (NULL: at the root). */
static void
seq_relink(struct seqtree *t, struct seqnode *p, struct seqnode *old,
    struct seqnode *x)
{
	if (x != NULL)
		x->up = p;
	if (p == NULL)
		t->root = x;
	else
		p->kid[p->kid[1] == old] = x;
}

/* Makes x take its parent's place, the parent becoming its child. */
static void
seq_rotate_up(struct seqtree *t, struct seqnode *x)
{
	struct seqnode	*p = x->up, *g = p->up;
	int		 d = p->kid[1] == x;

	p->kid[d] = x->kid[!d];
	if (p->kid[d] != NULL)
		p->kid[d]->up = p;
	x->kid[!d] = p;
	p->up = x;
	seq_relink(t, g, p, x);
	seq_fix(p);
	seq_fix(x);
}

/* The first node of x's subtree. */
static struct seqnode *
seq_leftmost(struct seqnode *x)
{
	while (x != NULL && x->kid[0] != NULL)
		x = x->kid[0];
	return x;
}

struct seqnode *
seq_first(const struct seqtree *t)
{
	return seq_leftmost(t->root);
}

void
seq_insert(struct seqtree *t, struct seqnode *prev, struct seqnode *n)
{
	struct seqnode	*p;
	int		 d;

	t->seed ^= t->seed << 13;	/* xorshift32 */
	t->seed ^= t->seed >> 17;
	t->seed ^= t->seed << 5;
	if (t->seed == 0)
		t->seed = 2463534242u;
	n->prio = t->seed;
	n->kid[0] = n->kid[1] = NULL;
	/* Right after prev: its right child, or the first of its right subtree. */
	if (prev == NULL) {
		p = seq_leftmost(t->root);
		d = 0;
	} else if (prev->kid[1] == NULL) {
		p = prev;
		d = 1;
	} else {
		p = seq_leftmost(prev->kid[1]);
		d = 0;
	}
	n->up = p;
	if (p == NULL)
		t->root = n;
	else
		p->kid[d] = n;
	seq_fix_up(n);
	while (n->up != NULL && n->up->prio < n->prio)
		seq_rotate_up(t, n);
}

void
seq_remove(struct seqtree *t, struct seqnode *n)
{
	struct seqnode	*c, *p;

	/* Down to at most one child, rotating the likelier root above it. */
	while (n->kid[0] != NULL && n->kid[1] != NULL)
		seq_rotate_up(t, n->kid[n->kid[1]->prio > n->kid[0]->prio]);
	c = n->kid[0] != NULL ? n->kid[0] : n->kid[1];
	p = n->up;
	seq_relink(t, p, n, c);
	seq_fix_up(p);
	n->up = n->kid[0] = n->kid[1] = NULL;
}

void
seq_set_stop(struct seqtree *t, struct seqnode *n, int stop)
{
	if ((n->stop != 0) == (stop != 0))
		return;
	n->stop = stop != 0;
	seq_fix_up(n);
}

/* How many nodes come before the first stop (all of them when there is none). */
static size_t
seq_before_stop(const struct seqtree *t)
{
	const struct seqnode	*x = t->root;
	size_t			 before = 0;

	if (x == NULL || x->nstop == 0)
		return seq_size(x);
	for (;;) {
		if (x->kid[0] != NULL && x->kid[0]->nstop > 0)
			x = x->kid[0];
		else if (x->stop)
			return before + seq_size(x->kid[0]);
		else {
			before += seq_size(x->kid[0]) + 1;
			x = x->kid[1];
		}
	}
}

struct seqnode *
seq_least_of_run(const struct seqtree *t, size_t max)
{
	struct seqnode	*x = t->root, *best = NULL;
	size_t		 k = seq_before_stop(t);

	if (k > max)
		k = max;
	if (k == 0)
		return seq_first(t);
	/* The least of the first k: whole left subtrees, then x, then right. */
	while (x != NULL && k > 0) {
		if (k <= seq_size(x->kid[0])) {
			x = x->kid[0];
			continue;
		}
		if (x->kid[0] != NULL)
			best = seq_lesser(best, x->kid[0]->least);
		best = seq_lesser(best, x);
		k -= seq_size(x->kid[0]) + 1;
		x = x->kid[1];
	}
	return best;
}
