/*
 * stackpick.c -- which process of a rank hangs (see stackpick.h).
 *
 * An agent captures every process of a rank, each under a line
 * "== process PID, parent PPID, state S: CMD" (src/agent/stacks.c). The
 * rank is often a wrapper: bash running train.sh, sh -c, strace, conda
 * run, uv run, apptainer; or a Python process whose worker (a DataLoader's)
 * is the one stuck. The signature is the stack of the process doing the
 * work, chosen so:
 *
 *  1. A process whose main thread waits for a child (wait4, waitpid,
 *     waitid innermost) is a wrapper: never chosen. Nor is one with no
 *     frame at all (its capture failed).
 *  2. A process whose main thread sleeps in a read or poll (a pipe, a
 *     queue, a socket) waits on someone: if one of its descendants is
 *     still a candidate, it gives way to them.
 *  3. Of the candidates left the best is, in this order: running (state R,
 *     or it used CPU while the capture went on) over sleeping; not asleep
 *     in a read over asleep in one; Python (it has Python frames) over
 *     native; deeper in the tree over shallower; the first listed.
 *  4. No candidate, but a process that is no wrapper has no stack (strace
 *     traces it, Yama forbids it): "(CMD: no stack, see the full stacks)",
 *     not its wrapper's wait. Else the rank's own process, else the first
 *     with frames.
 *
 * Text without such lines (one process: an older agent) is that process.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/stacks/stackcoll.h"
#include "launcher/stacks/stackpick.h"
#include "launcher/stacks/stacksig.h"

#define PICK_HEAD	"== process "
#define PICK_INNER	2	/* innermost frames a wait or read is sought in */
#define PICK_CMD	81	/* bytes of a command line in a signature */

/* One process of a rank's text. */
struct pick {
	pid_t	 pid, ppid;
	char	 state;
	char	*py, *native;	/* its signatures, "" when none */
	const char *backend;	/* its collectives' (stk_backend), or NULL */
	char	 cmd[PICK_CMD];	/* its command line, cut */
	int	 waits;		/* for a child: a wrapper */
	int	 reads;		/* asleep in a read or poll */
	int	 depth;		/* below the rank's own process */
	int	 cand;
};

/* Functions a thread waits for a child in, and sleeps reading in. */
static const char *const waits_in[] = {
	"wait", "wait3", "wait4", "waitpid", "waitid", NULL
};
static const char *const reads_in[] = {
	"read", "recv", "recvfrom", "recvmsg", "poll", "ppoll", "select",
	"pselect", "pselect6", "epoll_wait", "epoll_pwait", "epoll_pwait2",
	NULL
};

/* True if the frame name f (n bytes) is one of names, prefixes aside. */
static int
frame_is(const char *f, size_t n, const char *const *names)
{
	size_t	i;

	/* __GI___wait4, __libc_read, __poll: glibc's names for them. */
	for (;;) {
		if (n > 0 && *f == '_') {
			f++;
			n--;
		} else if (n > 3 && strncmp(f, "GI_", 3) == 0) {
			f += 3;
			n -= 3;
		} else if (n > 5 && strncmp(f, "libc_", 5) == 0) {
			f += 5;
			n -= 5;
		} else
			break;
	}
	for (i = 0; names[i] != NULL; i++)
		if (strlen(names[i]) == n && strncmp(f, names[i], n) == 0)
			return 1;
	return 0;
}

/* True if one of sig's innermost PICK_INNER frames is one of names. */
static int
inner_is(const char *sig, const char *const *names)
{
	const char	*p = sig, *e;
	int		 k;

	for (k = 0; k < PICK_INNER && *p != '\0'; k++) {
		e = strstr(p, " <- ");
		if (frame_is(p, e != NULL ? (size_t)(e - p) : strlen(p), names))
			return 1;
		if (e == NULL)
			break;
		p = e + 4;
	}
	return 0;
}

/* Counts the process lines of text. */
static size_t
pick_count(const char *text)
{
	const char	*p;
	size_t		 n = 0;

	for (p = text; p != NULL; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		n += strncmp(p, PICK_HEAD, strlen(PICK_HEAD)) == 0;
	}
	return n;
}

