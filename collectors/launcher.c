/*
 * Job launchers (collectors/launcher.h).
 */
#include "collectors/launcher.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

enum launcher_kind launcher_of(const char *program)
{
	const char *base = program ? strrchr(program, '/') : NULL;

	base = base ? base + 1 : program;
	if (!base)
		return LAUNCHER_NONE;
	if (!strcmp(base, "mpirun") || !strcmp(base, "mpiexec") || !strcmp(base, "orterun") ||
	    !strcmp(base, "mpirun.openmpi") || !strcmp(base, "mpiexec.openmpi"))
		return LAUNCHER_OPENMPI;
	if (!strcmp(base, "srun"))
		return LAUNCHER_SLURM;
	return LAUNCHER_NONE;
}

/* A positive count, or 0. */
static long count_of(const char *s)
{
	char *end;
	long v = s ? strtol(s, &end, 10) : 0;

	return s && *s && !*end && v > 0 ? v : 0;
}

long launcher_job_ranks(enum launcher_kind kind, char *const *args, size_t nr)
{
	static const char *const ompi[] = { "-np", "-n", "--np", "-c", NULL };
	static const char *const slurm[] = { "-n", "--ntasks", NULL };
	const char *const *opts = kind == LAUNCHER_OPENMPI ? ompi : kind == LAUNCHER_SLURM ? slurm :
				  NULL;
	size_t i, j;

	for (i = 0; opts && i < nr; i++) {
		for (j = 0; opts[j]; j++) {
			size_t n = strlen(opts[j]);

			if (!strcmp(args[i], opts[j]) && i + 1 < nr)
				return count_of(args[i + 1]);
			if (!strncmp(args[i], opts[j], n) && args[i][n] == '=')
				return count_of(args[i] + n + 1);
		}
		/* the program's own arguments start at the first word that is no option */
		if (args[i][0] != '-' && (i == 0 || args[i - 1][0] != '-'))
			break;
	}
	return 0;
}

char **launcher_args(enum launcher_kind kind, char *const *args, size_t nr,
		     char *const *env_add, size_t *nr_out, const char **warning)
{
	size_t ne = 0, i, n = 0;
	char **out;

	*warning = NULL;
	while (env_add && env_add[ne])
		ne++;
	out = xcalloc(nr + 2 * ne + 1, sizeof(*out));
	if (kind == LAUNCHER_OPENMPI) {
		for (i = 0; i < ne; i++) {
			const char *eq = strchr(env_add[i], '=');

			out[n++] = xstrdup("-x");
			out[n++] = eq ? xstrndup(env_add[i], (size_t)(eq - env_add[i])) :
				   xstrdup(env_add[i]);
		}
	}
	for (i = 0; i < nr; i++) {
		if (kind == LAUNCHER_SLURM && !strncmp(args[i], "--export", 8) &&
		    strcmp(args[i], "--export=ALL"))
			*warning = "srun --export limits what reaches the tasks: cacheadvise's "
				   "variables (CUDA_INJECTION64_PATH, CACHEADVISE_*) must be among "
				   "them, or the ranks run unprofiled";
		out[n++] = xstrdup(args[i]);
	}
	out[n] = NULL;
	*nr_out = n;
	return out;
}

void launcher_args_free(char **args)
{
	free_string_list(args);
}

int launcher_rank(void)
{
	static const char *const vars[] = { "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
					    "SLURM_PROCID" };
	size_t i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i]);
		char *end;
		long r;

		if (!v || !*v)
			continue;
		r = strtol(v, &end, 10);
		if (!*end && r >= 0 && r < (1L << 30))
			return (int)r;
	}
	return -1;
}

int launcher_ranks_parse(const char *spec, struct rank_set *out)
{
	const char *p = spec;

	memset(out, 0, sizeof(*out));
	if (!spec || !*spec)
		return -1;
	if (!strcmp(spec, "all")) {
		out->all = 1;
		return 0;
	}
	while (*p) {
		char *end;
		long lo, hi;

		/* digits only: no sign or blank, and no number strtol saturates */
		if (*p < '0' || *p > '9' || out->nr == 64)
			return -1;
		errno = 0;
		lo = hi = strtol(p, &end, 10);
		if (errno)
			return -1;
		p = end;
		if (*p == '-') {
			const char *q = p + 1;

			if (*q < '0' || *q > '9')
				return -1;
			hi = strtol(q, &end, 10);
			if (errno || hi < lo)
				return -1;
			p = end;
		}
		out->r[out->nr].lo = lo;
		out->r[out->nr].hi = hi;
		out->nr++;
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			return -1;
	}
	return 0;
}

int launcher_rank_in(const struct rank_set *set, long rank)
{
	size_t i;

	if (set->all)
		return 1;
	for (i = 0; i < set->nr; i++)
		if (rank >= set->r[i].lo && rank <= set->r[i].hi)
			return 1;
	return 0;
}

int launcher_rank_measured(void)
{
	const char *spec = getenv("CACHEADVISE_RANKS");
	struct rank_set set;
	int rank = launcher_rank();

	if (rank < 0 || !spec || !*spec || launcher_ranks_parse(spec, &set))
		return 1;
	return launcher_rank_in(&set, rank);
}

int launcher_gpus_parse(const char *s, int *ids, size_t *n)
{
	struct rank_set set;
	size_t i, j;
	long g;

	*n = 0;
	if (launcher_ranks_parse(s, &set) || set.all)
		return -1;
	for (i = 0; i < set.nr; i++) {
		if (set.r[i].hi > LAUNCHER_MAX_GPU_ID)
			return -1;
		for (g = set.r[i].lo; g <= set.r[i].hi; g++) {
			for (j = 0; j < *n; j++)
				if (ids[j] == g)
					return -1;
			if (*n == LAUNCHER_MAX_GPUS)
				return -1;
			ids[(*n)++] = (int)g;
		}
	}
	return *n ? 0 : -1;
}
