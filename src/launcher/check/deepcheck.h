/*
 * deepcheck.h -- the plan and the verdict of dtrun --check --deep, without
 * any I/O: check.c sends each round's PAIRs and hands the answers back.
 *
 * Every round is a permutation: host i measures the path to host
 * (i + k) mod N, so each host sends once and receives once, all at the
 * same time, as a ring all-reduce loads the network. The ring (k = 1),
 * then across the middle (k = N/2: the bisection), each first as round
 * trips alone and then as bytes over parallel streams. Two rounds give
 * every host two peers each way, which is enough to tell a host's slow
 * link (all its pairs slow in one direction) from one slow path between
 * two hosts; the rounds do not grow with N, only each round's pairs.
 * Then the pairs found slow are measured once more, alone (at most four
 * rounds more, only when some are): a pair slow by chance is not slow
 * twice.
 */
#ifndef DT_DEEPCHECK_H
#define DT_DEEPCHECK_H

#include <stddef.h>
#include <stdint.h>

struct strv;
struct deepcheck;

#define DEEP_STREAMS_DEFAULT	4	/* without NCCL's own counts */

/*
 * A pair is slow when its throughput is under DEEP_SLOW_BW_PCT percent of
 * the median pair's, or its round trip over DEEP_SLOW_RTT_X times the
 * median's and DEEP_SLOW_RTT_US more: a tenth of the speed or 20 ms more
 * is found; the noise of a busy host (a few tens of percent, a
 * millisecond) is not.
 */
#define DEEP_SLOW_BW_PCT	50
#define DEEP_SLOW_RTT_X		3
#define DEEP_SLOW_RTT_US	5000

/* A round: what each host measures. */
struct deep_round {
	const char	*name;		/* "ring", "bisection" */
	uint64_t	 bytes;		/* 0: round trips */
	uint32_t	 streams;
	size_t		 offset;	/* host i -> (i + offset) mod n */
	int		 again;		/* confirming: only the slow pairs */
};

/*
 * A plan over n hosts, of which those with ok[i] set can take part (they
 * listen); bytes and streams for the throughput rounds. judge 0: figures
 * only (simulated hosts on one machine), no pair is ever slow.
 */
struct deepcheck *deepcheck_new(size_t n, const int *ok, uint64_t bytes,
		    uint32_t streams, int judge);
void		 deepcheck_free(struct deepcheck *);

/*
 * The next round, or NULL when there is none left. to[i] is the host i
 * measures (SIZE_MAX: none this round); to has n slots.
 */
const struct deep_round *deepcheck_next(struct deepcheck *, size_t *to);

/* Host i's answers to the round deepcheck_next gave last. */
void		 deepcheck_answer(struct deepcheck *, size_t i,
		    char *const *kv, size_t nkv);

/*
 * The verdict, once every round is answered: a problem line per slow
 * host, slow link or failed pair, each with its fix, added to problems
 * (names: the hosts'; ifaces: each one's interface, or NULL); named[i]
 * (n slots, or NULL) counts the lines that name host i.
 */
void		 deepcheck_verdict(struct deepcheck *, const char *const *names,
		    const char *const *ifaces, struct strv *problems,
		    size_t *named);

/*
 * The measurements for people: the pairs as table rows (with rows set)
 * and one summary line ("deep: 8 pairs in 4 rounds: median round trip
 * ..."), both into the caller's strv.
 */
void		 deepcheck_report(struct deepcheck *, const char *const *names,
		    int rows, struct strv *out);

#endif
