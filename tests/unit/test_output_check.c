#include <regex.h>
#include <unistd.h>

#include "analysis/output_check.h"
#include "base/error.h"
#include "base/xalloc.h"
#include "tests/unit/check.h"

static void check_mask(const char *line, const char *want)
{
	struct strbuf sb = STRBUF_INIT;

	output_mask_numbers(line, strlen(line), &sb);
	CHECK_STR(sb.buf, want);
	strbuf_release(&sb);
}

static void test_mask(void)
{
	check_mask("Kernel    : 0.012076", "Kernel    : #");
	check_mask("Timer Wall Time: 0.610553", "Timer Wall Time: #");
	check_mask("0.018891", "#");
	check_mask("t=-1.5e-03s, n=12, p=0x7ffd12ab", "t=#s, n=#, p=#");
	check_mask("took 12ms (.5 of 3.)", "took #ms (# of #)");
	check_mask("sm_90 x86_64 md5 v2", "sm_90 x86_64 md5 v2");
	check_mask("", "");
	CHECK(output_line_is_timing("GPU Runtime: 0.01", 17));
	CHECK(output_line_is_timing("copy 12.5 GB/s", 14));
	CHECK(output_line_is_timing("Kernel 3 ms", 11));
	CHECK(!output_line_is_timing("checksum = 42", 13));
	CHECK(!output_line_is_timing("items: 3", 8));
}

/* --output-ignore: ^ and $ anchor at each line (the newline is not matched). */
static void test_filter(void)
{
	regex_t re;
	char *s;

	CHECK_INT(regcomp(&re, "^Kernel.*[0-9]$", REG_EXTENDED | REG_NOSUB), 0);
	s = output_filter_lines("start\nKernel : 0.012076\nresult 7\nKernel : 9\n", &re);
	CHECK_STR(s, "start\nresult 7\n");
	free(s);
	s = output_filter_lines("a\nKernel : 1", &re);
	CHECK_STR(s, "a\n");
	free(s);
	regfree(&re);
	CHECK_INT(regcomp(&re, "^$", REG_EXTENDED | REG_NOSUB), 0);
	s = output_filter_lines("a\n\nb\n", &re);
	CHECK_STR(s, "a\nb\n");
	free(s);
	regfree(&re);
	s = output_filter_lines("x\ny", NULL);
	CHECK_STR(s, "x\ny");
	free(s);
}

static void set_run(struct run_output *o, const char *out)
{
	run_output_init(o);
	o->ok = 1;
	o->out = xstrdup(out);
	o->err = xstrdup("");
}

static const char *status_of(json_t *j)
{
	return json_string_value(json_object_get(j, "status"));
}

static const char *file_status(json_t *j, const char *path)
{
	size_t i;
	json_t *f;

	json_array_foreach(json_object_get(j, "files"), i, f)
		if (!strcmp(json_string_value(json_object_get(f, "path")), path))
			return json_string_value(json_object_get(f, "status"));
	return "(none)";
}

/* Timing lines differ between baselines: masked and accepted. A result line
 * that changes with the advice is rejected. */
