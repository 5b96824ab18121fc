/*
 * srunlines.c -- what srun writes (backend_slurm.c): its lines are logged
 * as they come, the one that says most kept for the job's end; a line
 * that says tasks ended ("srun: error: NODE: task 1: Exited ...") dooms
 * the hosts it names whose agent has not connected, and soon fails them,
 * before --kill-on-bad-exit's SIGTERM to the others is taken for the cause.
 */
#include <sys/wait.h>
#include <stdlib.h>
#include <string.h>
#include <event2/buffer.h>
#include <event2/event.h>

#include "hostfile/hostfile.h"
#include "launcher/job/job.h"
#include "common/log.h"
#include "util/xmalloc.h"
#include "launcher/backend/slurmint.h"

/* True if s, the end of an srun line, says tasks ended ("task 0: Killed"). */
static int
srun_task_ended(const char *s)
{
	return strstr(s, ": Exited") != NULL || strstr(s, ": Killed") != NULL ||
	    strstr(s, ": Terminated") != NULL;
}

/* hf_expand's callback: dooms the host named if its agent is not connected. */
static int
srun_doom_name(const char *name, size_t len, void *arg)
{
	struct slurm	*s = arg;
	struct shost	*sh;
	size_t		 i;

	for (i = 0; i < s->nhosts; i++)
		if (strcmp(s->hosts[i]->name, name) == 0 &&
		    (sh = s->hosts[i]->priv) != NULL && !sh->connected)
			sh->doomed = 1;
	return 0;
}

/*
 * "srun: error: NODES: task(s) N: Exited with exit code X": the agents on
 * NODES ended by themselves, so if they have not connected they never
 * will ("Killed" and "Terminated" are what -K does to the others). Dooms
 * those hosts; they fail in TASK_FAIL_MS, once srun has had time to say
 * why (slurmstepd's execve error comes after this line).
 */
static void
srun_task_line(struct slurm *s, const char *line)
{
	static const char	 pfx[] = "srun: error: ";
	struct timeval		 tv = { 0, TASK_FAIL_MS * 1000 };
	struct dt_err		 e;
	const char		*end;
	char			 spec[1024];

	if (strncmp(line, pfx, sizeof(pfx) - 1) != 0)
		return;
	line += sizeof(pfx) - 1;
	if ((end = strstr(line, ": task")) == NULL ||
	    strstr(end, ": Exited") == NULL ||
	    (size_t)(end - line) >= sizeof(spec))
		return;
	memcpy(spec, line, end - line);
	spec[end - line] = '\0';
	if (hf_expand(spec, srun_doom_name, s, &e) > 0 &&
	    s->task_timer != NULL && !event_pending(s->task_timer, EV_TIMEOUT, NULL))
		event_add(s->task_timer, &tv);
}

/*
 * How much an srun line says about a failure: the agent's own complaints
 * and specific errors ("Unable to confirm allocation", "execve(): ...")
 * say more than srun's generic task reports, the step's cancellation and
 * other chatter.
 */
static int
srun_line_worth(const char *line)
{
	if (strncmp(line, "dtrun-agent:", 12) == 0)
		return 2;
	if (strstr(line, "error") == NULL)
		return 0;
	if ((strstr(line, ": task") != NULL && srun_task_ended(line)) ||
	    strstr(line, " CANCELLED AT ") != NULL)
		return 1;
	return 2;
}

/* Logs srun's whole lines (all at EOF), keeping the one that says most. */
static void
srun_lines(struct slurm *s, int at_eof)
{
	char	*line;
	size_t	 n;

	for (;;) {
		line = evbuffer_readln(s->obuf, &n, EVBUFFER_EOL_LF);
		/* A last line without newline, or one that never ends. */
		if (line == NULL && (n = evbuffer_get_length(s->obuf)) > 0 &&
		    (at_eof || n >= SRUN_LINE_MAX)) {
			if (n > SRUN_LINE_MAX)
				n = SRUN_LINE_MAX;
			line = xmalloc(n + 1);
			evbuffer_remove(s->obuf, line, n);
			line[n] = '\0';
		}
		if (line == NULL)
			return;
		if (line[0] != '\0' && s->quiet)
			log_debug("%s", line);
		else if (line[0] != '\0') {
			log_notice("%s", line);
			srun_task_line(s, line);
			/*
			 * The first line of the highest worth: later ones of
			 * the same worth ("node1: task 0: Terminated") are
			 * what our stopping did, not the cause.
			 */
			if (srun_line_worth(line) > s->last_worth) {
				snprintf(s->last, sizeof(s->last), "%s", line);
				s->last_worth = srun_line_worth(line);
			}
		}
		free(line);
	}
}

/* Reads what srun wrote; closes the pipe at EOF. Returns 1 at EOF. */
int
srun_read(struct slurm *s)
{
	int	n;

	if (s->ofd < 0)
		return 1;
	while ((n = evbuffer_read(s->obuf, s->ofd, 65536)) > 0)
		srun_lines(s, 0);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	srun_lines(s, 1);
	if (s->oev != NULL)
		event_free(s->oev);
	s->oev = NULL;
	close(s->ofd);
	s->ofd = -1;
	return 1;
}

/* ARGSUSED */
void
srun_read_cb(evutil_socket_t fd, short what, void *arg)
{
	srun_read(arg);
}
