#ifndef CACHEADVISE_TEST_CHECK_H
#define CACHEADVISE_TEST_CHECK_H

/*
 * A minimal assertion kit for the unit tests: each CHECK that fails prints
 * file:line and the expression and counts a failure; check_done() prints
 * "N passed, N failed" and returns the exit status for main().
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int check_passed_, check_failed_;

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (cond) {                                                    \
			check_passed_++;                                       \
		} else {                                                       \
			check_failed_++;                                       \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, \
				__LINE__, #cond);                              \
		}                                                              \
	} while (0)

#define CHECK_INT(a, b)                                                        \
	do {                                                                   \
		long long check_a_ = (long long)(a), check_b_ = (long long)(b); \
		if (check_a_ == check_b_) {                                    \
			check_passed_++;                                       \
		} else {                                                       \
			check_failed_++;                                       \
			fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", \
				__FILE__, __LINE__, #a, #b, check_a_, check_b_); \
		}                                                              \
	} while (0)

#define CHECK_STR(a, b)                                                        \
	do {                                                                   \
		const char *check_a_ = (a), *check_b_ = (b);                   \
		if (check_a_ && check_b_ && !strcmp(check_a_, check_b_)) {     \
			check_passed_++;                                       \
		} else {                                                       \
			check_failed_++;                                       \
			fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n", \
				__FILE__, __LINE__, #a, #b,                    \
				check_a_ ? check_a_ : "(null)",                \
				check_b_ ? check_b_ : "(null)");               \
		}                                                              \
	} while (0)

#define CHECK_NEAR(a, b, eps)                                                  \
	do {                                                                   \
		double check_a_ = (a), check_b_ = (b);                         \
		if (fabs(check_a_ - check_b_) <= (eps)) {                      \
			check_passed_++;                                       \
		} else {                                                       \
			check_failed_++;                                       \
			fprintf(stderr, "%s:%d: %s ~= %s failed: %g != %g\n",  \
				__FILE__, __LINE__, #a, #b, check_a_, check_b_); \
		}                                                              \
	} while (0)

static inline int check_done(void)
{
	printf("%d passed, %d failed\n", check_passed_, check_failed_);
	return check_failed_ ? 1 : 0;
}

/* Path of a file under the source tree (CA_SOURCE_DIR, set by ctest). */
static inline const char *check_source_path(const char *rel)
{
	static char buf[4096];
	const char *root = getenv("CA_SOURCE_DIR");
	snprintf(buf, sizeof(buf), "%s/%s", root ? root : ".", rel);
	return buf;
}

/* How many times needle occurs in hay (not overlapping). */
static inline size_t check_count(const char *hay, const char *needle)
{
	size_t n = 0;
	const char *p = hay;

	while ((p = strstr(p, needle))) {
		n++;
		p += strlen(needle);
	}
	return n;
}

/* Whether ptxas (sm_90) assembles the PTX text: 1 yes, 0 no (the file is
 * kept and named on stderr), -1 no ptxas in /usr/local/cuda/bin. */
static inline int check_ptxas_accepts(const char *text)
{
	const char *ptxas = "/usr/local/cuda/bin/ptxas";
	char path[] = "/tmp/ca-check-XXXXXX.ptx", cmd[512];
	int fd, rc;
	FILE *f;

	if (access(ptxas, X_OK))
		return -1;
	fd = mkstemps(path, 4);
	if (fd < 0)
		return 0;
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s -arch=sm_90 -o /dev/null %s", ptxas, path);
	rc = system(cmd);
	if (rc)
		fprintf(stderr, "ptxas rejected %s (kept)\n", path);
	else
		unlink(path);
	return rc == 0;
}

/*
 * Removes a test's temporary directory, or keeps it (and says where) when
 * CA_KEEP is set, to look at what the test left.
 */
static inline void check_remove_dir(const char *dir)
{
	char cmd[4200];

	if (getenv("CA_KEEP")) {
		fprintf(stderr, "kept %s\n", dir);
		return;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

#endif
