/*
 * hooksint.h -- the core's side of the features' hooks (hooks.h): the
 * list a job runs with, each feature's state in one attempt, and the call
 * of one hook on every feature that has it.
 */
#ifndef DT_HOOKSINT_H
#define DT_HOOKSINT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "launcher/job/hooks.h"

#define FEATURES_MAX	16

struct features {
	const struct job_feature *f[FEATURES_MAX];
	void			*kept[FEATURES_MAX];	/* job_open's */
	size_t			 n;
};

/* One attempt's features: what each open gave (NULL: it sits out). */
struct hooks {
	const struct features	*fs;
	void			*st[FEATURES_MAX];
};

/* Calls hook op, with the arguments after it, of every feature in the attempt. */
#define HOOKS_CALL(hk, op, ...) do {					\
	const struct features *fs_ = (hk)->fs;				\
	size_t i_;							\
									\
	for (i_ = 0; fs_ != NULL && i_ < fs_->n; i_++)			\
		if ((hk)->st[i_] != NULL && fs_->f[i_]->op != NULL)	\
			fs_->f[i_]->op((hk)->st[i_], ##__VA_ARGS__);	\
} while (0)

/* Opens every feature of fs for the attempt v; 0, or nonzero with e filled. */
int	hooks_open(struct hooks *, const struct features *fs,
	    const struct job_view *v, struct dt_err *e);
/* Drains, then closes, the features, last first. */
void	hooks_drain(struct hooks *);
void	hooks_close(struct hooks *);
/* f's state in the attempt, or NULL. */
void	*hooks_state(const struct hooks *, const struct job_feature *f);
/* What "started N ranks" adds ("; dtrun top shows it"), or "". */
const char *hooks_note(const struct hooks *, char *buf, size_t len);

/* The hooks that answer: the first taker's answer, or none's. */
int	hooks_checked(struct hooks *, struct job_host *, const uint8_t *,
	    size_t, int none);
int	hooks_start_timeout(struct hooks *, uint8_t *missing);
int	hooks_reaped(struct hooks *, pid_t, int status);

#endif
