/*
 * waitclass.h -- what one look at a rank's main thread says it was doing:
 * working, waiting on a peer (a collective), or waiting on its own input.
 * The rule is one table (waitclass.c), the same one doc/stragglers.md
 * prints; the agent's sampler (waits.h) fills a wc_sample from /proc and
 * counts the classes. Pure: no I/O, for the unit tests.
 */
#ifndef DT_WAITCLASS_H
#define DT_WAITCLASS_H

enum wc_class { WC_WORK, WC_PEER, WC_INPUT, WC_OTHER };

/* The blocking call, by family (the syscall numbers are the arch's). */
enum wc_call {
	WC_CALL_NONE,		/* not in a call: running, or a fault */
	WC_CALL_FUTEX,		/* a lock or condition variable */
	WC_CALL_READ,		/* read, recv and friends on arg0 */
	WC_CALL_POLL,		/* poll, select: the first descriptor */
	WC_CALL_EPOLL,		/* epoll_wait: what it waits on is unknown */
	WC_CALL_SLEEP,		/* nanosleep, clock_nanosleep */
	WC_CALL_WAIT,		/* wait4, waitid: a wrapper waits on a child */
	WC_CALL_OTHER
};

/*
 * What the call's descriptor is (/proc/PID/fd/N's link; a socket's family
 * from the socket itself): a network socket reaches other hosts' ranks, a
 * unix one this host's processes (a DataLoader's workers send each batch's
 * memory through one).
 */
enum wc_fd {
	WC_FD_NONE, WC_FD_SOCKET, WC_FD_UNIX, WC_FD_PIPE, WC_FD_FILE,
	WC_FD_OTHER
};

struct wc_sample {
	char		 state;		/* /proc/PID/stat's: R, S, D... */
	enum wc_call	 call;
	enum wc_fd	 fd;
	int		 others_running; /* another thread of it is R */
};

enum wc_class	 wc_classify(const struct wc_sample *);
/* The family of syscall nr on this machine. */
enum wc_call	 wc_call_of(long nr);
/* The kind of a descriptor from its /proc/PID/fd link. */
enum wc_fd	 wc_fd_of(const char *link);
/* "read", "poll", "sleep"...: how a verdict names a call. */
const char	*wc_call_name(enum wc_call);

#endif
