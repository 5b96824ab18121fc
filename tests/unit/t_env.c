/* t_env.c -- the ranks' environment: DTRUN_*, each framework, -x, seeds. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/agentproto.h"
#include "launcher/cli/cli.h"
#include "common/err.h"
#include "launcher/plan/framework.h"
#include "launcher/plan/netplan.h"
#include "launcher/plan/plan.h"
#include "launcher/plan/rankenv.h"
#include "util/strv.h"
#include "test.h"

/* Two hosts, gpu1 with 3 ranks and gpu2 with 1: uneven on purpose. */
static int		h1ranks[3] = { 0, 1, 2 }, h2ranks[1] = { 3 };
static struct plan_host	hosts[2] = {
	{ .name = "gpu1", .nranks = 3, .nworkers = 3, .ranks = h1ranks },
	{ .name = "gpu2", .nranks = 1, .nworkers = 1, .ranks = h2ranks },
};
static struct plan_rank	ranks[4] = {
	{ .host = 0, .local_rank = 0, .slot = 0, .role = HF_ROLE_WORKER },
	{ .host = 0, .local_rank = 1, .slot = 1, .role = HF_ROLE_WORKER },
	{ .host = 0, .local_rank = 2, .slot = 2, .role = HF_ROLE_WORKER },
	{ .host = 1, .local_rank = 0, .slot = 0, .role = HF_ROLE_WORKER },
};
static struct plan	two = { .hosts = hosts, .nhosts = 2, .nnodes = 2,
			    .ranks = ranks, .nranks = 4, .nworkers = 4 };
static int		wports[4] = { 5000, 5001, 5002, 6000 };

/* A context for plan p with frameworks fw and the user's -x list. */
static void
ctx(struct env_ctx *c, struct opts *o, struct plan *p, unsigned fw)
{
	memset(c, 0, sizeof(*c));
	c->o = o;
	c->plan = p;
	c->job_id = "job1";
	c->frameworks = fw;
	snprintf(c->master_addr, sizeof(c->master_addr), "gpu1");
	c->master_port = 29400;
	c->ps_port = 29401;
	c->worker_ports = wports;
}

/* The variables of host h (rank < 0) or rank r, joined by spaces. */
static char *
joined(const struct env_ctx *c, int h, int r)
{
	static char	buf[8192];
	struct strv	sv = { 0 };
	size_t		i, off = 0;

	if (r < 0)
		env_host(c, h, &sv);
	else
		env_rank(c, r, &sv);
	buf[0] = '\0';
	for (i = 0; i < sv.n; i++)
		off += snprintf(buf + off, sizeof(buf) - off, "%s%s",
		    i ? " " : "", sv.v[i]);
	strv_free(&sv);
	return buf;
}

TEST(env_none_only_dtrun)
{
	struct opts	o = { 0 };
	struct env_ctx	c;

	ctx(&c, &o, &two, FW_NONE);
	CHECK_STR(joined(&c, 1, -1), "DTRUN_JOB_ID=job1 DTRUN_HOST=gpu2 "
	    "DTRUN_WORLD_SIZE=4 DTRUN_LOCAL_WORLD_SIZE=1 DTRUN_NODE_RANK=1 "
	    "DTRUN_NNODES=2 DTRUN_RESTART_COUNT=0 DTRUN_MAX_RESTARTS=0");
	CHECK_STR(joined(&c, 0, 2), "DTRUN_RANK=2 DTRUN_LOCAL_RANK=2");
}

