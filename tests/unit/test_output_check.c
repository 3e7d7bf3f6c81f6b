#include <regex.h>

#include "analysis/output_check.h"
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
	struct run_output a, b, v1, v2, v3;
	const struct run_output *base[2] = { &a, &b }, *var[3] = { &v1, &v2, &v3 };
	json_t *j;
	int ok;

	set_run(&a, "Reading in.bin\nKernel    : 0.012076\nresult 42\nIO : 0.286898\n");
	set_run(&b, "Reading in.bin\nKernel    : 0.013001\nresult 42\nIO : 0.301000\n");
	set_run(&v1, "Reading in.bin\nKernel    : 0.009\nresult 42\nIO : 0.25\n");
	set_run(&v2, "Reading in.bin\nKernel    : 0.009\nresult 42\nIO : 0.25\n");
	set_run(&v3, "Reading in.bin\nKernel    : 1.5e-3\nresult 42\nIO : 2\n");
	j = output_check_judge(base, 2, var, 3, 0, &ok);
	CHECK_STR(status_of(j), "identical");
	CHECK_INT(ok, 1);
	CHECK_INT(json_integer_value(json_object_get(j, "volatile_lines")), 2);
	CHECK_STR(json_string_value(json_array_get(json_object_get(j, "volatile_examples"), 0)),
		  "stdout line 2: Kernel    : 0.012076");
	json_decref(j);

	/* baselines only: the capture's baseline check */
	j = output_check_judge(base, 2, NULL, 0, 1, &ok);
	CHECK_STR(status_of(j), "identical");
	CHECK_INT(ok, 1);
	json_decref(j);

	/* the result line changed */
	free(v2.out);
	v2.out = xstrdup("Reading in.bin\nKernel    : 0.009\nresult 43\nIO : 0.25\n");
	j = output_check_judge(base, 2, var, 3, 0, &ok);
	CHECK_STR(status_of(j), "changed");
	CHECK_INT(ok, 0);
	CHECK(strstr(json_string_value(json_object_get(j, "reason")),
		     "stdout line 3 'result 42' became 'result 43'") != NULL);
	json_decref(j);

	/* a volatile line whose words change is a change too */
	free(v2.out);
	v2.out = xstrdup("Reading in.bin\nKernel FAILED: 0.009\nresult 42\nIO : 0.25\n");
	j = output_check_judge(base, 2, var, 3, 0, &ok);
	CHECK_STR(status_of(j), "changed");
	json_decref(j);

	/* a line missing */
	free(v2.out);
	v2.out = xstrdup("Reading in.bin\nKernel    : 0.009\nIO : 0.25\n");
	j = output_check_judge(base, 2, var, 3, 0, &ok);
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
	j = output_check_judge(base, 2, var, 1, 0, &ok);
	CHECK_STR(status_of(j), "identical");
	json_decref(j);
	free(v1.out);
	v1.out = xstrdup("Time: 0.01 s\nresult 41\n");
	j = output_check_judge(base, 2, var, 1, 0, &ok);
	CHECK_STR(status_of(j), "changed");
	json_decref(j);

	/* results that differ between baselines: unchecked, rejected only when strict */
	free(b.out);
	b.out = xstrdup("Time: 0.01 s\nresult forty-one\n");
	j = output_check_judge(base, 2, var, 1, 0, &ok);
	CHECK_STR(status_of(j), "unchecked");
	CHECK_INT(ok, 1);
	CHECK_INT(json_integer_value(json_object_get(j, "unstable_lines")), 1);
	CHECK(strstr(json_string_value(json_object_get(j, "reason")),
		     "output unchecked: the program's results differ between baseline runs (stdout line 2)") != NULL);
	json_decref(j);
	j = output_check_judge(base, 2, var, 1, 1, &ok);
	CHECK_STR(status_of(j), "unchecked");
	CHECK_INT(ok, 0);
	json_decref(j);

	/* a failed advice run is not judged here (the A/B runs reject it) */
	v1.ok = 0;
	free(b.out);
	b.out = xstrdup("Time: 0.01 s\nresult 42\n");
	j = output_check_judge(base, 2, var, 1, 0, &ok);
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
	j = output_check_judge(base, 2, var, 1, 0, &ok);
	CHECK_STR(status_of(j), "unchecked");
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
	j = output_check_judge(base, 2, var, 1, 0, &ok);
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
	j = output_check_judge(base, 2, var, 1, 0, &ok);
	CHECK_STR(status_of(j), "changed");
	CHECK_STR(file_status(j, "result.txt"), "missing");
	CHECK_STR(file_status(j, "core.1234"), "created");
	json_decref(j);

	/* baselines that each write a file of another name (a timestamp): a new
	 * file of the advice run is not held against it */
	run_output_add_file(&v, "result.txt", 1, 10, "aaaa");
	run_output_add_file(&a, "log-1200.txt", 1, 5, "l1");
	run_output_add_file(&b, "log-1201.txt", 1, 5, "l2");
	j = output_check_judge(base, 2, var, 1, 0, &ok);
	CHECK_STR(status_of(j), "unchecked");
	CHECK_STR(file_status(j, "core.1234"), "created");
	CHECK_STR(file_status(j, "log-1200.txt"), "unchecked");
	json_decref(j);

	run_output_release(&a);
	run_output_release(&b);
	run_output_release(&v);
}

int main(void)
{
	test_mask();
	test_filter();
	test_streams();
	test_files();
	return check_done();
}
