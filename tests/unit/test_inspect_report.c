/*
 * emitters/inspect_report: the inspect JSON is written as it is made, so
 * what it holds does not grow with the number of loads (issue 36: a tree
 * of the whole document held about 4 KB per load, 4 GB for 10^6 loads).
 * Measured deterministically, not by time: every byte jansson allocates is
 * counted (json_set_alloc_funcs), and the output goes to a FILE whose
 * writes are counted. The streamed bytes are those of a jansson tree of
 * the same document (base/json_stream.h), which the CLI tests and the
 * golden comparisons check on real files.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "base/error.h"
#include "base/json_stream.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "collectors/intake.h"
#include "emitters/inspect_report.h"
#include "tests/unit/check.h"

/* ---- jansson's allocations, counted: live bytes and their peak */

static size_t live, peak;

/* Sized by malloc_usable_size, so that a jansson string freed with free()
 * (json_to_string does) is still a valid free. */
static void *count_malloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		return NULL;
	live += malloc_usable_size(p);
	if (live > peak)
		peak = live;
	return p;
}

static void count_free(void *p)
{
	if (!p)
		return;
	live -= malloc_usable_size(p);
	free(p);
}

/* ---- the output: every write counted, the largest kept, the text kept */

struct sink {
	size_t writes, largest;
	struct strbuf text;
};

static ssize_t sink_write(void *cookie, const char *buf, size_t n)
{
	struct sink *s = cookie;

	s->writes++;
	if (n > s->largest)
		s->largest = n;
	strbuf_add(&s->text, buf, n);
	return (ssize_t)n;
}

/* A PTX module of kernels functions with loads global loads in all. */
static char *write_ptx(const char *dir, size_t loads, size_t kernels)
{
	struct strbuf sb = STRBUF_INIT;
	char *path = xasprintf("%s/loads%zu.ptx", dir, loads);
	size_t k, i;
	FILE *f;

	strbuf_addstr(&sb, ".version 8.0\n.target sm_90\n.address_size 64\n\n");
	for (k = 0; k < kernels; k++) {
		strbuf_addf(&sb, ".visible .entry k%zu(\n\t.param .u64 k%zu_param_0\n)\n{\n"
			    "\t.reg .f32 \t%%f<2>;\n\t.reg .b64 \t%%rd<3>;\n\n"
			    "\tld.param.u64 \t%%rd1, [k%zu_param_0];\n"
			    "\tcvta.to.global.u64 \t%%rd2, %%rd1;\n", k, k, k);
		for (i = k; i < loads; i += kernels)
			strbuf_addf(&sb, "\tld.global.f32 \t%%f1, [%%rd2+%zu];\n", 4 * (i % 65536));
		strbuf_addstr(&sb, "\tret;\n\n}\n");
	}
	f = fopen(path, "w");
	if (!f || fwrite(sb.buf, 1, sb.len, f) != sb.len || fclose(f)) {
		perror(path);
		exit(1);
	}
	strbuf_release(&sb);
	return path;
}

/* Runs the JSON of a module of n loads; returns jansson's peak live bytes
 * while it was written and fills *s. */
static size_t json_of(const char *dir, size_t n, struct sink *s)
{
	cookie_io_functions_t io = { NULL, sink_write, NULL, NULL };
	struct intake in;
	char *path = write_ptx(dir, n, 4);
	size_t base;
	FILE *fp;

	memset(s, 0, sizeof(*s));
	strbuf_init(&s->text, 0);
	intake_init(&in);
	CHECK_INT(intake_read_file(&in, path, 0), 0);
	fp = fopencookie(s, "w", io);
	setvbuf(fp, NULL, _IONBF, 0);    /* each of the stream's writes reaches the sink */
	base = live;
	peak = live;
	inspect_report_json(fp, &in, path);
	fclose(fp);
	CHECK_INT(live, base);           /* every value released */
	intake_release(&in);
	unlink(path);
	free(path);
	return peak - base;
}