TEST(env_pytorch)
{
	struct opts	o = { 0 };
	struct env_ctx	c;

	ctx(&c, &o, &two, FW_PYTORCH);
	strcpy(c.ifname, "eth0");
	c.nccl_ifname = 1;
	CHECK_STR(joined(&c, 1, -1), "DTRUN_JOB_ID=job1 DTRUN_HOST=gpu2 "
	    "DTRUN_WORLD_SIZE=4 DTRUN_LOCAL_WORLD_SIZE=1 DTRUN_NODE_RANK=1 "
	    "DTRUN_NNODES=2 DTRUN_RESTART_COUNT=0 DTRUN_MAX_RESTARTS=0 "
	    "TORCHELASTIC_RESTART_COUNT=0 TORCHELASTIC_MAX_RESTARTS=0 "
	    "WORLD_SIZE=4 LOCAL_WORLD_SIZE=1 NODE_RANK=1 "
	    "GROUP_RANK=1 GROUP_WORLD_SIZE=2 NNODES=2 ROLE_WORLD_SIZE=4 "
	    "ROLE_NAME=default "
	    "TORCHELASTIC_RUN_ID=job1 TORCHELASTIC_USE_AGENT_STORE=False "
	    "MASTER_ADDR=gpu1 MASTER_PORT=29400 "
	    "TORCH_NCCL_ASYNC_ERROR_HANDLING=1 NCCL_ASYNC_ERROR_HANDLING=1 "
	    "NCCL_SOCKET_IFNAME=eth0");
	CHECK_STR(joined(&c, 0, 3), "DTRUN_RANK=3 DTRUN_LOCAL_RANK=0 RANK=3 "
	    "LOCAL_RANK=0 ROLE_RANK=3");
	/* The user's GLOO_SOCKET_IFNAME is kept: both flags off, none set. */
	c.nccl_ifname = 0;
	CHECK(strstr(joined(&c, 0, -1), "SOCKET_IFNAME") == NULL);
}

TEST(env_tf_config_exact)
{
	struct opts	o = { 0 };
	struct env_ctx	c;
	char		*tf;

	ctx(&c, &o, &two, FW_TENSORFLOW);
	tf = fw_tf_config(&c, 3);
	CHECK_STR(tf, "{\"cluster\":{\"worker\":[\"gpu1:5000\",\"gpu1:5001\","
	    "\"gpu1:5002\",\"gpu2:6000\"]},\"task\":{\"type\":\"worker\","
	    "\"index\":3}}");
	free(tf);
	CHECK_STR(joined(&c, 0, 0), "DTRUN_RANK=0 DTRUN_LOCAL_RANK=0 "
	    "TF_CONFIG={\"cluster\":{\"worker\":[\"gpu1:5000\",\"gpu1:5001\","
	    "\"gpu1:5002\",\"gpu2:6000\"]},\"task\":{\"type\":\"worker\","
	    "\"index\":0}}");
	/* TensorFlow has no host part. */
	CHECK(strstr(joined(&c, 0, -1), "TF_") == NULL);
}

TEST(env_tf_config_local_and_escaped)
{
	static struct plan_host	 h1[1] = { { .name = "a\"b", .nranks = 2,
				     .nworkers = 2 } };
	static struct plan_rank	 r1[2] = { { .host = 0, .local_rank = 0 },
				     { .host = 0, .local_rank = 1, .slot = 1 } };
	struct plan		 one = { .hosts = h1, .nhosts = 1, .nnodes = 1,
				     .ranks = r1, .nranks = 2, .nworkers = 2, .local = 1 };
	struct opts		 o = { 0 };
	struct env_ctx		 c;
	char			*tf;

	/* Locally every worker is at the master's address. */
	ctx(&c, &o, &one, FW_TENSORFLOW);
	strcpy(c.master_addr, "127.0.0.1");
	tf = fw_tf_config(&c, 1);
	CHECK_STR(tf, "{\"cluster\":{\"worker\":[\"127.0.0.1:5000\","
	    "\"127.0.0.1:5001\"]},\"task\":{\"type\":\"worker\",\"index\":1}}");
	free(tf);
	one.local = 0;
	tf = fw_tf_config(&c, 0);
	CHECK_STR(tf, "{\"cluster\":{\"worker\":[\"a\\\"b:5000\","
	    "\"a\\\"b:5001\"]},\"task\":{\"type\":\"worker\",\"index\":0}}");
	free(tf);
}