static void test_streams(void)
{
	struct output_check_options strict;
	struct run_output a, b, v1, v2, v3;
	const struct run_output *base[2] = { &a, &b }, *var[3] = { &v1, &v2, &v3 };
	json_t *j;
	int ok;

	output_check_options_init(&strict);
	strict.strict = 1;
	set_run(&a, "Reading in.bin\nKernel    : 0.012076\nresult 42\nIO : 0.286898\n");
	set_run(&b, "Reading in.bin\nKernel    : 0.013001\nresult 42\nIO : 0.301000\n");
	set_run(&v1, "Reading in.bin\nKernel    : 0.009\nresult 42\nIO : 0.25\n");
	set_run(&v2, "Reading in.bin\nKernel    : 0.009\nresult 42\nIO : 0.25\n");
	set_run(&v3, "Reading in.bin\nKernel    : 1.5e-3\nresult 42\nIO : 2\n");
	j = output_check_judge(base, 2, var, 3, NULL, &ok);
	CHECK_STR(status_of(j), "identical");
	CHECK_INT(ok, 1);
	CHECK_INT(json_integer_value(json_object_get(j, "volatile_lines")), 2);
	CHECK_STR(json_string_value(json_array_get(json_object_get(j, "volatile_examples"), 0)),
		  "stdout line 2: Kernel    : 0.012076");
	json_decref(j);

	/* baselines only: the capture's baseline check */
	j = output_check_judge(base, 2, NULL, 0, &strict, &ok);
	CHECK_STR(status_of(j), "identical");
	CHECK_INT(ok, 1);
	json_decref(j);

	/* the result line changed */
	free(v2.out);
	v2.out = xstrdup("Reading in.bin\nKernel    : 0.009\nresult 43\nIO : 0.25\n");
	j = output_check_judge(base, 2, var, 3, NULL, &ok);
	CHECK_STR(status_of(j), "changed");
	CHECK_INT(ok, 0);
	CHECK(strstr(json_string_value(json_object_get(j, "reason")),
		     "stdout line 3 'result 42' became 'result 43'") != NULL);
	json_decref(j);

	/* a volatile line whose words change is a change too */
	free(v2.out);
	v2.out = xstrdup("Reading in.bin\nKernel FAILED: 0.009\nresult 42\nIO : 0.25\n");
	j = output_check_judge(base, 2, var, 3, NULL, &ok);
	CHECK_STR(status_of(j), "changed");
	json_decref(j);

	/* a line missing */
	free(v2.out);
	v2.out = xstrdup("Reading in.bin\nKernel    : 0.009\nIO : 0.25\n");
	j = output_check_judge(base, 2, var, 3, NULL, &ok);
	CHECK_STR(status_of(j), "changed");
	json_decref(j);

	/* a timing line that both baselines printed alike still varies */
	free(v2.out);
	v2.out = xstrdup("Reading in.bin\nKernel    : 0.009\nresult 42\nIO : 0.25\n");
	free(a.out);
	free(b.out);
	a.out = xstrdup("Time: 0.01 s\nresult 42\n");
	b.out = xstrdup("Time: 0.01 s\nresult 42\n");
	free(v1.out);
	v1.out = xstrdup("Time: 0.02 s\nresult 42\n");
	j = output_check_judge(base, 2, var, 1, NULL, &ok);
	CHECK_STR(status_of(j), "identical");
	json_decref(j);
	free(v1.out);
	v1.out = xstrdup("Time: 0.01 s\nresult 41\n");
	j = output_check_judge(base, 2, var, 1, NULL, &ok);
	CHECK_STR(status_of(j), "changed");
	json_decref(j);

	/* a line whose words differ between baselines (issue 25, item 3): left
	 * out and listed; the stable line is still checked; rejected only when
	 * strict */
	free(b.out);
	b.out = xstrdup("Time: 0.01 s\nresult forty-one\n");
	j = output_check_judge(base, 2, var, 1, NULL, &ok);
	CHECK_STR(status_of(j), "identical");
	CHECK_INT(ok, 1);
	CHECK_INT(json_integer_value(json_object_get(j, "unstable_lines")), 1);
	CHECK_STR(json_string_value(json_array_get(json_object_get(j, "unstable_examples"), 0)),
		  "stdout line 2: result 42");
	CHECK(strstr(json_string_value(json_object_get(j, "reason")),
		     "left out, as they differ between baseline runs: stdout line 2") != NULL);
	json_decref(j);
	j = output_check_judge(base, 2, var, 1, &strict, &ok);
	CHECK_INT(ok, 0);
	json_decref(j);
	/* the stable lines still catch a change */
	free(v1.out);
	v1.out = xstrdup("Error: 0.01 s\nresult 42\n");
	j = output_check_judge(base, 2, var, 1, NULL, &ok);
	CHECK_STR(status_of(j), "changed");
	json_decref(j);
	free(v1.out);
	v1.out = xstrdup("Time: 0.01 s\nresult 41\n");
	/* nothing stable left to compare: unchecked */
	free(a.out);
	a.out = xstrdup("result 42\n");
	free(b.out);
	b.out = xstrdup("result forty-one\n");
	free(v1.out);
	v1.out = xstrdup("result 7\n");
	j = output_check_judge(base, 2, var, 1, NULL, &ok);
	CHECK_STR(status_of(j), "unchecked");
	CHECK_INT(ok, 1);
	CHECK(strstr(json_string_value(json_object_get(j, "reason")),
		     "output unchecked: the program's results differ between baseline runs (stdout line 1)") != NULL);
	json_decref(j);
	j = output_check_judge(base, 2, var, 1, &strict, &ok);
	CHECK_STR(status_of(j), "unchecked");
	CHECK_INT(ok, 0);
	json_decref(j);
	free(a.out);
	a.out = xstrdup("Time: 0.01 s\nresult 42\n");
	free(v1.out);
	v1.out = xstrdup("Time: 0.01 s\nresult 41\n");

	/* a failed advice run is not judged here (the A/B runs reject it) */
	v1.ok = 0;
	free(b.out);
	b.out = xstrdup("Time: 0.01 s\nresult 42\n");
	j = output_check_judge(base, 2, var, 1, NULL, &ok);
	CHECK_STR(status_of(j), "identical");
	json_decref(j);

	run_output_release(&a);
	run_output_release(&b);
	run_output_release(&v1);
	run_output_release(&v2);
	run_output_release(&v3);
}

