/*
 * waitclass.c -- one sample's class (waitclass.h).
 *
 * Why these rules (doc/stragglers.md has the measurements): in lock-step
 * training a rank that waits for its peers sleeps in the communication
 * library. PyTorch's DDP with gloo (recorded on this machine: doc/
 * stragglers.md; tests/data/peerwait): the main thread waits for the
 * bucket's allreduce in a condition variable (futex) while gloo's own
 * threads sleep too; NCCL's host thread likewise in a futex or spinning on
 * the stream (then it reads as working: the NCCL plugin names those).
 * A futex while another thread of the rank runs is work handed to a pool
 * (OpenMP, autograd), not a wait on peers. A rank waiting on its own
 * input blocks on a file, on the pipe its DataLoader workers answer
 * through (multiprocessing's queue polls it), on the unix socket they
 * pass each batch's memory through, or sleeps. A network socket is a
 * peer (MPI's and others' transports when they block the main thread; a
 * store). Everything else counts as neither, so a rule this table does
 * not know never names a rank. A futex is not always a peer: with
 * pin_memory the DataLoader's queue is a condition variable too (not
 * told apart here; doc/stragglers.md).
 */
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>

#include "agent/waitclass.h"

#define ANY	-1

/* First match wins; state '*' is any blocked state (not R). */
static const struct {
	char		 state;
	int		 call;		/* enum wc_call, or ANY */
	int		 fd;		/* enum wc_fd, or ANY */
	int		 others;	/* others_running, or ANY */
	enum wc_class	 class;
} wc_rules[] = {
	{ 'R', ANY,		ANY,		ANY,	WC_WORK },
	{ '*', WC_CALL_NONE,	ANY,		ANY,	WC_OTHER },
	{ '*', WC_CALL_FUTEX,	ANY,		1,	WC_WORK },
	{ '*', WC_CALL_FUTEX,	ANY,		0,	WC_PEER },
	{ '*', WC_CALL_READ,	WC_FD_SOCKET,	ANY,	WC_PEER },
	{ '*', WC_CALL_POLL,	WC_FD_SOCKET,	ANY,	WC_PEER },
	{ '*', WC_CALL_READ,	WC_FD_UNIX,	ANY,	WC_INPUT },
	{ '*', WC_CALL_POLL,	WC_FD_UNIX,	ANY,	WC_INPUT },
	{ '*', WC_CALL_READ,	WC_FD_PIPE,	ANY,	WC_INPUT },
	{ '*', WC_CALL_POLL,	WC_FD_PIPE,	ANY,	WC_INPUT },
	{ '*', WC_CALL_READ,	WC_FD_FILE,	ANY,	WC_INPUT },
	{ '*', WC_CALL_POLL,	WC_FD_FILE,	ANY,	WC_INPUT },
	{ '*', WC_CALL_SLEEP,	ANY,		ANY,	WC_INPUT },
	{ 'D', ANY,		ANY,		ANY,	WC_INPUT },
	{ '*', ANY,		ANY,		ANY,	WC_OTHER },
};

enum wc_class
wc_classify(const struct wc_sample *s)
{
	size_t	i;

	for (i = 0; i < sizeof(wc_rules) / sizeof(*wc_rules); i++) {
		if (wc_rules[i].state == 'R' ? s->state != 'R' :
		    wc_rules[i].state == '*' ? s->state == 'R' :
		    wc_rules[i].state != s->state)
			continue;
		if (wc_rules[i].call != ANY && wc_rules[i].call != (int)s->call)
			continue;
		if (wc_rules[i].fd != ANY && wc_rules[i].fd != (int)s->fd)
			continue;
		if (wc_rules[i].others != ANY &&
		    wc_rules[i].others != (s->others_running != 0))
			continue;
		return wc_rules[i].class;
	}
	return WC_OTHER;
}

/* This machine's numbers; calls an arch lacks (aarch64: poll) drop out. */
static const struct {
	long		nr;
	enum wc_call	call;
} wc_calls[] = {
	{ SYS_futex,		WC_CALL_FUTEX },
	{ SYS_read,		WC_CALL_READ },
	{ SYS_readv,		WC_CALL_READ },
	{ SYS_pread64,		WC_CALL_READ },
	{ SYS_recvfrom,		WC_CALL_READ },
	{ SYS_recvmsg,		WC_CALL_READ },
	{ SYS_ppoll,		WC_CALL_POLL },
	{ SYS_pselect6,		WC_CALL_POLL },
	{ SYS_epoll_pwait,	WC_CALL_EPOLL },
	{ SYS_nanosleep,	WC_CALL_SLEEP },
	{ SYS_clock_nanosleep,	WC_CALL_SLEEP },
	{ SYS_wait4,		WC_CALL_WAIT },
	{ SYS_waitid,		WC_CALL_WAIT },
#ifdef SYS_poll
	{ SYS_poll,		WC_CALL_POLL },
#endif
#ifdef SYS_select
	{ SYS_select,		WC_CALL_POLL },
#endif
#ifdef SYS_epoll_wait
	{ SYS_epoll_wait,	WC_CALL_EPOLL },
#endif
#ifdef SYS_recvmmsg
	{ SYS_recvmmsg,		WC_CALL_READ },
#endif
};

enum wc_call
wc_call_of(long nr)
{
	size_t	i;

	for (i = 0; i < sizeof(wc_calls) / sizeof(*wc_calls); i++)
		if (wc_calls[i].nr == nr)
			return wc_calls[i].call;
	return WC_CALL_OTHER;
}

enum wc_fd
wc_fd_of(const char *link)
{
	if (strncmp(link, "socket:", 7) == 0)
		return WC_FD_SOCKET;
	if (strncmp(link, "pipe:", 5) == 0)
		return WC_FD_PIPE;
	if (link[0] == '/')
		return WC_FD_FILE;
	return WC_FD_OTHER;
}

const char *
wc_call_name(enum wc_call c)
{
	switch (c) {
	case WC_CALL_FUTEX:	return "futex";
	case WC_CALL_READ:	return "read";
	case WC_CALL_POLL:	return "poll";
	case WC_CALL_EPOLL:	return "epoll";
	case WC_CALL_SLEEP:	return "sleep";
	case WC_CALL_WAIT:	return "wait";
	case WC_CALL_NONE:	return "-";
	default:		return "other";
	}
}
