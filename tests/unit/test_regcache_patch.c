#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "analysis/ptx.h"
#include "analysis/stencil_detect.h"
#include "emitters/rewrite/regcache_patch.h"
#include "emitters/rewrite/source_file.h"
#include "tests/unit/check.h"

/*
 * The register-cache rewrite (emitters/rewrite/regcache_patch.h): samples/stencil1d.cu's
 * stencil_global, as the detector finds it in nvcc's PTX of the sample
 * (tests/fixtures/ptx/stencil1d.ptx, -lineinfo), rewritten and turned into
 * a diff; and source shapes the rewrite must not touch, which get the text
 * to paste and a reason.
 */

#define HAS(hay, needle)                                                       \
	do {                                                                   \
		int has_ = (hay) && strstr((hay), (needle)) != NULL;           \
		CHECK(has_);                                                   \
		if (!has_)                                                     \
			fprintf(stderr, "  missing: %s\n", (needle));          \
	} while (0)

static struct source_file *load_text(const char *text)
{
	char path[] = "/tmp/test_regcache_XXXXXX";
	int fd = mkstemp(path);
	struct source_file *sf;

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		perror(path);
		exit(1);
	}
	close(fd);
	sf = source_file_load(path);
	unlink(path);
	return sf;
}

static void test_sample(void)
{
	const char *ptx_path = check_source_path("tests/fixtures/ptx/stencil1d.ptx");
	struct strbuf sb = STRBUF_INIT, diff = STRBUF_INIT;
	struct ptx_module *m = NULL;
	struct stencil_detect sd;
	struct source_file *sf;
	struct regcache_target t = { 0 };
	struct regcache_rewrite rw;
	const struct regcache_rewrite *rws[1] = { &rw };
	const struct stencil_hint *h = NULL;
	const struct ptx_function *fn = NULL;
	size_t lines[64], i;

	if (strbuf_read_file(&sb, ptx_path, 0) || ptx_parse(ptx_path, sb.buf, sb.len, &m)) {
		fprintf(stderr, "cannot load %s: %s\n", ptx_path, error_message());
		exit(1);
	}
	stencil_detect_init(&sd);
	CHECK_INT(stencil_detect_run(&sd, m), 0);
	for (i = 0; i < sd.nr_hints; i++)
		if (strstr(sd.hints[i].function, "stencil_global"))
			h = &sd.hints[i];
	CHECK(h != NULL);
	for (i = 0; i < m->nr_functions; i++)
		if (h && !strcmp(m->functions[i].name, h->function))
			fn = &m->functions[i];
	CHECK(fn != NULL);
	if (!h || !fn)
		goto out;
	CHECK_INT(h->param, 0);
	CHECK_INT(h->k_exact, 0);
	for (i = 0; i < h->nr_loads && i < 64; i++)
		lines[i] = (size_t)fn->loads[h->ordinals[i]].line;
	t.kernel = "stencil_global";
	t.param = h->param;
	t.k = h->k;
	t.k_exact = h->k_exact;
	t.lines = lines;
	t.nr_lines = i;

	sf = source_file_load(check_source_path("samples/stencil1d.cu"));
	CHECK(sf != NULL);
	if (!sf)
		goto out;
	regcache_rewrite_find(&rw, sf, &t);
	CHECK_INT(rw.status, REGCACHE_REWRITE_PATCHED);
	if (rw.reason)
		fprintf(stderr, "  reason: %s\n", rw.reason);
	/* the grid-stride loop: lines 65..71 of the sample */
	CHECK_INT(rw.first_line, 65);
	CHECK_INT(rw.last_line, 71);
	/* every lane runs the loop while its warp has work; one window load;
	 * the taps by shuffle; the store guarded; the original loop kept for
	 * radii over 15 */
	HAS(rw.text, "\tif ((2 * k) <= 30) {");
	HAS(rw.text, "i - regcache::lane() < nout;");
	HAS(rw.text, "regcache::window<float, 15> ca_rc;");
	HAS(rw.text, "ca_rc.load(in, (long long)(i - regcache::lane()), (long long)nout + (2 * k), (2 * k));");
	HAS(rw.text, "s += ca_rc.read(j);");
	HAS(rw.text, "if (i < nout) {");
	HAS(rw.text, "\t\t\t\tout[i] = s * scale;\n");
	HAS(rw.text, "} else {");
	HAS(rw.text, "\t\t\ts += in[i + j];\n");   /* the original, for k > 15 */

	CHECK_INT(regcache_patch_file(&diff, "stencil1d.cu", sf, rws, 1), 1);
	if (getenv("CA_TEST_DUMP"))   /* to read the diff */
		fputs(diff.buf, stderr);
	/* the installed header by its installed name, never a copy of it */
	CHECK(strstr(diff.buf, "/dev/null") == NULL);
	CHECK(strstr(diff.buf, "+namespace regcache {") == NULL);
	HAS(diff.buf, "--- a/stencil1d.cu\n+++ b/stencil1d.cu\n");
	HAS(diff.buf, " #include <vector>\n+#include <cacheadvise/regcache.cuh>");
	HAS(diff.buf, "-\t\t\ts += in[i + j];\n");
	HAS(diff.buf, "+\t\t\t\ts += ca_rc.read(j);\n");
	/* context lines are the file's own */
	HAS(diff.buf, "@@ -62,12 +63,29 @@\n stencil_global(const float *in, float *out, uint64_t nout, "
		      "int k)\n {\n \tfloat scale = 1.0f / (float)(2 * k + 1);\n-\tfor (");
	strbuf_reset(&diff);
	CHECK_INT(regcache_patch_file(&diff, "samples/stencil1d.cu", sf, rws, 1), 1);
	HAS(diff.buf, "--- a/samples/stencil1d.cu\n");
	regcache_rewrite_release(&rw);
	source_file_free(sf);
out:
	strbuf_release(&diff);
	strbuf_release(&sb);
	stencil_detect_release(&sd);
	ptx_module_free(m);
}

