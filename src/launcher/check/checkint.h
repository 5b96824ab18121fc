/*
 * checkint.h -- the insides of dtrun --check, shared by check.c (the
 * conversation with the agents), checkhost.c (each host's problems and
 * the drift between hosts) and checkprint.c (the table).
 */
#ifndef DT_CHECKINT_H
#define DT_CHECKINT_H

#include <stddef.h>
#include <stdint.h>

#include "launcher/check/check.h"
#include "proto/agentproto.h"
#include "util/strv.h"
#include "common/wire.h"

/* One host's answers. */
struct chost {
	struct job_host	*h;
	uint64_t	 sent_real;	/* GATHER sent: our wall clock */
	uint64_t	 sent_mono;
	int		 gathered;
	int		 probed;
	char		**kv;		/* GATHER's answers */
	size_t		 nkv;
	char		**pkv;		/* PROBE's */
	size_t		 npkv;
	size_t		 paired;	/* --deep: rounds answered */
	int64_t		 skew_ms;	/* its clock minus ours */
	uint64_t	 rtt_ms;	/* the round trip, less its work */
	char		*gpu_count;	/* from its gpu= answers, or NULL */
	char		*gpu_model;
	size_t		 nproblems;	/* the problems that name it */
};

struct check {
	struct check_cbs	 cb;
	const struct opts	*o;
	const struct plan	*p;
	int			 fast;
	int			 torch;		/* the command's script imports torch */
	const char		*rank0;		/* the run's, or NULL */
	struct chost		*hs;
	size_t			 ngathered, nprobed;
	int			 probing;
	int			 over;
	struct dt_wbuf		 wb;
	struct strv		 problems;
	struct deepcheck	*deep;		/* --deep, once every host probed */
	size_t			*deep_to;	/* the round's: whom each measures */
	size_t			 deep_round;	/* rounds begun */
	size_t			 deep_wait;	/* the round's answers still out */
	uint64_t		 deep_t0;	/* the first round began */
	/* --deep: the key the pair connections prove they hold (hex) */
	char			 deep_key[AP_CHK_KEY_HEX + 1];
};

/* checkans.c: a host's answer named key; how many are; a problem line. */
const char	*kv_get(char *const *kv, size_t n, const char *key);
size_t		 kv_count(char *const *kv, size_t n, const char *key);
const char	*ch_get(const struct chost *c, const char *key);
void		 check_problem(struct check *c, const char *fmt, ...)
		    __attribute__((format(printf, 2, 3)));
/* checkhost.c: every host's problems, and the drift between them. */
void		 check_judge(struct check *c);
/* checkprint.c: --deep's problems; the table; --deep's table. */
void		 check_deep_verdict(struct check *c);
void		 check_print(struct check *c);
void		 check_deep_print(struct check *c);

#endif
