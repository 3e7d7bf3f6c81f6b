/*
 * The one escaper of text from input on its way to a terminal
 * (strbuf_add_printable and its variants, base/strbuf.h), and the
 * emitters that show such text: the probe's device summary (the GPU's
 * name from the driver or a device.json) and inspect's table (a PTX
 * .file name). Issue 36: raw ESC, BEL and CR reached the terminal.
 */
#include <string.h>

#include "analysis/device_model.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "emitters/device_summary.h"
#include "tests/unit/check.h"

static void test_helper(void)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_add_printable(&sb, "a\x1b[2J\x07\r\n\tb\x7f\xc2\x9b" "1m\xc3\xa9");
	CHECK_STR(sb.buf, "a\\x1b[2J\\x07\\x0d\\x0a\\x09b\\x7f\\xc2\\x9b1m\xc3\xa9");
	strbuf_reset(&sb);
	strbuf_add_printable_lines(&sb, "line 1\x1b]0;title\x07\r\n\tline 2\n");
	CHECK_STR(sb.buf, "line 1\\x1b]0;title\\x07\\x0d\n\tline 2\n");
	strbuf_reset(&sb);
	strbuf_add_printable_mem(&sb, "x\0y\xc2", 4, 0);
	CHECK_STR(sb.buf, "x\\x00y\xc2");     /* a lone lead byte is not a C1 control */
	strbuf_release(&sb);
}

static void test_device_summary(void)
{
	struct device_model dm;
	struct strbuf sb = STRBUF_INIT;

	device_model_init(&dm);
	free(dm.name);
	dm.name = xstrdup("NVIDIA \x1b[31mH200\x07\r");
	device_summary_text(&sb, &dm);
	CHECK(strstr(sb.buf, "GPU        NVIDIA \\x1b[31mH200\\x07\\x0d (") != NULL);
	CHECK(!strchr(sb.buf, 0x1b) && !strchr(sb.buf, 0x07) && !strchr(sb.buf, '\r'));
	CHECK(strchr(sb.buf, '\n') != NULL);        /* still lines */
	device_model_release(&dm);
	strbuf_release(&sb);
}

int main(void)
{
	test_helper();
	test_device_summary();
	return check_done();
}
