/*
 * Unit tests of emitters/rewrite/helper_form.h: the names of the forms a
 * helper's CA_FORM template parameter takes, and their guarded block.
 * The rewrite itself runs in tests/cli/t_helper_loads.sh, on the
 * committed PTX of samples/helper_loads.cu.
 */
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "emitters/rewrite/helper_form.h"
#include "tests/unit/check.h"

static void test_names(void)
{
	char *s;

	s = helper_form_name("L2::evict_first");
	CHECK_STR(s, "CA_FORM_L2EF");
	free(s);
	s = helper_form_name("L1::no_allocate");
	CHECK_STR(s, "CA_FORM_NA");
	free(s);
	CHECK(helper_form_name("default") == NULL);
	CHECK(helper_form_name("bypass") == NULL);
	CHECK(helper_form_name(NULL) == NULL);
}

static void test_macros(void)
{
	struct strbuf sb = STRBUF_INIT;

	CHECK(helper_form_macros_write(&sb, NULL) == 1);
	CHECK(strstr(sb.buf, "#ifndef CA_FORM_AS_BUILT\n#define CA_FORM_AS_BUILT 0\n") != NULL);
	CHECK(strstr(sb.buf, "#define CA_FORM_L2EF ") != NULL);
	CHECK(strstr(sb.buf, "#define CA_FORM_NA_L2EF ") != NULL);
	CHECK(strstr(sb.buf, "#endif\n") != NULL);
	/* a file that has them already gets none */
	CHECK(helper_form_macros_write(&sb, sb.buf) == 0);
	strbuf_release(&sb);
}

int main(void)
{
	test_names();
	test_macros();
	return check_done();
}
