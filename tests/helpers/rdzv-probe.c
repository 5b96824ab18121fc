/*
 * rdzv-probe.c -- a worker that only uses libdtcomm, for scenario tests:
 *
 *	rdzv-probe [-j] [-f] [-b] [-c] [-d SECS] [-h SECS]
 *
 * Joins (dtcomm_init), fetches the NCCL id (rank 0 makes it) and prints
 *	rank R size S local L id <hex of the id's first 16 bytes>
 * -j only joins and prints "rank R size S local L node N nodes M".
 * -f also prints "idfull <hex of all 128 bytes>", -b ends with a barrier,
 * -c also makes the NCCL communicator, -d sleeps before joining, -h writes
 * nothing for SECS after joining but calls dtcomm_heartbeat() every 0.2 s
 * (a quiet rank that is alive, for --hang-timeout). Errors go
 * to stderr as "rdzv-probe: CALL: NAME: DETAIL"; the exit code is 1, or 4
 * when only the communicator failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comm/dtcomm.h"

/* Prints a failed call and exits with code. */
static void
fail(const char *call, int rc, int code)
{
	fprintf(stderr, "rdzv-probe: %s: %s: %s\n", call, dtcomm_strerror(rc),
	    dtcomm_last_error());
	exit(code);
}

/* Prints p[0..n) as hex. */
static void
print_hex(const unsigned char *p, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		printf("%02x", p[i]);
}

int
main(int argc, char **argv)
{
	struct dtcomm	*c;
	unsigned char	 id[DTCOMM_ID_BYTES];
	void		*comm = NULL;
	double		 beat = 0;
	int		 ch, full = 0, barrier = 0, mkcomm = 0, joinonly = 0, rc;

	while ((ch = getopt(argc, argv, "bcd:fh:j")) != -1) {
		switch (ch) {
		case 'b':
			barrier = 1;
			break;
		case 'c':
			mkcomm = 1;
			break;
		case 'd':
			usleep((useconds_t)(atof(optarg) * 1e6));
			break;
		case 'f':
			full = 1;
			break;
		case 'h':
			beat = atof(optarg);
			break;
		case 'j':
			joinonly = 1;
			break;
		default:
			fprintf(stderr, "usage: rdzv-probe [-bcfj] [-d SECS] "
			    "[-h SECS]\n");
			return 1;
		}
	}
	if ((rc = dtcomm_init(&c)) != 0)
		fail("dtcomm_init", rc, 1);
	if (joinonly) {
		printf("rank %d size %d local %d node %d nodes %d\n",
		    dtcomm_rank(c), dtcomm_size(c), dtcomm_local_rank(c),
		    dtcomm_node_rank(c), dtcomm_num_nodes(c));
		fflush(stdout);
		for (; beat > 0; beat -= 0.2) {
			if ((rc = dtcomm_heartbeat(c)) != 0)
				fail("dtcomm_heartbeat", rc, 1);
			usleep(200000);
		}
		if (barrier && (rc = dtcomm_barrier(c)) != 0)
			fail("dtcomm_barrier", rc, 1);
		dtcomm_free(c);
		return 0;
	}
	if ((rc = dtcomm_nccl_id(c, id)) != 0)
		fail("dtcomm_nccl_id", rc, 1);
	printf("rank %d size %d local %d id ", dtcomm_rank(c), dtcomm_size(c),
	    dtcomm_local_rank(c));
	print_hex(id, 16);
	printf("\n");
	if (full) {
		printf("idfull ");
		print_hex(id, sizeof(id));
		printf("\n");
	}
	fflush(stdout);
	if (barrier && (rc = dtcomm_barrier(c)) != 0)
		fail("dtcomm_barrier", rc, 1);
	if (mkcomm && (rc = dtcomm_nccl_comm(c, &comm)) != 0)
		fail("dtcomm_nccl_comm", rc, 4);
	if (mkcomm)
		printf("comm ok\n");
	dtcomm_free(c);
	return 0;
}
