/*
 * hostfile.h -- hostfiles, host lists, host ranges, the Slurm allocation,
 * DeepSpeed-style --include/--exclude filters and rank placement.
 *
 * Nothing here exits or prints. Every function that can fail returns 0 (or
 * a count) on success, or a negative DT_ERR_* with *e filled in: file, line,
 * column and a message that names the fix, so a binary prints
 *
 *	dtrun: hosts:3:5: bad range "gpu[5-2]" (low > high)
 *
 * THE HOST LINE. A hostfile holds one host entry per line; an inline list
 * (-H a:2,b[1-3]:4) holds the same entries separated by commas outside
 * brackets. An entry is
 *
 *	[user@]HOST[:N] [slots=N] [max_slots=M] [port=P] [user=U]
 *
 * which covers one-host-per-line files (pdsh, MXNet, ColossalAI), Open MPI /
 * DeepSpeed / Horovod files ("host slots=4 max_slots=8"), Horovod and Open
 * MPI -H lists ("a:2,b:4") and pssh files ("user@host:2222"). "#" starts a
 * comment; blank lines, CRLF, surrounding blanks and a missing final
 * newline are fine. max-slots is accepted for max_slots.
 *
 * THE ":N" RULE. "host:N" means N slots. It means an ssh port only after a
 * user ("user@host:2222", as pssh writes it); otherwise write port=P.
 * Because MXNet's launch.py reads "host:port", a "host:N" whose N is 22 or
 * above HF_SLOTS_MAX is rejected with a message that says both spellings.
 *
 * RANGES. HOST may hold pdsh/Slurm ranges: gpu[01-16], gpu[1-3,7],
 * rack[1-2]-gpu[01-04] (leftmost bracket varies slowest; with three or
 * more, as scontrol orders them: the last fastest, then the others from
 * the left, p[1-2]x[1-2][0] giving p1x10,p2x10,p1x20,p2x20). A range keeps the
 * width of its low bound ("01-16" gives gpu01..gpu16). One pattern, one
 * list or one file expands to at most HF_EXPAND_MAX names; more is
 * DT_ERR_RANGE, reported before anything is expanded.
 *
 * SLOTS. A host without a slot count has 1 slot, or max_slots slots when
 * only max_slots is written (as in Open MPI); both count as written
 * (slots_set).
 *
 * REPEATED HOSTS. A host named again (in the same file or a later one) is
 * merged into its first entry, where it keeps its position, by Open MPI's
 * rules: each repeat adds one slot (a file listing a host once per process
 * works) and keeps the first entry's max_slots; a repeat that writes slots
 * is DT_ERR_INVAL; a repeat's max_slots replaces the limit (DT_ERR_RANGE
 * below the slots). Unlike Open MPI, repeats may not count past max_slots
 * (DT_ERR_RANGE). A note is kept for -v ("hosts:7: gpu1 listed again
 * (first at hosts:2), slots merged to 3"). If the two entries disagree on
 * user or port the merge is refused with DT_ERR_INVAL.
 *
 * THIS MACHINE. When the caller sets hf_hosts.here, a host it says names
 * this machine (localhost, 127.0.0.1, our own name) is merged, by the rules
 * above, into the first such host however it is spelled: Open MPI's rule,
 * where every name of the local node is the one node.
 *
 * IPv6 literals are not accepted as host names.
 */
#ifndef DT_HOSTFILE_H
#define DT_HOSTFILE_H

#include <stddef.h>

#include "common/dtlimits.h"
#include "common/err.h"

#ifndef HF_EXPAND_MAX		/* the fuzz targets build with a smaller one */
#define HF_EXPAND_MAX	1000000	/* names from one pattern, list or file */
#endif
#define HF_SLOTS_MAX	1024	/* slots or max_slots of one host */
#define HF_RANKS_MAX	DT_RANKS_MAX	/* processes in one plan */
#define HF_NAME_MAX	DT_HOST_MAX	/* length of a host name after expansion */
#define HF_PS_PORT	9091	/* MXNet's DMLC_PS_ROOT_PORT default */

/* One host after range expansion. */
struct hf_host {
	char		*name;		/* host name or address as written */
	char		*user;		/* NULL = the ssh default */
	int		 port;		/* 0 = the ssh default */
	int		 slots;		/* >= 1: processes it takes */
	int		 max_slots;	/* 0 = no limit when oversubscribing */
	int		 slots_set;	/* slots were written, not defaulted */
	/*
	 * Device ids this host may use after --include/--exclude, sorted,
	 * nslot_ids == slots. NULL means 0..slots-1.
	 */
	int		*slot_ids;
	int		 nslot_ids;
	const char	*file;		/* where it was first defined */
	int		 line;
	int		 col;
};

/* True if name names this machine (see THIS MACHINE). */
typedef int	(*hf_here_fn)(const char *name);

