/*
 * rootcause.h -- a failed rank's TORCHELASTIC_ERROR_FILE, as torchrun
 * shows it at the end of a failed job: the "Root Cause (first observed
 * failure)" block of ChildFailedError.format_msg (time, host, rank, exit
 * code, error file, traceback). The file is what torch's @record wrote:
 * {"message": {"message": "ValueError: ...", "extraInfo":
 * {"py_callstack": "Traceback ...", "timestamp": "1700000000"}}}; anything
 * else a rank left there is shown as it is.
 */
#ifndef DT_ROOTCAUSE_H
#define DT_ROOTCAUSE_H

#include <stddef.h>
#include <stdint.h>

struct ap_errfile;
struct strv;
struct rootcause;

/* Who failed, for the block. */
struct rootcause_who {
	uint32_t	 rank;
	int		 local_rank;
	const char	*host;
	int		 pid;
	int		 exitcode;	/* torchrun's: the code, or -SIGNAL */
	const char	*name;		/* the command, for "NAME FAILED" */
};

/* What torchrun calls the job: the script a python runs, else the command. */
const char	*rootcause_name(char **cmd, int ncmd);

/* Keeps a copy of what ERRFILE carried. */
struct rootcause *rootcause_new(const struct ap_errfile *);
void		 rootcause_free(struct rootcause *);

#define ROOTCAUSE_FILE	"error.json"	/* the copy, in DIR/rank.N/ */
/*
 * Copies what came of rank's error file to DIR/rank.N/error.json (the
 * --output-dir), which the block then names: the rank's own file is
 * removed with its agent. Returns 0, or -1 (errno set) with rc unchanged.
 */
int		 rootcause_keep(struct rootcause *, const char *dir,
		    uint32_t rank);

/* The traceback torch's @record wrote (py_callstack), malloc'd; NULL if none. */
char		*rootcause_traceback(const struct rootcause *);

/* Appends the block's lines to out, one string a line. */
void		 rootcause_lines(const struct rootcause *,
		     const struct rootcause_who *, struct strv *out);

/*
 * The value of the first "key": "..." pair (a string; or a number, as
 * text) in the JSON text p[0..n), decoded, malloc'd; NULL if none. Keys
 * are found wherever they are nested; strings are never taken for keys.
 */
char		*rootcause_json_get(const char *p, size_t n, const char *key);

#endif
