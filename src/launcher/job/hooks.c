/*
 * hooks.c -- a job's features: opened once per job and once per attempt,
 * drained and closed the other way round; the hooks that answer
 * (hooks.h, hooksint.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "launcher/job/hooksint.h"
#include "util/xmalloc.h"

struct features *
features_new(const struct job_feature *const *list, struct event_base *base,
    const struct opts *o, const char *id)
{
	struct features	*fs = xcalloc(1, sizeof(*fs));

	for (; *list != NULL && fs->n < FEATURES_MAX; list++, fs->n++) {
		fs->f[fs->n] = *list;
		if ((*list)->job_open != NULL)
			fs->kept[fs->n] = (*list)->job_open(base, o, id);
	}
	return fs;
}

void
features_free(struct features *fs)
{
	size_t	i;

	if (fs == NULL)
		return;
	for (i = fs->n; i-- > 0;)
		if (fs->kept[i] != NULL && fs->f[i]->job_close != NULL)
			fs->f[i]->job_close(fs->kept[i]);
	free(fs);
}

int
hooks_open(struct hooks *hk, const struct features *fs,
    const struct job_view *v, struct dt_err *e)
{
	size_t	i;
	int	rc;

	memset(hk, 0, sizeof(*hk));
	hk->fs = fs;
	for (i = 0; fs != NULL && i < fs->n; i++)
		if (fs->f[i]->open != NULL &&
		    (rc = fs->f[i]->open(v, fs->kept[i], &hk->st[i], e)) != 0)
			return rc;
	return 0;
}

void
hooks_drain(struct hooks *hk)
{
	size_t	i;

	for (i = hk->fs != NULL ? hk->fs->n : 0; i-- > 0;)
		if (hk->st[i] != NULL && hk->fs->f[i]->drain != NULL)
			hk->fs->f[i]->drain(hk->st[i]);
}

void
hooks_close(struct hooks *hk)
{
	size_t	i;

	for (i = hk->fs != NULL ? hk->fs->n : 0; i-- > 0;) {
		if (hk->st[i] != NULL && hk->fs->f[i]->close != NULL)
			hk->fs->f[i]->close(hk->st[i]);
		hk->st[i] = NULL;
	}
}

void *
hooks_state(const struct hooks *hk, const struct job_feature *f)
{
	size_t	i;

	for (i = 0; hk->fs != NULL && i < hk->fs->n; i++)
		if (hk->fs->f[i] == f)
			return hk->st[i];
	return NULL;
}

const char *
hooks_note(const struct hooks *hk, char *buf, size_t len)
{
	const struct features	*fs = hk->fs;
	size_t			 i, n = 0;

	buf[0] = '\0';
	for (i = 0; fs != NULL && i < fs->n && n < len; i++)
		if (fs->kept[i] != NULL && fs->f[i]->note != NULL)
			n += snprintf(buf + n, len - n, "; %s", fs->f[i]->note);
	return buf;
}

int
hooks_checked(struct hooks *hk, struct job_host *h, const uint8_t *p,
    size_t n, int none)
{
	const struct features	*fs = hk->fs;
	size_t			 i;

	for (i = 0; fs != NULL && i < fs->n; i++)
		if (hk->st[i] != NULL && fs->f[i]->checked != NULL)
			return fs->f[i]->checked(hk->st[i], h, p, n);
	return none;
}

int
hooks_start_timeout(struct hooks *hk, uint8_t *missing)
{
	const struct features	*fs = hk->fs;
	size_t			 i;

	for (i = 0; fs != NULL && i < fs->n; i++)
		if (hk->st[i] != NULL && fs->f[i]->start_timeout != NULL)
			return fs->f[i]->start_timeout(hk->st[i], missing);
	free(missing);
	return 0;
}

int
hooks_reaped(struct hooks *hk, pid_t pid, int status)
{
	const struct features	*fs = hk->fs;
	size_t			 i;

	for (i = 0; fs != NULL && i < fs->n; i++)
		if (hk->st[i] != NULL && fs->f[i]->reaped != NULL &&
		    fs->f[i]->reaped(hk->st[i], pid, status))
			return 1;
	return 0;
}
