/* hosts.h -- adding to a host set; shared by the hostfile library's parsers. */
#ifndef DT_HF_HOSTS_H
#define DT_HF_HOSTS_H

#include "hostfile/hostfile.h"

/*
 * Adds host name[0..len) with the other fields of t (user is copied, file
 * must come from hosts_file) or merges it into an entry of that name.
 * Returns 0 or a negative DT_ERR_* with *e filled.
 */
int		 hosts_add(struct hf_hosts *hs, const char *name, size_t len,
		     const struct hf_host *t, struct dt_err *e);

/*
 * The copy of file in the list *files of *n names, added if missing; NULL
 * when out of memory (or file is NULL).
 */
const char	*hosts_intern(char ***files, size_t *n, const char *file);

/*
 * Copies src into dst with its own strings, interning file in *files.
 * Returns 0 or DT_ERR_NOMEM (free dst with hosts_host_free either way).
 */
int		 hosts_copy(struct hf_host *dst, const struct hf_host *src,
		     char ***files, size_t *nfiles);

/* A copy of file kept by hs for hf_host.file, or NULL (out of memory). */
const char	*hosts_file(struct hf_hosts *hs, const char *file);

/* Rebuilds the name table after hosts were removed from hs->v. */
int		 hosts_reindex(struct hf_hosts *hs);

/* Frees what one host holds. */
void		 hosts_host_free(struct hf_host *h);

#endif
