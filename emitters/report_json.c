#include <stdlib.h>

#include "emitters/capture_layout.h"
#include "base/json_file.h"
#include "emitters/report.h"
#include "emitters/report_carveout.h"
#include "emitters/report_l2.h"
#include "emitters/report_output.h"
#include "emitters/rewrite/regcache_patch.h"

/* report.json: report_to_json() (docs/report-json.md), indented. */
static int render_json(const struct report_input *in, const struct report_options *opt,
		       struct strbuf *out)
{
	json_t *doc = report_to_json(in);
	char *s;

	report_carveout_json(doc, in);
	report_l2_json(doc, in);
	json_object_set_new(doc, "output_check", report_output_json(in));
	regcache_patch_json(doc, in);
	s = json_to_string(doc);

	(void)opt;
	strbuf_addstr(out, s);
	strbuf_addch(out, '\n');
	free(s);
	json_decref(doc);
	return 0;
}

const struct report_format report_format_json = { "json", CAPTURE_LAYOUT_REPORT_JSON, render_json };