/* The text is inspect JSON with n loads. */
static void check_document(const struct sink *s, size_t n)
{
	json_error_t err;
	json_t *doc = json_loads(s->text.buf, 0, &err), *mods, *m, *f;
	size_t i, j, loads = 0;

	CHECK(doc != NULL);
	if (!doc) {
		fprintf(stderr, "not JSON: %s\n", err.text);
		return;
	}
	CHECK_STR(json_string_value(json_object_get(doc, "schema")), "cacheadvise.inspect/1");
	mods = json_object_get(doc, "modules");
	json_array_foreach(mods, i, m)
		json_array_foreach(json_object_get(m, "functions"), j, f)
			loads += json_array_size(json_object_get(f, "loads"));
	CHECK_INT(loads, n);
	CHECK(s->text.len && s->text.buf[s->text.len - 1] == '\n');
	json_decref(doc);
}

static void test_memory_bounded(const char *dir)
{
	struct sink small, large;
	size_t peak_small = json_of(dir, 2000, &small);
	size_t peak_large = json_of(dir, 20000, &large);

	check_document(&small, 2000);
	check_document(&large, 20000);
	/* what jansson holds is one load's object, however many loads:
	 * a tree of the document held about 3.5 KB per load (70 MB here) */
	CHECK(peak_small < 16384);
	CHECK(peak_large < 16384);
	fprintf(stderr, "jansson peak: %zu bytes for 2000 loads, %zu for 20000\n", peak_small,
		peak_large);
	/* the output leaves in chunks, not as one document at the end */
	CHECK(large.text.len > 10 * JSON_STREAM_CHUNK);
	CHECK(large.largest <= JSON_STREAM_CHUNK + 4096);
	CHECK(large.writes >= large.text.len / (JSON_STREAM_CHUNK + 4096));
	strbuf_release(&small.text);
	strbuf_release(&large.text);
}

/* The stream writes what json_to_string() writes of the same tree. */
static void test_stream_layout(void)
{
	struct sink s;
	cookie_io_functions_t io = { NULL, sink_write, NULL, NULL };
	struct json_stream js;
	json_t *doc, *inner;
	char *want;
	FILE *fp;

	memset(&s, 0, sizeof(s));
	strbuf_init(&s.text, 0);
	fp = fopencookie(&s, "w", io);
	json_stream_init(&js, fp);
	json_stream_begin_object(&js, NULL);
	json_stream_value(&js, "a\"\x1b", json_string("x\n\x01\xc3\xa9"));
	json_stream_value(&js, "skipped", json_string("\xff"));
	json_stream_begin_array(&js, "empty");
	json_stream_end(&js);
	json_stream_begin_object(&js, "o");
	json_stream_value(&js, "r", json_real(0.1));
	json_stream_value(&js, "n", json_null());
	json_stream_begin_array(&js, "list");
	json_stream_value(&js, NULL, json_pack("{s:[i,i], s:{}}", "p", 1, 2, "q"));
	json_stream_value(&js, NULL, json_integer(-3));
	json_stream_end(&js);
	json_stream_end(&js);
	json_stream_end(&js);
	json_stream_finish(&js);
	fclose(fp);

	doc = json_object();
	json_object_set_new(doc, "a\"\x1b", json_string("x\n\x01\xc3\xa9"));
	json_object_set_new(doc, "skipped", json_string("\xff"));
	json_object_set_new(doc, "empty", json_array());
	inner = json_object();
	json_object_set_new(inner, "r", json_real(0.1));
	json_object_set_new(inner, "n", json_null());
	json_object_set_new(inner, "list", json_pack("[{s:[i,i], s:{}}, i]", "p", 1, 2, "q", -3));
	json_object_set_new(doc, "o", inner);
	want = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	CHECK(want != NULL);
	if (want) {
		CHECK_INT(s.text.len, strlen(want) + 1);
		CHECK(!strncmp(s.text.buf, want, strlen(want)));
		if (strncmp(s.text.buf, want, strlen(want)))
			fprintf(stderr, "stream:\n%s\ntree:\n%s\n", s.text.buf, want);
	}
	count_free(want);       /* jansson's allocation: counted */
	json_decref(doc);
	strbuf_release(&s.text);
}

int main(void)
{
	char dir[] = "/tmp/test_inspect_report.XXXXXX";

	json_set_alloc_funcs(count_malloc, count_free);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_stream_layout();
	test_memory_bounded(dir);
	rmdir(dir);
	return check_done();
}
