/*
 * MPI and Slurm jobs (collectors/launcher.c, issue 29): the launcher a
 * command names, the job's rank count, the arguments profile adds, --ranks,
 * and each process's rank. With a real mpirun (Open MPI) where it is
 * installed: run_request_run starts a 3-rank job of this very program in
 * its recording mode, and every rank receives cacheadvise's variables and
 * knows whether it is measured.
 *
 *   test_launcher --record DIR        (a rank: writes DIR/rank-N.txt)
 *   test_launcher --run-job DIR RANKS -- LAUNCHER ARGS...
 *                                     (runs a job through run_request_run)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/strbuf.h"
#include "base/xalloc.h"
#include "collectors/launcher.h"
#include "collectors/run_request.h"
#include "collectors/runner.h"
#include "tests/unit/check.h"

static int record(const char *dir)
{
	int rank = launcher_rank();
	char *path = xasprintf("%s/rank-%d.txt", dir, rank);
	FILE *f = fopen(path, "w");
	const char *inj = getenv("CUDA_INJECTION64_PATH"), *out = getenv("CACHEADVISE_OUT");
	const char *ranks = getenv("CACHEADVISE_RANKS");

	if (!f)
		return 1;
	fprintf(f, "rank=%d\nmeasured=%d\ninjection=%s\nout=%s\nranks=%s\n", rank,
		launcher_rank_measured(), inj ? inj : "", out ? out : "", ranks ? ranks : "");
	fclose(f);
	free(path);
	return 0;
}

/* A job through run_request_run, as profile runs one. */
static int run_job(const char *dir, const char *ranks, char **argv)
{
	struct run_request req;
	struct run_spec spec;
	struct run_result res;
	char *log = xasprintf("%s/job.log", dir);

	memset(&req, 0, sizeof(req));
	memset(&spec, 0, sizeof(spec));
	req.inject_path = "/opt/cacheadvise-test/libcacheadvise_inject.so";
	req.events_dir = dir;
	req.ranks = ranks;
	spec.argv = argv;
	spec.log_path = log;
	spec.timeout_seconds = 120;
	if (run_request_run(&req, &spec, &res) || res.status != RUN_OK || res.exit_code) {
		fprintf(stderr, "the job failed (status %d, exit %d): see %s\n", (int)res.status,
			res.exit_code, log);
		free(log);
		return 1;
	}
	free(log);
	return 0;
}

static void test_launcher_of(void)
{
	CHECK_INT(launcher_of("mpirun"), LAUNCHER_OPENMPI);
	CHECK_INT(launcher_of("/usr/bin/mpiexec"), LAUNCHER_OPENMPI);
	CHECK_INT(launcher_of("srun"), LAUNCHER_SLURM);
	CHECK_INT(launcher_of("./app"), LAUNCHER_NONE);
	CHECK_INT(launcher_of("python3"), LAUNCHER_NONE);
}

static void test_job_ranks(void)
{
	char *a1[] = { "--allow-run-as-root", "-np", "2", "./app", "-n", "9" };
	char *a2[] = { "-n", "16", "./app" };
	char *a3[] = { "--ntasks=4", "./app" };
	char *a4[] = { "./app", "-np", "3" };
	char *a5[] = { "-x", "FOO", "./app" };

	CHECK_INT(launcher_job_ranks(LAUNCHER_OPENMPI, a1, 6), 2);
	CHECK_INT(launcher_job_ranks(LAUNCHER_OPENMPI, a2, 3), 16);
	CHECK_INT(launcher_job_ranks(LAUNCHER_SLURM, a3, 2), 4);
	CHECK_INT(launcher_job_ranks(LAUNCHER_SLURM, a2, 3), 16);
	CHECK_INT(launcher_job_ranks(LAUNCHER_OPENMPI, a4, 3), 0);   /* the app's own -np */
	CHECK_INT(launcher_job_ranks(LAUNCHER_OPENMPI, a5, 3), 0);
	CHECK_INT(launcher_job_ranks(LAUNCHER_NONE, a2, 3), 0);
}

static void test_args(void)
{
	char *args[] = { "-np", "2", "./app" };
	char *srun[] = { "--export=NONE", "./app" };
	char *env[] = { "CUDA_INJECTION64_PATH=/x/lib.so", "CACHEADVISE_OUT=/o", NULL };
	const char *warning;
	char **out;
	size_t n;

	out = launcher_args(LAUNCHER_OPENMPI, args, 3, env, &n, &warning);
	CHECK_INT(n, 7);
	CHECK(n == 7 && !strcmp(out[0], "-x") && !strcmp(out[1], "CUDA_INJECTION64_PATH") &&
	      !strcmp(out[2], "-x") && !strcmp(out[3], "CACHEADVISE_OUT") &&
	      !strcmp(out[4], "-np") && !strcmp(out[6], "./app") && !out[7]);
	CHECK(warning == NULL);
	launcher_args_free(out);
	out = launcher_args(LAUNCHER_SLURM, args, 3, env, &n, &warning);
	CHECK(n == 3 && !strcmp(out[0], "-np") && warning == NULL);
	launcher_args_free(out);
	out = launcher_args(LAUNCHER_SLURM, srun, 2, env, &n, &warning);
	CHECK(n == 2 && warning && strstr(warning, "--export"));
	launcher_args_free(out);
}