/* Files: compared by hash; one that differs between baselines is volatile;
 * created and missing files are changes. */
static void test_files(void)
{
	struct run_output a, b, v;
	const struct run_output *base[2] = { &a, &b }, *var[1] = { &v };
	json_t *j;
	int ok;

	set_run(&a, "done\n");
	set_run(&b, "done\n");
	set_run(&v, "done\n");
	run_output_add_file(&a, "result.txt", 1, 10, "aaaa");
	run_output_add_file(&b, "result.txt", 1, 10, "aaaa");
	run_output_add_file(&v, "result.txt", 1, 10, "aaaa");
	run_output_add_file(&a, "grid.bin", 1, 64, "g1");
	run_output_add_file(&b, "grid.bin", 1, 64, "g2");
	run_output_add_file(&v, "grid.bin", 1, 64, "g3");
	/* grid.bin differs between baselines (and no contents were kept): left
	 * out; result.txt and the lines are still checked */
	j = output_check_judge(base, 2, var, 1, NULL, &ok);
	CHECK_STR(status_of(j), "identical");
	CHECK_INT(ok, 1);
	CHECK_STR(file_status(j, "result.txt"), "identical");
	CHECK_STR(file_status(j, "grid.bin"), "unchecked");
	CHECK(strstr(json_string_value(json_object_get(j, "reason")), "file 'grid.bin'") != NULL);
	json_decref(j);

	/* the baselines agree on grid.bin; the advice changes result.txt */
	snprintf(b.files[1].sha256, sizeof(b.files[1].sha256), "g1");
	snprintf(v.files[1].sha256, sizeof(v.files[1].sha256), "g1");
	snprintf(v.files[0].sha256, sizeof(v.files[0].sha256), "bbbb");
	v.files[0].size = 11;
	j = output_check_judge(base, 2, var, 1, NULL, &ok);
	CHECK_STR(status_of(j), "changed");
	CHECK_INT(ok, 0);
	CHECK_STR(file_status(j, "result.txt"), "changed");
	CHECK_STR(file_status(j, "grid.bin"), "identical");
	{
		json_t *f = json_array_get(json_object_get(j, "files"), 0);
		CHECK_INT(json_integer_value(json_object_get(f, "size")), 10);
		CHECK_STR(json_string_value(json_object_get(f, "sha256")), "aaaa");
		CHECK_INT(json_integer_value(json_object_get(f, "advice_size")), 11);
		CHECK_STR(json_string_value(json_object_get(f, "advice_sha256")), "bbbb");
	}
	CHECK(strstr(json_string_value(json_object_get(j, "reason")), "file 'result.txt' differs") != NULL);
	json_decref(j);
	run_output_release(&v);

	/* the advice run does not write result.txt, and writes a file of its own */
	set_run(&v, "done\n");
	run_output_add_file(&v, "grid.bin", 1, 64, "g1");
	run_output_add_file(&v, "core.1234", 1, 99, "cc");
	j = output_check_judge(base, 2, var, 1, NULL, &ok);
	CHECK_STR(status_of(j), "changed");
	CHECK_STR(file_status(j, "result.txt"), "missing");
	CHECK_STR(file_status(j, "core.1234"), "created");
	json_decref(j);

	/* baselines that each write a file of another name (a timestamp): a new
	 * file of the advice run is not held against it */
	run_output_add_file(&v, "result.txt", 1, 10, "aaaa");
	run_output_add_file(&a, "log-1200.txt", 1, 5, "l1");
	run_output_add_file(&b, "log-1201.txt", 1, 5, "l2");
	j = output_check_judge(base, 2, var, 1, NULL, &ok);
	CHECK_STR(status_of(j), "identical");
	CHECK_STR(file_status(j, "core.1234"), "created");
	CHECK_STR(file_status(j, "log-1200.txt"), "unchecked");
	json_decref(j);

	run_output_release(&a);
	run_output_release(&b);
	run_output_release(&v);
}

