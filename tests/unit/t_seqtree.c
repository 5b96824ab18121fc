/* t_seqtree.c -- the tree behind collapse's pops, against a plain array doing the same. */
#include <stdint.h>
#include <string.h>

#include "launcher/output/seqtree.h"
#include "test.h"

#define SEQ_N	600

/* The same sequence as an array: what the tree must answer. */
struct model {
	struct seqnode	*at[SEQ_N];
	size_t		 n;
};

/* The least key of the first nodes, up to max and the first stop (as seq_least_of_run). */
static struct seqnode *
model_least(const struct model *m, size_t max)
{
	struct seqnode	*best;
	size_t		 i;

	if (m->n == 0)
		return NULL;
	best = m->at[0];
	for (i = 0; i < m->n && i < max && !m->at[i]->stop; i++)
		if (m->at[i]->key < best->key)
			best = m->at[i];
	return best;
}

/* The tree's nodes in order, walked by hand, must be the array's. */
static int
tree_is(const struct seqnode *x, const struct model *m, size_t *i)
{
	if (x == NULL)
		return 1;
	if (!tree_is(x->kid[0], m, i))
		return 0;
	if (*i >= m->n || m->at[*i] != x)
		return 0;
	(*i)++;
	return tree_is(x->kid[1], m, i);
}

TEST(seqtree_empty_and_one)
{
	struct seqtree	t = { NULL, 0 };
	struct seqnode	a = { .key = 5 }, b = { .key = 3, .stop = 1 };

	CHECK(seq_least_of_run(&t, 10) == NULL);
	CHECK(seq_first(&t) == NULL);
	seq_insert(&t, NULL, &a);
	CHECK(seq_least_of_run(&t, 10) == &a);
	/* A stop first is the answer, whatever its key. */
	seq_insert(&t, NULL, &b);
	CHECK(seq_least_of_run(&t, 10) == &b);
	seq_set_stop(&t, &b, 0);
	CHECK(seq_least_of_run(&t, 10) == &b);
	CHECK(seq_least_of_run(&t, 0) == &b);
	seq_remove(&t, &b);
	CHECK(seq_least_of_run(&t, 10) == &a);
	seq_remove(&t, &a);
	CHECK(t.root == NULL);
}

/*
 * Thousands of random inserts (after a random node, or first), removals and
 * stop changes, as collapse makes them: after each, the order, the counts
 * and every answer for a few max are the array's.
 */
TEST(seqtree_random_changes_match_an_array)
{
	static struct seqnode	 nodes[SEQ_N];
	static struct model	 m;
	static int		 live[SEQ_N];
	static const size_t	 maxes[] = { 0, 1, 2, 7, 64, SEQ_N };
	struct seqtree		 t = { NULL, 0 };
	struct seqnode		*n;
	uint32_t		 x = 12345;
	size_t			 i, j, step, bad = 0;

#define RND(n)	((x = x * 1103515245u + 12345u), (x >> 16) % (n))
	memset(&m, 0, sizeof(m));
	for (step = 0; step < 20000; step++) {
		j = RND(10);
		if (m.n > 0 && (j < 3 || m.n == SEQ_N)) {
			/* Remove one; its node may come back with a new key. */
			i = RND(m.n);
			live[m.at[i] - nodes] = 0;
			seq_remove(&t, m.at[i]);
			memmove(&m.at[i], &m.at[i + 1],
			    (m.n - i - 1) * sizeof(m.at[0]));
			m.n--;
		} else if (m.n > 0 && j < 5) {
			n = m.at[RND(m.n)];
			seq_set_stop(&t, n, RND(5) == 0);
		} else {
			for (j = RND(SEQ_N); live[j]; j = (j + 1) % SEQ_N)
				;
			live[j] = 1;
			n = &nodes[j];
			n->key = RND(1000000);
			n->stop = RND(8) == 0;
			i = RND(m.n + 1);	/* its place: after at[i - 1] */
			seq_insert(&t, i > 0 ? m.at[i - 1] : NULL, n);
			memmove(&m.at[i + 1], &m.at[i],
			    (m.n - i) * sizeof(m.at[0]));
			m.at[i] = n;
			m.n++;
		}
		i = 0;
		if (!tree_is(t.root, &m, &i) || i != m.n ||
		    (t.root != NULL && (t.root->size != m.n || t.root->up)))
			bad++;
		if (seq_first(&t) != (m.n ? m.at[0] : NULL))
			bad++;
		for (j = 0; j < sizeof(maxes) / sizeof(maxes[0]); j++)
			if (seq_least_of_run(&t, maxes[j]) !=
			    model_least(&m, maxes[j]))
				bad++;
	}
	CHECK_INT(bad, 0);
#undef RND
}