/*
 * An ordered set of hosts; a name appears once (see REPEATED HOSTS). The
 * functions that append to it may leave part of a source there when they
 * fail; hf_hosts_free it either way.
 */
struct hf_hosts {
	struct hf_host	*v;
	size_t		 n;
	/* Notes for -v: the repeats that were merged. */
	char		**notes;
	size_t		 nnotes;
	/* Set by the caller before adding: merges this machine's names. */
	hf_here_fn	 here;
	/* private */
	size_t		 here_first;	/* index + 1 of the first host here */
	size_t		 cap;
	size_t		*ht;		/* name hash -> index + 1 */
	size_t		 htcap;
	char		**files;	/* file names hosts point to */
	size_t		 nfiles;
	size_t		 nexpanded;	/* names added by the current source */
};

/* Makes hs empty. */
void	 hf_hosts_init(struct hf_hosts *hs);

/* Frees what hs holds and makes it empty again (keeping hs->here). */
void	 hf_hosts_free(struct hf_hosts *hs);

/* Returns the index of the host called name in hs, or -1. */
long	 hf_hosts_find(const struct hf_hosts *hs, const char *name);

/*
 * Gives every host whose slots were not written (slots_set == 0) n slots,
 * for engine.yaml's slotsPerHost. Returns 0 or DT_ERR_RANGE (n outside
 * 1..HF_SLOTS_MAX, or above the max_slots of a host it applies to) with
 * *e filled.
 */
int	 hf_hosts_default_slots(struct hf_hosts *hs, int n, struct dt_err *e);

/*
 * -H ARG: the hosts in file ARG if such a file exists, else the inline
 * list ARG. An ARG with a "/" that names no file is DT_ERR_NOTFOUND.
 * Appends to hs. Returns 0 or a negative DT_ERR_* with *e filled.
 */
int	 hf_load_arg(struct hf_hosts *hs, const char *arg, struct dt_err *e);

/*
 * Appends the hosts of hostfile path to hs. Errors name path, the line and
 * the column. Returns 0 or a negative DT_ERR_* with *e filled.
 */
int	 hf_parse_file(struct hf_hosts *hs, const char *path, struct dt_err *e);

/*
 * Appends the hosts of the hostfile held in buf[0..len) (no NUL needed) to
 * hs; name is what errors and hf_host.file call it. Returns 0 or a
 * negative DT_ERR_* with *e filled.
 */
int	 hf_parse_buf(struct hf_hosts *hs, const char *name, const char *buf,
	     size_t len, struct dt_err *e);

/*
 * Appends the hosts of an inline list ("a:2,b[1-3]:4,user@c:2222") to hs.
 * Errors are reported as file "-H", line 1 and the column in list.
 * Returns 0 or a negative DT_ERR_* with *e filled.
 */
int	 hf_parse_list(struct hf_hosts *hs, const char *list, struct dt_err *e);

/*
 * Appends one host entry (THE HOST LINE grammar, no comment) to hs, as
 * if it were line `line` of `file` starting at column `col`. For callers
 * that read entries from elsewhere (engine.yaml's hosts list).
 * Returns 0 or a negative DT_ERR_* with *e filled.
 */
int	 hf_parse_entry(struct hf_hosts *hs, const char *file, int line,
	     int col, const char *entry, size_t len, struct dt_err *e);

/* Called once per expanded name; a nonzero return stops and is returned. */
typedef int	(*hf_name_fn)(const char *name, size_t len, void *arg);

/*
 * Expands spec, a comma list of patterns ("gpu[01-04,09],login"), calling
 * fn for each name in order with a NUL-terminated name valid during the
 * call. Errors are reported against file "spec", line 1 and a column. At
 * most HF_EXPAND_MAX names in all (DT_ERR_RANGE, checked for each pattern
 * before its first name). Returns the number of names, fn's nonzero
 * return, or a negative DT_ERR_* with *e filled.
 */
long	 hf_expand(const char *spec, hf_name_fn fn, void *arg,
	     struct dt_err *e);

/*
 * Appends the Slurm allocation: nodelist as SLURM_JOB_NODELIST writes it
 * ("gpu[01-03],login1"), tasks as SLURM_TASKS_PER_NODE ("2(x3),1") giving
 * each node's slots, or NULL for one slot each. The two must name the same
 * number of nodes. Returns 0 or a negative DT_ERR_* with *e filled.
 */
int	 hf_from_slurm(struct hf_hosts *hs, const char *nodelist,
	     const char *tasks, struct dt_err *e);

/* The id of the Slurm job we run in ($SLURM_JOB_ID), or NULL outside one. */
const char *hf_slurm_job_id(void);