static int close_line(const char *a, const char *b)
{
	double da = 0, dr = 0;

	return output_line_close(a, strlen(a), b, strlen(b), 1e-5, 1e-8, &da, &dr);
}

/* Numbers within the tolerance, words exactly. */
static void test_line_close(void)
{
	double da = 0, dr = 0;

	CHECK(close_line("residual 1.2345678e-03 after 200 steps", "residual 1.2345679e-03 after 200 steps"));
	CHECK(!close_line("residual 1.2345678e-03", "residual 1.2346e-03"));
	CHECK(!close_line("count 1000", "count 1001"));
	CHECK(close_line("count 1000", "count 1000.0"));
	CHECK(!close_line("status ok 3.0", "status OK 3.0"));
	CHECK(!close_line("sm_90 3.0", "sm_80 3.0"));
	CHECK(!close_line("a 1 2", "a 1"));
	CHECK(close_line("p=0x10", "p=16"));
	CHECK(close_line("x = 0.0", "x = 1e-9"));        /* atol */
	CHECK(!close_line("x = 0.0", "x = 1e-7"));
	CHECK(output_line_close("v 100.0", 7, "v 100.0005", 10, 1e-5, 0, &da, &dr));
	CHECK_NEAR(da, 0.0005, 1e-9);
	CHECK_NEAR(dr, 0.0005 / 100.0005, 1e-12);
	{
		char *path;
		enum output_file_kind k;

		CHECK_INT(output_compare_parse("out.bin:f32", &path, &k), 0);
		CHECK_STR(path, "out.bin");
		CHECK_INT(k, OUTPUT_FILE_F32);
		free(path);
		CHECK_INT(output_compare_parse("dir:x/out.bin", &path, &k), 0);
		CHECK_STR(path, "dir:x/out.bin");
		CHECK_INT(k, OUTPUT_FILE_AUTO);
		free(path);
		CHECK_INT(output_compare_parse("out.bin:f16", &path, &k), CA_E_USAGE);
		CHECK_INT(output_compare_parse(":f32", &path, &k), CA_E_USAGE);
	}
}

/* A file with contents: a copy of data (caller's bytes). */
static void add_data_file(struct run_output *o, const char *path, const void *data, size_t len,
			  const char *sha)
{
	struct output_file *f = run_output_add_file(o, path, 1, (long long)len, sha);

	f->data = xmalloc(len + 1);
	memcpy(f->data, data, len);
	f->data_len = len;
}

/*
 * Floating-point results a re-JIT-compiled kernel rounds differently in the
 * last bits (issue 25, item 2): equal within the tolerance, with the
 * largest difference; beyond it, changed.
 */
