/*
 * bench_inspect: throughput of PTX parsing and whole-file intake.
 *
 * Builds a large PTX module in memory from the intake fixture
 * (tests/fixtures/intake/kernels.ptx): its functions repeated with every
 * function name suffixed per copy, so the module stays valid PTX. Then times
 * ptx_parse on it, intake_read_file on it as a .ptx file, and
 * intake_read_file on a fatbin holding it zstd-compressed as nvcc does
 * (decompression, module id and parse). Prints MB/s of PTX text.
 *
 * usage: bench_inspect [--mb N] [--dump FILE] [FIXTURE_DIR]
 *   FIXTURE_DIR defaults to $CA_SOURCE_DIR/tests/fixtures/intake, else
 *   tests/fixtures/intake. --dump writes the generated PTX (check it with
 *   ptxas -arch=sm_90). Results: bench/results/inspect.md.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <zstd.h>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/module_id.h"
#include "analysis/ptx.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "collectors/fatbin.h"
#include "collectors/intake.h"

/*
 * Wall time and this process's CPU time: on a shared machine the CPU time
 * is the steadier measure of the code itself. Each figure is the best of
 * REPS runs.
 */
#define REPS 5

struct lap {
	double wall, cpu;
};

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static struct lap lap_start(void)
{
	struct lap l = { clock_s(CLOCK_MONOTONIC), clock_s(CLOCK_PROCESS_CPUTIME_ID) };
	return l;
}

/* Folds the lap begun at start into best. */
static void lap_stop(struct lap start, struct lap *best)
{
	double wall = clock_s(CLOCK_MONOTONIC) - start.wall;
	double cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - start.cpu;

	if (wall < best->wall)
		best->wall = wall;
	if (cpu < best->cpu)
		best->cpu = cpu;
}

static void report(const char *what, struct lap best, size_t bytes, const char *note)
{
	printf("%-22s wall %6.3f s %7.1f MB/s   cpu %6.3f s %7.1f MB/s%s\n", what, best.wall,
	       bytes / 1e6 / best.wall, best.cpu, bytes / 1e6 / best.cpu, note);
}

static void die(const char *what)
{
	fprintf(stderr, "bench_inspect: %s: %s\n", what, error_message());
	exit(1);
}

/* Appends text[0..len) with every name in names replaced by name + suffix. */
static void add_renamed(struct strbuf *out, const char *text, size_t len, char **names,
			size_t nr, const char *suffix)
{
	size_t i = 0, k;

	while (i < len) {
		for (k = 0; k < nr; k++) {
			size_t n = strlen(names[k]);
			if (text[i] == names[k][0] && i + n <= len && !memcmp(text + i, names[k], n))
				break;
		}
		if (k < nr) {
			strbuf_addstr(out, names[k]);
			strbuf_addstr(out, suffix);
			i += strlen(names[k]);
		} else {
			strbuf_addch(out, text[i++]);
		}
	}
}

/*
 * The fixture split in three: the header up to .address_size, the
 * functions, and the trailing .file directives, which must appear once.
 */
static void build_ptx(const char *fixture, size_t target_bytes, struct strbuf *out,
		      size_t *copies_out)
{
	struct strbuf src = STRBUF_INIT;
	struct ptx_module *m;
	const char *body, *trailer;
	char **names, suffix[32];
	size_t i, copies = 0;

	if (strbuf_read_file(&src, fixture, 0))
		die("cannot read the fixture");
	if (ptx_parse(fixture, src.buf, src.len, &m))
		die("cannot parse the fixture");
	body = strstr(src.buf, ".address_size");
	body = body ? strchr(body, '\n') : NULL;
	trailer = strstr(src.buf, "\n\t.file");
	if (!body || !trailer || trailer < body) {
		fprintf(stderr, "bench_inspect: %s: unexpected layout\n", fixture);
		exit(1);
	}
	names = xcalloc(m->nr_functions, sizeof(*names));
	for (i = 0; i < m->nr_functions; i++)
		names[i] = m->functions[i].name;

	strbuf_add(out, src.buf, (size_t)(body - src.buf));
	while (out->len < target_bytes) {
		snprintf(suffix, sizeof(suffix), "_c%zu", copies++);
		add_renamed(out, body, (size_t)(trailer - body), names, m->nr_functions, suffix);
	}
	strbuf_addstr(out, trailer);
	*copies_out = copies;
	free(names);
	ptx_module_free(m);
	strbuf_release(&src);
}

static void put(unsigned char *p, uint64_t v, int bytes)
{
	while (bytes--) {
		*p++ = v & 255;
		v >>= 8;
	}
}