TEST(env_horovod_cross)
{
	struct opts	o = { 0 };
	struct env_ctx	c;

	ctx(&c, &o, &two, FW_HOROVOD);
	CHECK_STR(joined(&c, 0, -1) + strlen("DTRUN_JOB_ID=job1 DTRUN_HOST="
	    "gpu1 DTRUN_WORLD_SIZE=4 DTRUN_LOCAL_WORLD_SIZE=3 DTRUN_NODE_RANK=0 "
	    "DTRUN_NNODES=2 DTRUN_RESTART_COUNT=0 DTRUN_MAX_RESTARTS=0 "),
	    "HOROVOD_SIZE=4 HOROVOD_LOCAL_SIZE=3 "
	    "HOROVOD_HOSTNAME=gpu1");
	/* Local rank 0 exists on both hosts; local rank 1 only on gpu1. */
	CHECK_STR(joined(&c, 0, 3), "DTRUN_RANK=3 DTRUN_LOCAL_RANK=0 "
	    "HOROVOD_RANK=3 HOROVOD_LOCAL_RANK=0 HOROVOD_CROSS_RANK=1 "
	    "HOROVOD_CROSS_SIZE=2");
	CHECK_STR(joined(&c, 0, 1), "DTRUN_RANK=1 DTRUN_LOCAL_RANK=1 "
	    "HOROVOD_RANK=1 HOROVOD_LOCAL_RANK=1 HOROVOD_CROSS_RANK=0 "
	    "HOROVOD_CROSS_SIZE=1");
}

TEST(env_mpi_and_mxnet)
{
	struct opts	o = { 0 };
	struct env_ctx	c;

	ctx(&c, &o, &two, FW_MPI | FW_MXNET);
	strcpy(c.ifname, "ib0");
	CHECK(strstr(joined(&c, 1, -1), " DMLC_ROLE=worker DMLC_NUM_WORKER=4 "
	    "DMLC_NUM_SERVER=0 DMLC_PS_ROOT_URI=gpu1 DMLC_PS_ROOT_PORT=29401 "
	    "DMLC_NODE_HOST=gpu2 DMLC_INTERFACE=ib0 OMPI_COMM_WORLD_SIZE=4 "
	    "OMPI_COMM_WORLD_LOCAL_SIZE=1 PMI_SIZE=4 MPI_LOCALNRANKS=1") !=
	    NULL);
	CHECK_STR(joined(&c, 0, 2), "DTRUN_RANK=2 DTRUN_LOCAL_RANK=2 "
	    "DMLC_WORKER_ID=2 OMPI_COMM_WORLD_RANK=2 "
	    "OMPI_COMM_WORLD_LOCAL_RANK=2 OMPI_COMM_WORLD_NODE_RANK=2 "
	    "PMI_RANK=2 MPI_LOCALRANKID=2");
}

TEST(env_export_wins)
{
	char		*ex[] = { "RANK=99", "PMI_RANK=7", "FOO=bar" };
	struct opts	 o = { 0 };
	struct env_ctx	 c;

	o.exports = ex;
	o.nexports = 3;
	ctx(&c, &o, &two, FW_PYTORCH | FW_MPI);
	/* -x ends the host part, and the rank part leaves those names out. */
	CHECK(strstr(joined(&c, 0, -1), "RANK=99 PMI_RANK=7 FOO=bar") != NULL);
	CHECK_STR(joined(&c, 0, 1), "DTRUN_RANK=1 DTRUN_LOCAL_RANK=1 "
	    "LOCAL_RANK=1 ROLE_RANK=1 OMPI_COMM_WORLD_RANK=1 "
	    "OMPI_COMM_WORLD_LOCAL_RANK=1 OMPI_COMM_WORLD_NODE_RANK=1 "
	    "MPI_LOCALRANKID=1");
}

TEST(env_seed)
{
	struct opts	o = { 0 };
	struct env_ctx	c;

	/* SplitMix64's first output for seed 0 is 0xe220a8397b1dcdaf. */
	CHECK(env_rank_seed(0, 0) == 0xe220a8397b1dcdafULL >> 1);
	CHECK(env_rank_seed(0, 1) == 3980143261097177850ULL);
	CHECK(env_rank_seed(42, 3) == 3174599030129127882ULL);
	CHECK(env_rank_seed(UINT64_MAX, 7) == 2319021877215838258ULL);
	o.seed = 42;
	o.seeded = 1;
	ctx(&c, &o, &two, FW_NONE);
	CHECK(strstr(joined(&c, 0, -1), "DTRUN_SEED=42") != NULL);
	CHECK_STR(joined(&c, 0, 0), "DTRUN_RANK=0 DTRUN_LOCAL_RANK=0 "
	    "DTRUN_RANK_SEED=6839728766377637706");
}