static void test_float_files(void)
{
	struct run_output a, b, v;
	const struct run_output *base[2] = { &a, &b }, *var[1] = { &v };
	float ref[256], near[256], far[256];
	double ref64[64], near64[64];
	struct output_check_options opt;
	const char *paths[1] = { "grid.f64" };
	enum output_file_kind kinds[1] = { OUTPUT_FILE_F64 };
	json_t *j, *f;
	size_t i;
	int ok;

	for (i = 0; i < 256; i++) {
		ref[i] = 1.0f + (float)i * 0.37f;
		near[i] = nextafterf(ref[i], 10000.0f);     /* one ulp */
		far[i] = ref[i];
	}
	far[17] *= 1.001f;
	for (i = 0; i < 64; i++) {
		ref64[i] = 3.0 + (double)i;
		near64[i] = ref64[i] * (1 + 1e-9);
	}
	set_run(&a, "done\n");
	set_run(&b, "done\n");
	set_run(&v, "done\n");
	add_data_file(&a, "field.bin", ref, sizeof(ref), "r");
	add_data_file(&b, "field.bin", ref, sizeof(ref), "r");
	add_data_file(&v, "field.bin", near, sizeof(near), "n");
	j = output_check_judge(base, 2, var, 1, NULL, &ok);
	CHECK_STR(status_of(j), "within_tolerance");
	CHECK_INT(ok, 1);
	CHECK_STR(file_status(j, "field.bin"), "within_tolerance");
	f = json_array_get(json_object_get(j, "files"), 0);
	CHECK_STR(json_string_value(json_object_get(f, "compared_as")), "f32");
	CHECK(json_real_value(json_object_get(f, "max_rel_difference")) > 0);
	CHECK(json_real_value(json_object_get(f, "max_rel_difference")) < 1e-6);
	CHECK_STR(json_string_value(json_object_get(json_object_get(j, "max_difference"), "where")),
		  "file 'field.bin'");
	CHECK(strstr(json_string_value(json_object_get(j, "reason")), "within the tolerance") != NULL);
	json_decref(j);

	/* one value 0.1% off: changed */
	free(v.files[0].data);
	v.files[0].data = xmalloc(sizeof(far));
	memcpy(v.files[0].data, far, sizeof(far));
	j = output_check_judge(base, 2, var, 1, NULL, &ok);
	CHECK_STR(status_of(j), "changed");
	CHECK_INT(ok, 0);
	json_decref(j);
	/* ... unless the tolerance allows it */
	output_check_options_init(&opt);
	opt.rtol = 1e-2;
	j = output_check_judge(base, 2, var, 1, &opt, &ok);
	CHECK_STR(status_of(j), "within_tolerance");
	json_decref(j);

	/* baselines that differ in the last bits: the file is still checked */
	free(b.files[0].data);
	b.files[0].data = xmalloc(sizeof(near));
	memcpy(b.files[0].data, near, sizeof(near));
	snprintf(b.files[0].sha256, sizeof(b.files[0].sha256), "n");
	j = output_check_judge(base, 2, var, 1, NULL, &ok);
	CHECK_STR(file_status(j, "grid.bin"), "(none)");
	CHECK_STR(file_status(j, "field.bin"), "changed");
	json_decref(j);
	/* contents kept in a file are read where the hashes differ */
	{
		char path[] = "/tmp/test_output_check_XXXXXX";
		int fd = mkstemp(path);

		CHECK(fd >= 0);
		CHECK(write(fd, ref, sizeof(ref)) == (ssize_t)sizeof(ref));
		close(fd);
		free(b.files[0].data);
		b.files[0].data = NULL;
		b.files[0].data_path = xstrdup(path);
		snprintf(b.files[0].sha256, sizeof(b.files[0].sha256), "r");
		free(v.files[0].data);
		v.files[0].data = xmalloc(sizeof(near));
		memcpy(v.files[0].data, near, sizeof(near));
		v.files[0].data_len = sizeof(near);
		j = output_check_judge(base, 2, var, 1, NULL, &ok);
		CHECK_STR(file_status(j, "field.bin"), "within_tolerance");
		json_decref(j);
		/* and a reference whose copy is gone: the hash alone */
		free(a.files[0].data);
		a.files[0].data = NULL;
		unlink(path);
		a.files[0].data_path = xstrdup(path);
		j = output_check_judge(base, 2, var, 1, NULL, &ok);
		CHECK_STR(file_status(j, "field.bin"), "changed");
		json_decref(j);
	}
	/* without contents, a hash difference is all there is */
	free(v.files[0].data);
	v.files[0].data = NULL;
	j = output_check_judge(base, 2, var, 1, NULL, &ok);
	CHECK_STR(file_status(j, "field.bin"), "changed");
	json_decref(j);
	run_output_release(&a);
	run_output_release(&b);
	run_output_release(&v);

	/* float64, named (--compare grid.f64:f64) */
	set_run(&a, "done\n");
	set_run(&b, "done\n");
	set_run(&v, "done\n");
	add_data_file(&a, "grid.f64", ref64, sizeof(ref64), "r");
	add_data_file(&b, "grid.f64", ref64, sizeof(ref64), "r");
	add_data_file(&v, "grid.f64", near64, sizeof(near64), "n");
	output_check_options_init(&opt);
	opt.format_paths = paths;
	opt.format_kinds = kinds;
	opt.nr_formats = 1;
	j = output_check_judge(base, 2, var, 1, &opt, &ok);
	CHECK_STR(file_status(j, "grid.f64"), "within_tolerance");
	f = json_array_get(json_object_get(j, "files"), 0);
	CHECK_STR(json_string_value(json_object_get(f, "compared_as")), "f64");
	json_decref(j);
	/* the same bytes as bytes only: changed */
	kinds[0] = OUTPUT_FILE_BYTES;
	j = output_check_judge(base, 2, var, 1, &opt, &ok);
	CHECK_STR(file_status(j, "grid.f64"), "changed");
	json_decref(j);
	run_output_release(&a);
	run_output_release(&b);
	run_output_release(&v);

	/* a text result file: lines with their numbers within the tolerance */
	set_run(&a, "done\n");
	set_run(&b, "done\n");
	set_run(&v, "done\n");
	add_data_file(&a, "result.txt", "step 10 energy 1.23456789\n", 26, "t1");
	add_data_file(&b, "result.txt", "step 10 energy 1.23456789\n", 26, "t1");
	add_data_file(&v, "result.txt", "step 10 energy 1.23456790\n", 26, "t2");
	j = output_check_judge(base, 2, var, 1, NULL, &ok);
	CHECK_STR(file_status(j, "result.txt"), "within_tolerance");
	f = json_array_get(json_object_get(j, "files"), 0);
	CHECK_STR(json_string_value(json_object_get(f, "compared_as")), "text");
	json_decref(j);
	free(v.files[0].data);
	v.files[0].data = xstrdup("step 11 energy 1.23456789\n");
	v.files[0].data_len = 26;
	j = output_check_judge(base, 2, var, 1, NULL, &ok);
	CHECK_STR(file_status(j, "result.txt"), "changed");
	json_decref(j);
	run_output_release(&a);
	run_output_release(&b);
	run_output_release(&v);

	/* stdout numbers that a re-JIT rounds otherwise: within the tolerance */
	set_run(&a, "L2 norm 0.123456789\n");
	set_run(&b, "L2 norm 0.123456789\n");
	set_run(&v, "L2 norm 0.123456790\n");
	j = output_check_judge(base, 2, var, 1, NULL, &ok);
	CHECK_STR(status_of(j), "within_tolerance");
	CHECK_STR(json_string_value(json_object_get(json_object_get(j, "max_difference"), "where")),
		  "stdout line 1");
	json_decref(j);
	/* and baselines that differ that little keep the line stable */
	free(b.out);
	b.out = xstrdup("L2 norm 0.123456791\n");
	free(v.out);
	v.out = xstrdup("L2 norm 0.123457\n");
	j = output_check_judge(base, 2, var, 1, NULL, &ok);
	CHECK_INT(json_integer_value(json_object_get(j, "volatile_lines")), 0);
	CHECK_STR(status_of(j), "within_tolerance");
	json_decref(j);
	run_output_release(&a);
	run_output_release(&b);
	run_output_release(&v);
}

