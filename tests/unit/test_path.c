/*
 * base/path.c: paths as line info records them ("kernel/./k.cu", from an
 * #include "./k.cu"), as a diff names them.
 */
#include <stdlib.h>

#include "base/path.h"
#include "base/xalloc.h"
#include "tests/unit/check.h"

static void test_path_normalize(void)
{
	static const char *const cases[][2] = {
		{ "cuda/lavaMD/kernel/./kernel_gpu_cuda.cu", "cuda/lavaMD/kernel/kernel_gpu_cuda.cu" },
		{ "./k.cu", "k.cu" },
		{ "a//b/./c.cu", "a/b/c.cu" },
		{ "src/../kernel/k.cu", "kernel/k.cu" },
		{ "a/b/../../c.cu", "c.cu" },
		{ "../up/k.cu", "../up/k.cu" },
		{ "a/../../up.cu", "../up.cu" },
		{ "/build/x/./y/../k.cu", "/build/x/k.cu" },
		{ "/../k.cu", "/../k.cu" },
		{ "k.cu", "k.cu" },
		{ ".", "." },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		char *got = path_normalize(cases[i][0]);

		CHECK_STR(got, cases[i][1]);
		free(got);
	}
}

int main(void)
{
	test_path_normalize();
	return check_done();
}