TEST(framework_parse)
{
	struct dt_err	e;
	unsigned	m = 0;

	CHECK_INT(fw_parse("pytorch", &m, &e), 0);
	CHECK_INT(m, FW_PYTORCH);
	CHECK_INT(fw_parse("tensorflow,mpi", &m, &e), 0);
	CHECK_INT(fw_parse("horovod", &m, &e), 0);
	CHECK_INT(m, FW_PYTORCH | FW_TENSORFLOW | FW_MPI | FW_HOROVOD);
	CHECK_INT(fw_check(m, &e), 0);
	CHECK_INT(fw_parse("mxnet,tensorflw", &m, &e), DT_ERR_INVAL);
	CHECK_STR(e.msg, "--framework \"tensorflw\": unknown (did you mean "
	    "tensorflow?)");
	CHECK_INT(fw_parse("torch", &m, &e), DT_ERR_INVAL);
	CHECK(strstr(e.msg, "did you mean pytorch?") != NULL);
	CHECK_INT(fw_parse("jax", &m, &e), DT_ERR_INVAL);
	CHECK_STR(e.msg, "--framework \"jax\": unknown (known: pytorch "
	    "tensorflow mxnet horovod mpi none)");
	CHECK_INT(fw_parse("mpi,", &m, &e), DT_ERR_INVAL);
	m = 0;
	CHECK_INT(fw_parse("none", &m, &e), 0);
	CHECK_INT(fw_check(m, &e), 0);
	CHECK_INT(fw_parse("mpi", &m, &e), 0);
	CHECK_INT(fw_check(m, &e), DT_ERR_INVAL);
}

TEST(cli_framework_seed_iface)
{
	char		*a1[] = { "dtrun", "true", NULL };
	char		*a2[] = { "dtrun", "--framework", "tensorflow",
			    "--framework", "mpi", "--seed", "18446744073709551615",
			    "--iface", "eth0", "true", NULL };
	char		*a3[] = { "dtrun", "--seed", "18446744073709551616",
			    "true", NULL };
	struct opts	 o;
	struct dt_err	 e;

	CHECK_INT(cli_parse(2, a1, &o, &e), CLI_RUN);
	CHECK_INT(o.frameworks, FW_DEFAULT);
	CHECK(!o.seeded && o.iface == NULL);
	cli_free(&o);
	CHECK_INT(cli_parse(10, a2, &o, &e), CLI_RUN);
	CHECK_INT(o.frameworks, FW_TENSORFLOW | FW_MPI);
	CHECK(o.seeded && o.seed == UINT64_MAX);
	CHECK_STR(o.iface, "eth0");
	cli_free(&o);
	CHECK_INT(cli_parse(4, a3, &o, &e), DT_ERR_INVAL);
	CHECK(strstr(e.msg, "--seed") != NULL);
}

TEST(env_cuda_visible_devices_from_filter)
{
	static int		 r0[2] = { 0, 1 }, r1[1] = { 2 };
	static struct plan_host	 h[2] = {
		{ .name = "w", .nranks = 2, .nworkers = 2, .ranks = r0,
		  .devices = "2,3" },
		{ .name = "v", .nranks = 1, .nworkers = 1, .ranks = r1 },
	};
	static struct plan_rank	 r[3] = {
		{ .host = 0, .local_rank = 0, .slot = 2 },
		{ .host = 0, .local_rank = 1, .slot = 3 },
		{ .host = 1, .local_rank = 0, .slot = 0 },
	};
	struct plan		 p = { .hosts = h, .nhosts = 2, .nnodes = 2,
				     .ranks = r, .nranks = 3, .nworkers = 3 };
	char			*x[] = { "CUDA_VISIBLE_DEVICES=7" };
	struct opts		 o = { 0 };
	struct env_ctx		 c;

	ctx(&c, &o, &p, FW_NONE);
	CHECK_STR(joined(&c, 0, -1), "DTRUN_JOB_ID=job1 DTRUN_HOST=w "
	    "DTRUN_WORLD_SIZE=3 DTRUN_LOCAL_WORLD_SIZE=2 DTRUN_NODE_RANK=0 "
	    "DTRUN_NNODES=2 DTRUN_RESTART_COUNT=0 DTRUN_MAX_RESTARTS=0 "
	    "CUDA_VISIBLE_DEVICES=2,3");
	/* A host the filter left whole is left alone. */
	CHECK(strstr(joined(&c, 1, -1), "CUDA_VISIBLE_DEVICES") == NULL);
	/* -x wins. */
	o.exports = x;
	o.nexports = 1;
	CHECK(strstr(joined(&c, 0, -1), "CUDA_VISIBLE_DEVICES=2,3 "
	    "CUDA_VISIBLE_DEVICES=7") != NULL);
}