/*
 * A run of changed code (the monitor run) against the program's reference
 * runs (the discovery run and the first capture pass), as real programs
 * print (FACTS.md "Real programs under profile"): the timings differ in
 * every run and are no difference; a result line or file that differs is
 * named, the first few in order.
 */
static void test_changed(void)
{
	static const char disc[] = "Rodinia srad\nKernel : 0.012076\nTimer Wall Time: 0.61\n"
				   "0.018891\nseed 1732\nresult 42\n";
	struct run_output a, b, m;
	const struct run_output *ref[2] = { &a, &b };
	char *what;

	set_run(&a, disc);
	set_run(&b, "Rodinia srad\nKernel : 0.011802\nTimer Wall Time: 0.59\n0.017003\nseed 1811\n"
		"result 42\n");
	set_run(&m, "Rodinia srad\nKernel : 0.013001\nTimer Wall Time: 0.83\n0.021\nseed 99\n"
		"result 42\n");
	run_output_add_file(&a, "out.bin", 1, 64, "o1");
	run_output_add_file(&b, "out.bin", 1, 64, "o1");
	run_output_add_file(&m, "out.bin", 1, 64, "o1");
	run_output_add_file(&a, "grid.bin", 1, 64, "g1");
	run_output_add_file(&b, "grid.bin", 1, 64, "g2");
	run_output_add_file(&m, "grid.bin", 1, 64, "g3");
	/* timings masked, the seed and grid.bin left out (they differ between
	 * the references): nothing to say */
	CHECK(output_check_changed(ref, 2, &m, NULL) == NULL);

	/* the discovery run alone cannot tell "Kernel : 0.012076" from a
	 * result (the note on every real program, issue 35 item 4); a line
	 * that reads as a timing is still masked */
	what = output_check_changed(ref, 1, &m, NULL);
	CHECK_STR(what, "stdout line 2: 'Kernel : 0.012076' became 'Kernel : 0.013001', "
		  "stdout line 4: '0.018891' became '0.021', stdout line 5: 'seed 1732' became "
		  "'seed 99', file 'grid.bin'");
	free(what);

	/* a result line and a result file differ: both named */
	free(m.out);
	m.out = xstrdup("Rodinia srad\nKernel : 0.013001\nTimer Wall Time: 0.83\n0.021\nseed 99\n"
			"result 41\n");
	snprintf(m.files[0].sha256, sizeof(m.files[0].sha256), "o2");
	what = output_check_changed(ref, 2, &m, NULL);
	CHECK_STR(what, "stdout line 6: 'result 42' became 'result 41', file 'out.bin'");
	free(what);

	/* strict or not, what differs between the references is left out */
	{
		struct output_check_options strict;

		output_check_options_init(&strict);
		strict.strict = 1;
		snprintf(m.files[0].sha256, sizeof(m.files[0].sha256), "o1");
		what = output_check_changed(ref, 2, &m, &strict);
		CHECK_STR(what, "stdout line 6: 'result 42' became 'result 41'");
		free(what);
	}

	/* more lines than are named; a file not written */
	free(m.out);
	m.out = xstrdup("Rodinia SRAD\nkernel : 0.013001\nTimer Wall Time: 0.83\nx\nseed 99\n"
			"result 41\n");
	m.nr_files = 1;
	free(m.files[1].path);
	free(m.files[0].path);
	m.files[0].path = xstrdup("other.bin");
	what = output_check_changed(ref, 2, &m, NULL);
	CHECK_STR(what, "stdout line 1: 'Rodinia srad' became 'Rodinia SRAD', stdout line 2: "
		  "'Kernel : 0.012076' became 'kernel : 0.013001', stdout line 4: '0.018891' "
		  "became 'x', stdout line 6: 'result 42' became 'result 41', ...");
	free(what);
	free(m.out);
	m.out = xstrdup(disc);
	what = output_check_changed(ref, 2, &m, NULL);
	CHECK_STR(what, "file 'out.bin' (not written), file 'other.bin' (new)");
	free(what);

	/* another number of lines */
	free(m.out);
	m.out = xstrdup("Rodinia srad\n");
	run_output_add_file(&m, "out.bin", 1, 64, "o1");
	what = output_check_changed(ref, 2, &m, NULL);
	CHECK(what && strstr(what, "stdout has 1 lines instead of 6"));
	free(what);

	/* a failed run, or no reference that ran to the end: nothing judged */
	m.ok = 0;
	CHECK(output_check_changed(ref, 2, &m, NULL) == NULL);
	m.ok = 1;
	a.ok = b.ok = 0;
	CHECK(output_check_changed(ref, 2, &m, NULL) == NULL);
	CHECK(output_check_changed(ref, 0, &m, NULL) == NULL);
	run_output_release(&a);
	run_output_release(&b);
	run_output_release(&m);
}

