#ifndef CACHEADVISE_LAUNCHER_H
#define CACHEADVISE_LAUNCHER_H

#include <stddef.h>

/*
 * Programs started by a job launcher (issue 29): `cacheadvise profile --
 * mpirun -np 2 ./app` or `-- srun -n 2 ./app` reruns the whole job for each
 * step, and the injection library reaches every rank through the
 * environment. What profile adds to the launcher's command line, and how a
 * rank knows whether it is measured, are here.
 */

enum launcher_kind {
	LAUNCHER_NONE,
	LAUNCHER_OPENMPI,          /* mpirun, mpiexec, orterun (Open MPI) */
	LAUNCHER_SLURM,            /* srun */
};

/* The launcher a program path names (by its base name). */
enum launcher_kind launcher_of(const char *program);

/*
 * The launched job's ranks from its command line (-np N, -n N, --np N,
 * --ntasks=N, ...: argv without the launcher itself), or 0 unknown.
 */
long launcher_job_ranks(enum launcher_kind kind, char *const *args, size_t nr);

/*
 * The arguments to run the launcher with so that the names of env_add
 * ("NAME=value" each) reach every rank: for Open MPI, "-x NAME" for each,
 * before the user's arguments (mpirun exports no variable to other nodes
 * by itself); for srun and other programs, args as they are (Slurm exports
 * the whole environment unless --export says otherwise: *warning is set
 * then, static). Returns a new NULL-terminated array (free with
 * launcher_args_free) and its length in *nr_out.
 */
char **launcher_args(enum launcher_kind kind, char *const *args, size_t nr,
		     char *const *env_add, size_t *nr_out, const char **warning);
void launcher_args_free(char **args);

/* This process's rank in its job: OMPI_COMM_WORLD_RANK, PMIX_RANK,
 * PMI_RANK or SLURM_PROCID, in that order; -1 when none is set. */
int launcher_rank(void);

/*
 * A set of ranks, as --ranks spells it: "all", or numbers and ranges
 * joined by commas ("0", "0,2-5"). launcher_ranks_parse returns 0, or -1
 * for anything else (nothing allocated). The set holds at most 64 ranges.
 */
struct rank_set {
	int all;
	size_t nr;
	struct { long lo, hi; } r[64];
};
int launcher_ranks_parse(const char *spec, struct rank_set *out);
int launcher_rank_in(const struct rank_set *set, long rank);

/*
 * --gpus: the GPUs a profile's independent runs spread over. "0,1", "0-3",
 * "2": distinct numbers 0..LAUNCHER_MAX_GPU_ID, at most LAUNCHER_MAX_GPUS
 * into ids (the list form of launcher_ranks_parse, without "all").
 * Returns 0, or -1 for anything else.
 */
#define LAUNCHER_MAX_GPUS 16
#define LAUNCHER_MAX_GPU_ID 1023
int launcher_gpus_parse(const char *s, int *ids, size_t *n);

/*
 * Whether this process is one the injection library measures: no rank
 * (not launched by MPI or Slurm), no CACHEADVISE_RANKS, or its rank in it.
 */
int launcher_rank_measured(void);

#endif