/* Reads one process's section (its line at p, its text to the next one). */
static int
pick_read(struct pick *k, const char *p, const char **next)
{
	const char	*s, *e;
	char		*body;
	int		 pid = 0, ppid = 0, rc;

	memset(k, 0, sizeof(*k));
	if (sscanf(p, PICK_HEAD "%d, parent %d, state %c: %80[^\n]", &pid,
	    &ppid, &k->state, k->cmd) < 3)
		k->state = '?';
	k->pid = pid;
	k->ppid = ppid;
	s = strchr(p, '\n');
	s = s != NULL ? s + 1 : p + strlen(p);
	if (strncmp(s, PICK_HEAD, strlen(PICK_HEAD)) == 0)
		e = s;
	else if ((e = strstr(s, "\n" PICK_HEAD)) != NULL)
		e++;
	else
		e = s + strlen(s);
	*next = e;
	if ((body = strndup(s, e - s)) == NULL)
		return -1;
	rc = stk_frames(body, k->pid, &k->py, &k->native);
	if (rc == 0)
		k->backend = stk_backend(k->native, body);
	free(body);
	if (rc != 0)
		return -1;
	k->waits = inner_is(k->native, waits_in);
	k->reads = inner_is(k->native, reads_in);
	return 0;
}

/* The index of the process pid in v[0..n), or -1. */
static int
pick_find(const struct pick *v, size_t n, pid_t pid)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (v[i].pid == pid)
			return (int)i;
	return -1;
}

/* True if v[a] is an ancestor of v[d] (n bounds the walk up). */
static int
pick_above(const struct pick *v, size_t n, size_t a, size_t d)
{
	int	i = (int)d;
	size_t	k;

	for (k = 0; k < n && (i = pick_find(v, n, v[i].ppid)) >= 0; k++)
		if ((size_t)i == a)
			return 1;
	return 0;
}

/* Sets each process's depth: the rank's own is 0, a stray of its group 1. */
static void
pick_depths(struct pick *v, size_t n)
{
	size_t	i, k;
	int	j;

	for (i = 1; i < n; i++) {
		for (j = (int)i, k = 0; k < n &&
		    (j = pick_find(v, n, v[j].ppid)) > 0; k++)
			;
		v[i].depth = (int)k + 1;
	}
}

/* True if a is a better pick than b (rule 3). */
static int
pick_better(const struct pick *a, const struct pick *b)
{
	if ((a->state == 'R') != (b->state == 'R'))
		return a->state == 'R';
	if (a->reads != b->reads)
		return !a->reads;
	if ((a->py[0] != '\0') != (b->py[0] != '\0'))
		return a->py[0] != '\0';
	return a->depth > b->depth;
}

/* True if v[i] has a stack: a frame of either kind. */
static int
pick_framed(const struct pick *v, size_t i)
{
	return v[i].py[0] != '\0' || v[i].native[0] != '\0';
}

/* Chooses the process of v[0..n) doing the work (rules 1 to 4); n if it has no stack. */
static size_t
pick_choose(struct pick *v, size_t n)
{
	size_t	i, j, best = n;

	for (i = 0; i < n; i++)
		v[i].cand = !v[i].waits && pick_framed(v, i);
	for (i = 0; i < n; i++)
		for (j = 0; v[i].cand && v[i].reads && j < n; j++)
			if (j != i && v[j].cand && pick_above(v, n, i, j))
				v[i].cand = 0;
	for (i = 0; i < n; i++)
		if (v[i].cand && (best == n || pick_better(&v[i], &v[best])))
			best = i;
	for (i = 0; best == n && i < n; i++)
		if (!v[i].waits && !pick_framed(v, i))
			return n;
	for (i = 0; best == n && i < n; i++)
		if (pick_framed(v, i))
			best = i;
	return best == n ? 0 : best;
}

char *
stk_pick(const char *text, pid_t pid, pid_t *who)
{
	struct pick	*v;
	const char	*p;
	char		*sig = NULL;
	size_t		 n, i, k = 0;

	*who = pid;
	if ((n = pick_count(text)) == 0)
		return stk_signature(text, pid);
	if ((v = calloc(n, sizeof(*v))) == NULL)
		return NULL;
	p = strncmp(text, PICK_HEAD, strlen(PICK_HEAD)) == 0 ? text :
	    strstr(text, "\n" PICK_HEAD) + 1;
	for (k = 0; k < n && *p != '\0'; k++)
		if (pick_read(&v[k], p, &p) != 0)
			goto out;
	pick_depths(v, k);
	if ((i = pick_choose(v, k)) == k) {
		for (i = 0; i < k && (v[i].waits || pick_framed(v, i)); i++)
			;
		*who = v[i].pid;
		if (asprintf(&sig, "(%s: no stack, see the full stacks)",
		    v[i].cmd) == -1)
			sig = NULL;
	} else {
		*who = v[i].pid;
		sig = stk_collective(v[i].py, v[i].native, v[i].backend);
	}
out:
	for (i = 0; i < n; i++) {
		free(v[i].py);
		free(v[i].native);
	}
	free(v);
	return sig;
}
