#include <string.h>

#include "analysis/carveout_verdict.h"
#include "tests/unit/check.h"

static const char *kept_of(json_t *e)
{
	return json_string_value(json_object_get(e, "kept"));
}

int main(void)
{
	/* A B B A launches: the default 20% faster, launches steady */
	double prog[16], def[16], rp[5] = { 1200, 1210, 1190, 1205, 1200 },
	       rd[5] = { 1000, 1005, 995, 1000, 1002 };
	struct carveout_times t = { prog, def, 16, 16, 0 };
	json_t *e;
	size_t i;
	char *a;

	/* the advice names who sets the carve-out (issue 25) */
	a = carveout_advice("k", 100, NULL);
	CHECK(strstr(a, "remove the cudaFuncSetAttribute(") != NULL);
	free(a);
	a = carveout_advice("sm90_gemm", 100, "cuBLAS");
	CHECK(strstr(a, "cuBLAS sets this carve-out (100) inside its own code") != NULL);
	CHECK(strstr(a, "remove") == NULL);
	free(a);

	for (i = 0; i < 16; i++) {
		prog[i] = 1200 + (double)(i % 3);
		def[i] = 1000 + (double)(i % 2);
	}
	e = carveout_verdict("k", 100, NULL, &t, 0.05, NULL);
	CHECK_STR(kept_of(e), "default");
	CHECK_INT(json_integer_value(json_object_get(e, "program_value")), 100);
	CHECK_INT(json_integer_value(json_object_get(e, "default_value")), -1);
	CHECK(json_number_value(json_object_get(json_object_get(json_object_get(e,
		"speedup_of_default"), "speedup"), "median")) > 1.15);
	CHECK(strstr(json_string_value(json_object_get(e, "advice")),
		     "cudaFuncAttributePreferredSharedMemoryCarveout, 100) call for kernel k") != NULL);
	json_decref(e);
	/* a library's kernel: the advice is phrased as the library's call */
	e = carveout_verdict("sm90_gemm", 100, "cuBLAS", &t, 0.05, NULL);
	CHECK_STR(kept_of(e), "default");
	CHECK(strstr(json_string_value(json_object_get(e, "advice")),
		     "cuBLAS sets this carve-out (100) inside its own code") != NULL);
	json_decref(e);

	/* the same times: the program's setting is right and kept as it is */
	for (i = 0; i < 16; i++)
		def[i] = prog[i];
	e = carveout_verdict("k", 0, NULL, &t, 0.05, NULL);
	CHECK_STR(kept_of(e), "program");
	CHECK(json_object_get(e, "advice") == NULL);
	CHECK(strstr(json_string_value(json_object_get(e, "reason")), "kept as it is") != NULL);
	CHECK(json_is_object(json_object_get(e, "speedup_of_default")));
	json_decref(e);

	/* replays of one launch */
	t = (struct carveout_times){ rp, rd, 5, 5, 1 };
	e = carveout_verdict("k", 100, NULL, &t, 0.05, NULL);
	CHECK_STR(kept_of(e), "default");
	CHECK_STR(json_string_value(json_object_get(json_object_get(e, "speedup_of_default"),
						    "method")), "in-run, replays of one launch");
	json_decref(e);

	/* too few launches, nothing timed, or the program sets the default */
	t = (struct carveout_times){ prog, def, 4, 4, 0 };
	e = carveout_verdict("k", 100, NULL, &t, 0.05, NULL);
	CHECK_STR(kept_of(e), "program");
	CHECK(json_is_null(json_object_get(e, "speedup_of_default")));
	json_decref(e);
	e = carveout_verdict("k", 100, NULL, NULL, 0.05, "its launches cannot be replayed");
	CHECK(strstr(json_string_value(json_object_get(e, "reason")), "cannot be replayed") != NULL);
	json_decref(e);
	e = carveout_verdict("k", -1, NULL, NULL, 0.05, NULL);
	CHECK_STR(kept_of(e), "program");
	json_decref(e);

	/* launches too noisy to compare in-run: not judged */
	for (i = 0; i < 16; i++) {
		prog[i] = (i % 4 == 0) ? 3000 : 1000;
		def[i] = 500;
	}
	t = (struct carveout_times){ prog, def, 16, 16, 0 };
	e = carveout_verdict("k", 100, NULL, &t, 0.05, NULL);
	CHECK_STR(kept_of(e), "program");
	json_decref(e);
	return check_done();
}