/* A fatbin with one zstd-compressed PTX entry for sm_90, as nvcc writes it. */
static void build_fatbin(const struct strbuf *ptx, struct strbuf *out, size_t *compressed)
{
	size_t bound = ZSTD_compressBound(ptx->len + 1), n, padded;
	unsigned char *z = xmalloc(bound), hdr[16], ent[64];

	n = ZSTD_compress(z, bound, ptx->buf, ptx->len + 1, 3);  /* the NUL too, as nvcc */
	if (ZSTD_isError(n)) {
		fprintf(stderr, "bench_inspect: zstd: %s\n", ZSTD_getErrorName(n));
		exit(1);
	}
	padded = (n + 7) & ~(size_t)7;
	memset(hdr, 0, sizeof(hdr));
	memset(ent, 0, sizeof(ent));
	put(hdr, FATBIN_MAGIC, 4);
	put(hdr + 4, 1, 2);
	put(hdr + 6, 16, 2);
	put(hdr + 8, sizeof(ent) + padded, 8);
	put(ent, FATBIN_KIND_PTX, 2);
	put(ent + 2, 0x101, 2);
	put(ent + 4, sizeof(ent), 4);
	put(ent + 8, padded, 8);
	put(ent + 0x10, (uint32_t)n, 4);
	put(ent + 0x18, 0x90000, 4);
	put(ent + 0x1c, 90, 4);
	put(ent + 0x28, 0x8011, 8);
	put(ent + 0x38, ptx->len + 1, 8);
	strbuf_add(out, hdr, sizeof(hdr));
	strbuf_add(out, ent, sizeof(ent));
	strbuf_add(out, z, n);
	while (out->len % 8)
		strbuf_addch(out, 0);
	*compressed = n;
	free(z);
}

static double mb(size_t bytes)
{
	return bytes / 1e6;
}

int main(int argc, char **argv)
{
	const char *dir = NULL, *dump = NULL, *root = getenv("CA_SOURCE_DIR");
	struct strbuf ptx = STRBUF_INIT, fatbin = STRBUF_INIT;
	char *fixture, *ptx_path, *fatbin_path, tmpdir[] = "/tmp/bench_inspect.XXXXXX";
	size_t target = 32, copies, loads = 0, compressed, i;
	struct ptx_module *m;
	struct lap best, worst = { 1e30, 1e30 };
	int rep;

	for (i = 1; i < (size_t)argc; i++) {
		if (!strcmp(argv[i], "--mb") && i + 1 < (size_t)argc)
			target = strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--dump") && i + 1 < (size_t)argc)
			dump = argv[++i];
		else if (argv[i][0] == '-') {
			fprintf(stderr, "usage: bench_inspect [--mb N] [--dump FILE] [FIXTURE_DIR]\n");
			return 1;
		} else
			dir = argv[i];
	}
	if (dir)
		fixture = xasprintf("%s/kernels.ptx", dir);
	else if (root)
		fixture = xasprintf("%s/tests/fixtures/intake/kernels.ptx", root);
	else
		fixture = xstrdup("tests/fixtures/intake/kernels.ptx");

	build_ptx(fixture, target << 20, &ptx, &copies);
	if (dump && write_file_atomic(dump, ptx.buf, ptx.len))
		die("cannot write --dump file");

	best = worst;
	for (rep = 0; rep < REPS; rep++) {
		struct lap t = lap_start();
		if (ptx_parse("bench.ptx", ptx.buf, ptx.len, &m))
			die("ptx_parse");
		lap_stop(t, &best);
		if (rep == 0)
			for (i = 0; i < m->nr_functions; i++)
				loads += m->functions[i].nr_loads;
		ptx_module_free(m);
	}
	printf("PTX: %.1f MB (%zu copies of %s), %zu global loads; best of %d runs\n",
	       mb(ptx.len), copies, "kernels.ptx", loads, REPS);
	report("ptx_parse", best, ptx.len, "");

	best = worst;
	for (rep = 0; rep < REPS; rep++) {
		char id[MODULE_ID_LEN + 1];
		struct lap t = lap_start();
		module_id_compute(ptx.buf, ptx.len, id);
		lap_stop(t, &best);
	}
	report("module_id (SHA-256)", best, ptx.len, "");

	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	ptx_path = xasprintf("%s/big.ptx", tmpdir);
	fatbin_path = xasprintf("%s/big.fatbin", tmpdir);
	build_fatbin(&ptx, &fatbin, &compressed);
	if (write_file_atomic(ptx_path, ptx.buf, ptx.len) ||
	    write_file_atomic(fatbin_path, fatbin.buf, fatbin.len))
		die("cannot write temporary files");

	for (i = 0; i < 2; i++) {
		const char *path = i ? fatbin_path : ptx_path;
		char note[64];

		best = worst;
		for (rep = 0; rep < REPS; rep++) {
			struct intake in;
			struct lap t;

			intake_init(&in);
			t = lap_start();
			if (intake_read_file(&in, path, 90))
				die("intake_read_file");
			lap_stop(t, &best);
			if (in.nr_modules != 1 || !in.modules[0].ptx ||
			    in.modules[0].ptx->len != ptx.len) {
				fprintf(stderr, "bench_inspect: intake of %s lost the PTX\n", path);
				return 1;
			}
			intake_release(&in);
		}
		snprintf(note, sizeof(note), "  (%.2f MB compressed)", mb(compressed));
		report(i ? "intake, zstd .fatbin" : "intake, .ptx file", best, ptx.len,
		       i ? note : "");
	}
	unlink(ptx_path);
	unlink(fatbin_path);
	rmdir(tmpdir);
	free(ptx_path);
	free(fatbin_path);
	free(fixture);
	strbuf_release(&ptx);
	strbuf_release(&fatbin);
	return 0;
}