/*
 * Appends the allocation we run in, from the environment Slurm sets
 * (SLURM_JOB_NODELIST, SLURM_TASKS_PER_NODE) through hf_from_slurm.
 * Returns 0, DT_ERR_NOTFOUND outside an allocation, or a parse error;
 * *e says which and how to fix it.
 */
int	 hf_from_slurm_env(struct hf_hosts *hs, struct dt_err *e);

/*
 * DeepSpeed's --include / --exclude ("host1:0,1@host2", host ranges
 * allowed). include keeps only the hosts named and, where ":ids" follow,
 * only those device ids; exclude drops whole hosts or, with ":ids", those
 * ids, and drops a host left with none. At most one may be non-NULL and
 * non-empty. A name or id that hs lacks is DT_ERR_NOTFOUND; a host named
 * twice in include is DT_ERR_INVAL (see filter.c). Hosts keep their order;
 * slots becomes the number of ids left, listed ascending in slot_ids.
 * Returns 0 or a negative DT_ERR_* with *e filled.
 */
int	 hf_filter(struct hf_hosts *hs, const char *include,
	     const char *exclude, struct dt_err *e);

/*
 * PLACEMENT. Workers fill hosts in order, host-major: -n 4 on a:2,b:2 puts
 * ranks 0,1 on a and 2,3 on b. nproc_per_node replaces every host's slots.
 * np 0 means all slots. More workers than slots is DT_ERR_RANGE naming the
 * slot count, unless oversubscribe: then the extra workers go one at a time
 * round the hosts (never past a host's max_slots), and each host's workers
 * stay contiguous.
 *
 * nservers > 0 lays out MXNet's parameter servers as its launch.py does:
 * server i on host i % nhosts of all the hosts given, plus one scheduler on
 * the first host (dmlc's tracker runs it on the launching machine, which
 * has no agent here). Workers keep the placement above, not dmlc's
 * round-robin after the servers. Servers and the scheduler take no slot
 * (slot -1).
 */
#define HF_ROLE_WORKER		0
#define HF_ROLE_SERVER		1
#define HF_ROLE_SCHEDULER	2

struct hf_place_opts {
	int		 np;		/* workers; 0 = all slots */
	int		 nproc_per_node; /* 0 = each host's slots */
	int		 oversubscribe;
	int		 nservers;	/* MXNet -s; 0 = none, no scheduler */
	int		 ps_port;	/* DMLC_PS_ROOT_PORT; 0 = HF_PS_PORT */
};

struct hf_rank {
	int		 host;		/* index into hf_plan.hosts */
	int		 local_rank;	/* index among its role on its host */
	int		 slot;		/* device id on the host, -1 = none */
	int		 role;		/* HF_ROLE_* */
	int		 role_rank;	/* index among its role */
};

struct hf_plan {
	struct hf_host	*hosts;		/* hosts that got a process, in order;
					   node rank = index; owned copies */
	size_t		 nhosts;
	int		*host_nprocs;	/* processes on each plan host */
	int		*host_nworkers;	/* workers on each (local world size) */
	struct hf_rank	*ranks;		/* workers 0..nworkers-1 host-major,
					   then servers, then the scheduler */
	size_t		 nranks;
	int		 nworkers;
	int		 nservers;
	int		 ps_port;
	/* private */
	char		**files;	/* file names plan hosts point to */
	size_t		 nfiles;
};

/*
 * Lays out opts over hs into *plan (initialised here; free it with
 * hf_plan_free even after an error). Returns 0, DT_ERR_RANGE (too many
 * workers for the slots, or for max_slots), DT_ERR_INVAL (bad options, no
 * hosts) or DT_ERR_NOMEM, with *e filled.
 */
int	 hf_place(const struct hf_hosts *hs, const struct hf_place_opts *opts,
	     struct hf_plan *plan, struct dt_err *e);

/* Frees what plan holds. */
void	 hf_plan_free(struct hf_plan *plan);

/*
 * Writes process i of plan as --dry-run shows it, "RANK HOST LOCAL_RANK":
 * "3 b 1" for a worker, "server:1 a 0" and "scheduler a 0" for MXNet's.
 * Returns the length snprintf would write (truncated to len).
 */
int	 hf_plan_line(const struct hf_plan *plan, size_t i, char *buf,
	     size_t len);

/* Called once per environment variable; nonzero stops and is returned. */
typedef int	(*hf_env_fn)(const char *name, const char *value, void *arg);

/*
 * Calls fn with the DMLC_* variables process i needs for MXNet's
 * parameter-server mode (DMLC_ROLE, DMLC_PS_ROOT_URI, DMLC_PS_ROOT_PORT,
 * DMLC_NUM_WORKER, DMLC_NUM_SERVER); none when plan has no servers.
 * Returns 0 or fn's nonzero return.
 */
int	 hf_plan_dmlc_env(const struct hf_plan *plan, size_t i, hf_env_fn fn,
	     void *arg);

#endif
