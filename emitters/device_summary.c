#include <jansson.h>
#include <math.h>
#include <stdlib.h>

#include "base/json_file.h"
#include "emitters/device_summary.h"

static void print_size(struct strbuf *out, const char *label, unsigned long long v)
{
	if (!v)
		strbuf_addf(out, "%s not measured", label);
	else if (v >= (1ULL << 20) && v % (1ULL << 20) == 0)
		strbuf_addf(out, "%s %llu MB", label, v >> 20);
	else if (v >= 1024 && v % 1024 == 0)
		strbuf_addf(out, "%s %llu KB", label, v >> 10);
	else
		strbuf_addf(out, "%s %llu bytes", label, v);
}

static void print_latency(struct strbuf *out, const char *label, double v)
{
	if (v > 0)
		strbuf_addf(out, "%s %.0f cycles", label, v);
	else
		strbuf_addf(out, "%s not measured", label);
}

static void render_text(struct strbuf *out, const struct device_model *dm)
{
	double secs = device_model_probe_seconds(dm);
	const char *note;
	size_t i;

	strbuf_addf(out, "GPU        %s (%s), cc %s, %u SMs\n", dm->name ? dm->name : "?",
	       dm->uuid ? dm->uuid : "no UUID", dm->cc ? dm->cc : "?", dm->sm_count);
	print_size(out, "L1         ld.global.ca:", dm->l1_bytes);
	strbuf_addf(out, " at the default carve-out");
	if (dm->l1_bytes_min) {
		print_size(out, ",", dm->l1_bytes_min);
		strbuf_addf(out, " with the most shared memory");
	}
	strbuf_addf(out, "\n");
	strbuf_addf(out, "           %u-byte lines, %u-byte sectors, ", dm->l1_line_bytes, dm->sector_bytes);
	if (dm->l1_sets && dm->l1_ways)
		strbuf_addf(out, "%u sets x %u ways;", dm->l1_sets, dm->l1_ways);
	else
		strbuf_addf(out, "sets and ways not measurable;");
	print_latency(out, " hit", dm->lat_l1_hit);
	strbuf_addf(out, "\n");
	print_size(out, "read-only  ld.global.nc:", dm->readonly_bytes);
	strbuf_addf(out, ";");
	print_latency(out, " hit", dm->lat_readonly_hit);
	strbuf_addf(out, "\n");
	print_size(out, "L2        ", dm->l2_bytes);
	strbuf_addf(out, " (driver);");
	if (dm->l2_bytes_measured)
		print_size(out, " P-chase (ld.global.cg) hits up to", dm->l2_bytes_measured);
	else
		strbuf_addf(out, " P-chase reach not measured");
	strbuf_addf(out, ";");
	print_latency(out, " hit", dm->lat_l2_hit);
	strbuf_addf(out, ";");
	print_latency(out, " DRAM", dm->lat_dram);
	strbuf_addf(out, "\n");
	print_size(out, "persisting", dm->persisting_l2_max_bytes);
	strbuf_addf(out, " set-aside at most;");
	print_size(out, " windows up to", dm->access_policy_max_window_bytes);
	strbuf_addf(out, "\n");
	print_size(out, "shared    ", dm->shared_per_sm);
	strbuf_addf(out, " per SM,");
	print_size(out, "", dm->shared_per_block_optin);
	strbuf_addf(out, " per block (opt-in)\n");
	if (!isnan(secs))
		strbuf_addf(out, "probe took %.1f s\n", secs);
	for (i = 0; (note = device_model_probe_note(dm, i)); i++)
		strbuf_addf(out, "note: %s\n", note);
}

void device_summary_text(struct strbuf *out, const struct device_model *dm)
{
	struct strbuf text = STRBUF_INIT;

	render_text(&text, dm);
	strbuf_add_printable_lines(out, text.buf);
	strbuf_release(&text);
}

void device_summary_json(struct strbuf *out, const struct device_model *dm)
{
	json_t *doc = device_model_to_json(dm);
	char *text = json_to_string(doc);

	strbuf_addstr(out, text);
	strbuf_addch(out, '\n');
	free(text);
	json_decref(doc);
}