TEST(env_per_host_interfaces)
{
	char		 cands[64];
	struct opts	 o = { 0 };
	struct env_ctx	 c;

	o.iface = "gpu2=ib0,gpu2=ib1,eth0";
	ctx(&c, &o, &two, FW_PYTORCH | FW_MXNET);
	strcpy(c.ifname, "eth0");
	c.nccl_ifname = c.gloo_ifname = 1;
	/* dtrun's choice for every host: in the host part, not in JOB. */
	CHECK(strstr(joined(&c, 1, -1), "NCCL_SOCKET_IFNAME=eth0") != NULL);
	CHECK_INT(env_host_iface(&c, 1, cands, sizeof(cands)), 0);
	CHECK_STR(cands, "");
	/* Each agent's own: only in JOB, with its host's candidates. */
	c.per_host = 1;
	CHECK(strstr(joined(&c, 1, -1), "IFNAME") == NULL);
	CHECK(strstr(joined(&c, 1, -1), "DMLC_INTERFACE") == NULL);
	CHECK_INT(env_host_iface(&c, 1, cands, sizeof(cands)),
	    AP_IF_NCCL | AP_IF_GLOO | AP_IF_DMLC);
	CHECK_STR(cands, "ib0,ib1");
	c.nccl_ifname = 0;
	c.frameworks = FW_PYTORCH;
	CHECK_INT(env_host_iface(&c, 0, cands, sizeof(cands)), AP_IF_GLOO);
	CHECK_STR(cands, "eth0");
	o.iface = NULL;
	CHECK_INT(env_host_iface(&c, 0, cands, sizeof(cands)), AP_IF_GLOO);
	CHECK_STR(cands, "");
}

TEST(env_prepare_over_hosts)
{
	static struct plan_host	 h[2] = {
		{ .name = "10.255.255.1", .nranks = 1, .nworkers = 1 },
		{ .name = "gpu2", .nranks = 1, .nworkers = 1 },
	};
	struct plan	 p = two;
	struct opts	 o = { 0 };
	struct env_ctx	 c;
	struct dt_err	 e;
	int		 rc;

	p.hosts = h;
	rc = env_prepare(&c, &o, &p, "job1", &e);
	/* A machine with only a loopback has nothing to give. */
	if (rc == DT_ERR_NOTFOUND)
		return;
	CHECK_INT(rc, 0);
	CHECK(c.per_host);
	CHECK_STR(c.rank0_addr, "10.255.255.1");
	CHECK_STR(c.master_addr, "10.255.255.1");
	env_release(&c);
	/* Rank 0 named by a loopback address, hosts elsewhere: it is here. */
	h[0].name = "127.0.0.1";
	CHECK_INT(env_prepare(&c, &o, &p, "job1", &e), 0);
	CHECK(strncmp(c.master_addr, "127.", 4) != 0);
	CHECK_STR(c.master_addr, c.ifaddr);
	CHECK_STR(c.rank0_addr, c.ifaddr);
	env_release(&c);
	h[0].name = "10.255.255.1";
}

TEST(cli_iface_list_checked)
{
	char		*a1[] = { "dtrun", "--iface", "gpu1=ib0,eth0", "true",
			    NULL };
	char		*a2[] = { "dtrun", "--iface", "ib0,,eth0", "true", NULL };
	struct opts	 o;
	struct dt_err	 e;

	CHECK_INT(cli_parse(4, a1, &o, &e), CLI_RUN);
	CHECK_STR(o.iface, "gpu1=ib0,eth0");
	cli_free(&o);
	CHECK(cli_parse(4, a2, &o, &e) < 0);
	CHECK(strstr(e.msg, "HOST=IFACE") != NULL);
	cli_free(&o);
}
