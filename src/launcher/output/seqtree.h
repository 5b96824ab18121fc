/*
 * seqtree.h -- a sequence kept as a tree, beside a linked list it mirrors,
 * so that "of the first nodes, up to the first stop, which has the least
 * key" is answered in O(log n) instead of by walking the list.
 *
 * collapse.c keeps its held groups of a stream in one: key is a group's id
 * (its birth), stop marks a group of several ranks, and the next group to
 * go out is the oldest of the run of one-rank groups at the head.
 *
 * A treap: nodes are ordered by position (no keys compared to place them),
 * heap-ordered by a random priority, and each knows its subtree's size,
 * stops and least key. The owner embeds a seqnode in its items; no
 * allocation here.
 */
#ifndef DT_SEQTREE_H
#define DT_SEQTREE_H

#include <stddef.h>
#include <stdint.h>

struct seqnode {
	struct seqnode	*up, *kid[2];
	struct seqnode	*least;		/* of the subtree: the node of least key */
	uint32_t	 size;		/* nodes in the subtree */
	uint32_t	 nstop;		/* stops in the subtree */
	uint64_t	 key;
	uint32_t	 prio;
	int		 stop;
};

struct seqtree {
	struct seqnode	*root;
	uint32_t	 seed;		/* of the priorities */
};

/* Puts n (key and stop set, not in a tree) right after prev, or first when prev is NULL. */
void		 seq_insert(struct seqtree *, struct seqnode *prev,
		    struct seqnode *n);

/* Takes n out of the tree. */
void		 seq_remove(struct seqtree *, struct seqnode *n);

/* Sets whether n stops a run. */
void		 seq_set_stop(struct seqtree *, struct seqnode *n, int stop);

/*
 * Of the first nodes, at most max of them and none past the first stop,
 * the one of least key; the first node when that is a stop (or max is 0);
 * NULL when the tree is empty.
 */
struct seqnode	*seq_least_of_run(const struct seqtree *, size_t max);

/* The first node, or NULL. */
struct seqnode	*seq_first(const struct seqtree *);

#endif