/* What the rest of the tool reads of a judgement: through the capture's reader. */
static void test_accessors(void)
{
	json_t *j = json_pack("{s:s, s:s, s:i}", "status", "changed", "reason", "out.txt differs",
			      "left_out", 0);
	char *r = output_check_reason(j);

	CHECK_STR(output_check_status(j), "changed");
	CHECK_STR(r, "out.txt differs");
	CHECK(output_check_baselines_agree(j));
	free(r);
	json_object_set_new(j, "left_out", json_integer(2));    /* unstable lines left out */
	CHECK(!output_check_baselines_agree(j));
	json_object_set_new(j, "status", json_string("unchecked"));
	json_object_set_new(j, "left_out", json_integer(0));
	CHECK(!output_check_baselines_agree(j));
	json_object_set_new(j, "status", json_string("maybe"));  /* no status of ours */
	CHECK_STR(output_check_status(j), "");
	json_object_set_new(j, "left_out", json_integer(-4));   /* refused by the reader */
	CHECK_STR(output_check_status(j), "");
	r = output_check_reason(j);
	CHECK_STR(r, "");
	free(r);
	json_decref(j);
	CHECK_STR(output_check_status(NULL), "");
	CHECK(!output_check_baselines_agree(NULL));
}

int main(void)
{
	test_line_close();
	test_float_files();
	test_mask();
	test_filter();
	test_streams();
	test_files();
	test_changed();
	test_accessors();
	return check_done();
}
