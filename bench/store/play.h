/*
 * play.h -- one simulated rank's TCPStore conversation in torch 1.13's
 * init_process_group(init_method="env://") with TORCHELASTIC_USE_AGENT_STORE
 * =True, as bytes: what the rank sends (legacy opcodes, little-endian) and
 * what it expects back. The driver moves the bytes (a TCP socket in
 * storeload, STORE frames in storeagent) and the timers; this file knows
 * only the sequence, read from torch 1.13's Python and C++ source and the
 * recordings in tests/data/store (doc/store.md, "The init load").
 */
#ifndef BENCH_STORE_PLAY_H
#define BENCH_STORE_PLAY_H

#include <stddef.h>
#include <stdint.h>

#include "common/wire.h"

#define TP_POLL_MS	10	/* _store_based_barrier's time.sleep(0.01) */
#define TP_ID_LEN	128	/* NCCL_UNIQUE_ID_BYTES */
#define TP_GLOO_ADDR	136	/* gloo's address bytes per peer (408 for 4 ranks) */

enum tp_backend { TP_NCCL, TP_GLOO };

/* What the rank does next (tp_run's answer). */
enum tp_next {
	TP_REPLY,	/* it waits for a reply: feed it with tp_feed */
	TP_SLEEP,	/* the barrier's poll: call tp_run again TP_POLL_MS later */
	TP_DONE,	/* init done (and the NCCL id had) */
	TP_FAIL,	/* a reply was wrong: tp_job.why says how */
};

/* The job's shape and its tallies over every rank. */
struct tp_job {
	enum tp_backend	 be;
	uint32_t	 world;
	uint32_t	 done;		/* ranks at TP_DONE */
	uint64_t	 queries;	/* sent by all ranks */
	uint64_t	 polls;		/* barrier ADD(key, 0)s among them */
	char		 why[160];	/* the first failure */
};

/* One rank: where its script is and the reply it is reading. */
struct tp_rank {
	uint32_t	 rank;
	uint8_t		 step;
	uint8_t		 sub;
	uint8_t		 want;		/* the reply kind awaited */
	uint8_t		 hhave;		/* bytes of hdr read */
	uint8_t		 vkind;		/* what the value must hold */
	uint32_t	 peer;		/* gloo's loop over the other ranks */
	uint32_t	 vwho;		/* the rank that SET it */
	uint8_t		 hdr[8];
	uint64_t	 vlen, vhave;	/* a GET's value: length, bytes read */
	uint64_t	 vneed;		/* the length it must have */
	int64_t		 count;		/* the last ADD's answer */
	int		 bad;		/* the value differs from what was SET */
};

/* Readies r as rank number rank of job j. */
void		tp_rank_init(struct tp_rank *r, uint32_t rank);

/* Appends r's next queries to out, up to one that needs a reply. */
enum tp_next	tp_run(struct tp_job *j, struct tp_rank *r, struct dt_wbuf *out);

/*
 * Reads reply bytes for r; *used says how many it took. Returns 1 when the
 * awaited reply is whole (call tp_run next), 0 when it needs more, -1 when
 * it is wrong (j->why says how).
 */
int		tp_feed(struct tp_job *j, struct tp_rank *r, const uint8_t *p,
		    size_t n, size_t *used);

/* CLOCK_REALTIME in ns: the agents' times compare across processes. */
long long	tp_now_ns(void);

/* Parses "nccl" or "gloo"; -1 if neither. */
int		tp_backend(const char *name);

#endif