/* The seed's three-point stencil, written as a grid-stride loop. */
static const char explicit_taps[] =
	"#include <cuda_runtime.h>\n"
	"\n"
	"__global__ void one_stencil(const int *A, int *B, int size)\n"
	"{\n"
	"    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < size - 2;\n"
	"         i += gridDim.x * blockDim.x) {\n"
	"        int w = 3;\n"
	"        B[i] = (A[i] + A[i + 1] + A[i + 2]) / w;\n"
	"    }\n"
	"}\n";

static void test_explicit_taps(void)
{
	struct source_file *sf = load_text(explicit_taps);
	size_t lines[3] = { 8, 8, 8 };
	struct regcache_target t = { "one_stencil", 0, 1, 1, lines, 3 };
	struct regcache_rewrite rw;
	const struct regcache_rewrite *rws[1] = { &rw };
	struct strbuf diff = STRBUF_INIT;

	regcache_rewrite_find(&rw, sf, &t);
	CHECK_INT(rw.status, REGCACHE_REWRITE_PATCHED);
	if (rw.reason)
		fprintf(stderr, "  reason: %s\n", rw.reason);
	CHECK_INT(rw.first_line, 5);
	CHECK_INT(rw.last_line, 9);
	HAS(rw.text, "i - regcache::lane() < size - 2;");
	HAS(rw.text, "regcache::window<int, 1> ca_rc;");
	HAS(rw.text, "ca_rc.load(A, (long long)(i - regcache::lane()), (long long)(size - 2) + 2);");
	/* the shuffles before the guard, in every lane */
	HAS(rw.text, "        const int ca_rc_0 = ca_rc.read(0);\n"
		     "        const int ca_rc_1 = ca_rc.read(1);\n"
		     "        const int ca_rc_2 = ca_rc.read(2);\n"
		     "        if (i < size - 2) {\n"
		     "            B[i] = (ca_rc_0 + ca_rc_1 + ca_rc_2) / w;\n"
		     "        }\n");
	CHECK(strstr(rw.text, "else") == NULL);    /* k known: no fallback */
	CHECK_INT(regcache_patch_file(&diff, "k.cu", sf, rws, 1), 1);
	if (getenv("CA_TEST_DUMP"))   /* to read the diff */
		fputs(diff.buf, stderr);
	HAS(diff.buf, "@@ -1,10 +1,21 @@\n #include <cuda_runtime.h>\n+#include <cacheadvise/regcache.cuh>");
	strbuf_release(&diff);
	regcache_rewrite_release(&rw);
	source_file_free(sf);
}