static void test_ranks(void)
{
	struct rank_set s;

	CHECK_INT(launcher_ranks_parse("all", &s), 0);
	CHECK(s.all && launcher_rank_in(&s, 12345));
	CHECK_INT(launcher_ranks_parse("0,2-3,7", &s), 0);
	CHECK(launcher_rank_in(&s, 0) && !launcher_rank_in(&s, 1) && launcher_rank_in(&s, 2) &&
	      launcher_rank_in(&s, 3) && !launcher_rank_in(&s, 4) && launcher_rank_in(&s, 7));
	CHECK_INT(launcher_ranks_parse("", &s), -1);
	CHECK_INT(launcher_ranks_parse("1,", &s), -1);
	CHECK_INT(launcher_ranks_parse("3-1", &s), -1);
	CHECK_INT(launcher_ranks_parse("-1", &s), -1);
	CHECK_INT(launcher_ranks_parse("a", &s), -1);
	CHECK_INT(launcher_ranks_parse("1-", &s), -1);
	/* issue 36: a number strtol saturates, or a blank before one, is refused */
	CHECK_INT(launcher_ranks_parse("99999999999999999999", &s), -1);
	CHECK_INT(launcher_ranks_parse("0-99999999999999999999", &s), -1);
	CHECK_INT(launcher_ranks_parse(" 1", &s), -1);
	CHECK_INT(launcher_ranks_parse("1, 2", &s), -1);

	unsetenv("OMPI_COMM_WORLD_RANK");
	unsetenv("PMIX_RANK");
	unsetenv("PMI_RANK");
	unsetenv("SLURM_PROCID");
	unsetenv("CACHEADVISE_RANKS");
	CHECK_INT(launcher_rank(), -1);
	CHECK(launcher_rank_measured());          /* no job: every process */
	setenv("SLURM_PROCID", "5", 1);
	CHECK_INT(launcher_rank(), 5);
	setenv("OMPI_COMM_WORLD_RANK", "3", 1);   /* Open MPI's first */
	CHECK_INT(launcher_rank(), 3);
	setenv("CACHEADVISE_RANKS", "0-2", 1);
	CHECK(!launcher_rank_measured());
	setenv("CACHEADVISE_RANKS", "3", 1);
	CHECK(launcher_rank_measured());
	unsetenv("OMPI_COMM_WORLD_RANK");
	unsetenv("SLURM_PROCID");
	unsetenv("CACHEADVISE_RANKS");
}

/* A real mpirun: 3 ranks, ranks 0 and 2 measured. */
static void test_mpirun(const char *self)
{
	char dir[] = "/tmp/test_launcher_XXXXXX";
	const char *mpirun = NULL;
	char *argv[12], *cmd;
	int r;

	if (!access("/usr/bin/mpirun", X_OK))
		mpirun = "/usr/bin/mpirun";
	else if (system("command -v mpirun >/dev/null 2>&1") == 0)
		mpirun = "mpirun";
	if (!mpirun) {
		printf("no mpirun: the job through a real launcher is not tested here\n");
		return;
	}
	CHECK(mkdtemp(dir) != NULL);
	argv[0] = (char *)mpirun;
	argv[1] = "--allow-run-as-root";
	argv[2] = "--oversubscribe";
	argv[3] = "-np";
	argv[4] = "3";
	argv[5] = (char *)self;
	argv[6] = "--record";
	argv[7] = dir;
	argv[8] = NULL;
	CHECK_INT(run_job(dir, "0,2", argv), 0);
	for (r = 0; r < 3; r++) {
		struct strbuf sb = STRBUF_INIT;
		char *path = xasprintf("%s/rank-%d.txt", dir, r), *want;

		CHECK_INT(strbuf_read_file(&sb, path, 0), 0);
		want = xasprintf("rank=%d\nmeasured=%d\n", r, r != 1);
		CHECK(sb.buf && strstr(sb.buf, want) != NULL);
		CHECK(sb.buf && strstr(sb.buf, "injection=/opt/cacheadvise-test/libcacheadvise_inject.so\n"));
		CHECK(sb.buf && strstr(sb.buf, "ranks=0,2\n"));
		free(want);
		free(path);
		strbuf_release(&sb);
	}
	cmd = xasprintf("rm -rf %s", dir);
	CHECK_INT(system(cmd), 0);
	free(cmd);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--record"))
		return record(argv[2]);
	if (argc > 5 && !strcmp(argv[1], "--run-job") && !strcmp(argv[4], "--"))
		return run_job(argv[2], argv[3], argv + 5);
	test_launcher_of();
	test_job_ranks();
	test_args();
	test_ranks();
	test_mpirun(argv[0][0] == '/' ? argv[0] : realpath(argv[0], NULL));
	return check_done();
}
