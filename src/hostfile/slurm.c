/*
 * slurm.c -- the Slurm allocation as a host source: SLURM_JOB_NODELIST
 * ("gpu[01-03],login1") gives the nodes, SLURM_TASKS_PER_NODE ("2(x3),1")
 * their slots in the same order.
 */
#include <stdlib.h>
#include <string.h>

#include "hostfile/hf_impl.h"
#include "hostfile/hosts.h"

#define NODELIST	"SLURM_JOB_NODELIST"
#define TASKS		"SLURM_TASKS_PER_NODE"

/* One "N(xM)" of SLURM_TASKS_PER_NODE: M nodes with N tasks. */
struct slurm_run {
	int	tasks;
	long	reps;
};

/* The nodes being added, and where the next node's slots come from. */
struct slurm_state {
	struct hf_hosts		*hs;
	struct hf_host		 t;
	struct slurm_run	*runs;	/* NULL: one slot each */
	size_t			 nruns;
	size_t			 run;	/* cursor: runs[run], reps used */
	long			 used;
	long			 nodes;	/* nodes the runs describe */
	struct dt_err		*e;
};

/* Parses tasks into st->runs. */
static int
slurm_tasks(struct slurm_state *st, const char *tasks)
{
	size_t	 len = strlen(tasks), off = 0, end, k;
	long	 n, reps;

	if ((st->runs = calloc(len / 2 + 1, sizeof(*st->runs))) == NULL)
		return dt_errf(st->e, TASKS, 0, 0, DT_ERR_NOMEM,
		    "out of memory");
	for (;;) {
		end = off + hfi_item_end(tasks + off, len - off, ',');
		for (k = off; k < end && tasks[k] >= '0' && tasks[k] <= '9'; k++)
			;
		reps = 1;
		/*
		 * Slurm gave these tasks: a node takes as many ranks as a
		 * host ever does (HF_RANKS_MAX, as --oversubscribe reaches
		 * here), not the HF_SLOTS_MAX a hostfile may write.
		 */
		if (hfi_uint(tasks + off, k - off, HF_RANKS_MAX, &n) != 0 ||
		    n == 0)
			return dt_errf(st->e, TASKS, 1, (int)off + 1,
			    DT_ERR_PARSE, "bad task count \"%.*s\" (want 1 to "
			    "%d, as in \"2(x3),1\")", (int)(end - off),
			    tasks + off, HF_RANKS_MAX);
		if (k < end && (end - k < 4 || memcmp(tasks + k, "(x", 2) != 0 ||
		    tasks[end - 1] != ')' || hfi_uint(tasks + k + 2,
		    end - k - 3, HF_EXPAND_MAX, &reps) != 0 || reps == 0))
			return dt_errf(st->e, TASKS, 1, (int)k + 1,
			    DT_ERR_PARSE, "bad repeat \"%.*s\" (want \"(xN)\", "
			    "as in \"2(x3)\")", (int)(end - k), tasks + k);
		st->runs[st->nruns].tasks = (int)n;
		st->runs[st->nruns++].reps = reps;
		if ((st->nodes += reps) > HF_EXPAND_MAX)
			return dt_errf(st->e, TASKS, 1, (int)off + 1,
			    DT_ERR_RANGE, "more than %d nodes", HF_EXPAND_MAX);
		if (end == len)
			return 0;
		off = end + 1;
	}
}

/* hfi_expand's callback: adds a node with the next task count. */
static int
slurm_add(const char *name, size_t len, void *arg)
{
	struct slurm_state	*st = arg;

	if (st->runs != NULL) {
		if (st->run == st->nruns)
			return dt_errf(st->e, NODELIST, 0, 0, DT_ERR_INVAL,
			    "names more nodes than " TASKS " gives counts "
			    "for (%ld)", st->nodes);
		st->t.slots = st->runs[st->run].tasks;
		if (++st->used == st->runs[st->run].reps) {
			st->run++;
			st->used = 0;
		}
	}
	return hosts_add(st->hs, name, len, &st->t, st->e);
}

int
hf_from_slurm(struct hf_hosts *hs, const char *nodelist, const char *tasks,
    struct dt_err *e)
{
	struct slurm_state	st;
	size_t			len = strlen(nodelist), off = 0, end;
	size_t			budget = HF_EXPAND_MAX;
	long			r = 0, nnodes = 0;

	memset(&st, 0, sizeof(st));
	st.hs = hs;
	st.e = e;
	st.t.slots = 1;
	st.t.slots_set = tasks != NULL;
	st.t.line = 1;
	if ((st.t.file = hosts_file(hs, NODELIST)) == NULL)
		return dt_errf(e, NODELIST, 0, 0, DT_ERR_NOMEM, "out of memory");
	if (tasks != NULL && (r = slurm_tasks(&st, tasks)) != 0)
		goto out;
	for (;;) {
		end = off + hfi_item_end(nodelist + off, len - off, ',');
		st.t.col = (int)off + 1;
		r = hfi_expand(nodelist + off, end - off, slurm_add, &st,
		    &budget, NODELIST, 1, (int)off + 1, e);
		if (r < 0)
			goto out;
		nnodes += r;
		if (end == len)
			break;
		off = end + 1;
	}
	r = 0;
	if (tasks != NULL && nnodes != st.nodes)
		r = dt_errf(e, NODELIST, 0, 0, DT_ERR_INVAL, "names %ld nodes "
		    "but " TASKS "=\"%s\" gives counts for %ld", nnodes, tasks,
		    st.nodes);
out:
	free(st.runs);
	return (int)r;
}

const char *
hf_slurm_job_id(void)
{
	const char	*id = getenv("SLURM_JOB_ID");

	if (id == NULL || *id == '\0')
		id = getenv("SLURM_JOBID");
	return id != NULL && *id != '\0' ? id : NULL;
}

int
hf_from_slurm_env(struct hf_hosts *hs, struct dt_err *e)
{
	const char	*id = hf_slurm_job_id();
	const char	*nodes = getenv(NODELIST);

	if (id == NULL)
		return dt_errf(e, NULL, 0, 0, DT_ERR_NOTFOUND, "--launcher "
		    "slurm: not inside a Slurm allocation (run dtrun under "
		    "salloc or in an sbatch script)");
	if (nodes == NULL)
		nodes = getenv("SLURM_NODELIST");
	if (nodes == NULL || *nodes == '\0')
		return dt_errf(e, NULL, 0, 0, DT_ERR_NOTFOUND, "Slurm job %s: "
		    NODELIST " is not set", id);
	return hf_from_slurm(hs, nodes, getenv(TASKS), e);
}