/* Shapes that must not be patched: the reason, and text to paste. */
static void test_refused(void)
{
	static const struct { const char *src, *reason; } c[] = {
		/* the seed's kernel: an early return, no loop */
		{ "__global__ void st(const int *A, int *B, int size)\n{\n"
		  "\tint i = blockIdx.x * blockDim.x + threadIdx.x;\n"
		  "\tif (i >= size - 2) return;\n"
		  "\tB[i] = (A[i] + A[i + 1] + A[i + 2]) / 3;\n}\n",
		  "not in a for loop" },
		/* another read the idle lanes would make */
		{ "__global__ void st(const int *A, int *B, const int *c, int size)\n{\n"
		  "\tfor (int i = blockIdx.x * blockDim.x + threadIdx.x; i < size;\n"
		  "\t     i += gridDim.x * blockDim.x) {\n"
		  "\t\tint w = c[i];\n"
		  "\t\tB[i] = (A[i] + A[i + 1] + A[i + 2]) / w;\n\t}\n}\n",
		  "access memory" },
		/* a bound that differs between threads */
		{ "__global__ void st(const int *A, int *B, int size)\n{\n"
		  "\tfor (int i = blockIdx.x * blockDim.x + threadIdx.x; i < size - threadIdx.x;\n"
		  "\t     i += gridDim.x * blockDim.x) {\n"
		  "\t\tB[i] = (A[i] + A[i + 1] + A[i + 2]) / 3;\n\t}\n}\n",
		  "BOUND the same in every thread" },
		/* a break the lanes would not all take */
		{ "__global__ void st(const int *A, int *B, int size)\n{\n"
		  "\tfor (int i = blockIdx.x * blockDim.x + threadIdx.x; i < size;\n"
		  "\t     i += gridDim.x * blockDim.x) {\n"
		  "\t\tif (B[i]) break;\n"
		  "\t\tB[i] = (A[i] + A[i + 1] + A[i + 2]) / 3;\n\t}\n}\n",
		  "`break`" },
		/* the loop under a condition: the warp's lanes may not all run it */
		{ "__global__ void st(const int *A, int *B, int size)\n{\n"
		  "\tif (threadIdx.x < 100)\n"
		  "\tfor (int i = blockIdx.x * blockDim.x + threadIdx.x; i < size;\n"
		  "\t     i += gridDim.x * blockDim.x) {\n"
		  "\t\tB[i] = (A[i] + A[i + 1] + A[i + 2]) / 3;\n\t}\n}\n",
		  "under a condition" },
		/* a write to the structure */
		{ "__global__ void st(int *A, int *B, int size)\n{\n"
		  "\tfor (int i = blockIdx.x * blockDim.x + threadIdx.x; i < size;\n"
		  "\t     i += gridDim.x * blockDim.x) {\n"
		  "\t\tA[i + 2] = (A[i] + A[i + 1] + A[i + 2]) / 3;\n\t}\n}\n",
		  "writes to the parameter" },
	};
	size_t lines[3] = { 0, 0, 0 }, i, j;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		struct source_file *sf = load_text(c[i].src);
		struct regcache_target t = { "st", 0, 1, 1, lines, 3 };
		struct regcache_rewrite rw;

		/* the taps' line: the one that reads A[i + 2] */
		for (j = 1; j <= sf->nr_lines; j++) {
			size_t len;
			const char *l = source_file_line(sf, j, &len);
			char *s = xstrndup(l, len);
			if (strstr(s, "A[i + 2]"))
				lines[0] = lines[1] = lines[2] = j;
			free(s);
		}
		regcache_rewrite_find(&rw, sf, &t);
		CHECK_INT(rw.status, REGCACHE_REWRITE_PASTE);
		if (getenv("CA_TEST_DUMP"))
			fprintf(stderr, "reason: %s\n", rw.reason);
		HAS(rw.reason, c[i].reason);
		HAS(rw.text, "regcache::window<int, 1> ca_rc;");
		HAS(rw.text, "ca_rc.load(A, (long long)(i - regcache::lane()), (long long)n);");
		HAS(rw.text, "A[i + c] is ca_rc.read(c), c = 0..2");
		regcache_rewrite_release(&rw);
		source_file_free(sf);
	}
}

int main(void)
{
	test_sample();
	test_explicit_taps();
	test_refused();
	return check_done();
}
