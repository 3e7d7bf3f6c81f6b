#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emitters/rewrite/python_rewrite.h"
#include "emitters/capture_layout.h"
#include "base/xalloc.h"
#include "emitters/report.h"
#include "emitters/report_cost.h"
#include "emitters/report_carveout.h"
#include "emitters/report_l2.h"
#include "emitters/report_output.h"
#include "emitters/rewrite/regcache_patch.h"
#include "emitters/rewrite/source_patch.h"

/*
 * report.html: one self-contained page (inline CSS and SVG, no scripts, no
 * fetches): summary first, then per kernel its traffic reduction graph and
 * its loads with hit-rate bars and source lines, then source hints and the
 * software-cache / L2 / register-cache sections.
 */

#define COLOR_CACHE "#2e7d32"
#define COLOR_BYPASS "#e65100"
#define COLOR_OTHER "#8c959f"
#define COLOR_REUSE "#1f6feb"
#define COLOR_CONFLICT "#d1242f"

static const char css[] =
	"body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;"
	"color:#1f2328;background:#fff}\n"
	"main{max-width:1180px;margin:0 auto;padding:16px 24px 48px}\n"
	"h1{font-size:24px;margin:8px 0}h2{font-size:19px;margin:28px 0 8px;"
	"border-bottom:1px solid #d0d7de;padding-bottom:4px}h3{font-size:15px;margin:16px 0 6px}\n"
	"code,pre{font:12.5px/1.4 ui-monospace,'SFMono-Regular',Menlo,Consolas,monospace}\n"
	"pre{background:#f6f8fa;border:1px solid #d0d7de;border-radius:6px;padding:8px 10px;"
	"overflow-x:auto;margin:4px 0}\n"
	"table{border-collapse:collapse;margin:6px 0}th,td{border:1px solid #d0d7de;"
	"padding:3px 8px;text-align:left;vertical-align:top}th{background:#f6f8fa}\n"
	"td.num{text-align:right;font-variant-numeric:tabular-nums}\n"
	".banner{background:#d1242f;color:#fff;padding:10px 24px;font-weight:600;font-size:16px}\n"
	".summary{background:#f6f8fa;border:1px solid #d0d7de;border-radius:8px;padding:4px 16px 12px}\n"
	".not-run{color:#9a6700}\n"
	".facts li{margin:3px 0}.muted{color:#656d76}\n"
	".tag{display:inline-block;padding:0 6px;border-radius:10px;color:#fff;font-size:12px}\n"
	".tag.bypass{background:" COLOR_BYPASS "}.tag.cache{background:" COLOR_CACHE "}"
	".tag.other{background:" COLOR_OTHER "}\n"
	".bar{display:inline-block;width:90px;height:10px;background:#eaeef2;border-radius:3px;"
	"vertical-align:middle;margin-right:6px;overflow:hidden}"
	".bar span{display:block;height:100%;background:#0969da}\n"
	".kernel-grid{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}\n"
	".graph{border:1px solid #d0d7de;border-radius:8px;padding:4px}\n"
	".legend{font-size:12px;color:#656d76;margin:2px 6px}\n"
	".hint{border-left:4px solid #d0d7de;padding:2px 10px;margin:10px 0}\n"
	".hint.rewritten{border-color:" COLOR_CACHE "}.hint.not{border-color:" COLOR_BYPASS "}\n"
	".add{color:#116329}.del{color:#82071e}\n"
	"footer{margin-top:32px;color:#656d76;font-size:12px}\n"
	"#no-ptx code{word-break:break-all}#no-ptx td:nth-child(3){max-width:360px}"
	"#no-ptx td:last-child{min-width:320px}\n";

/* HTML-escaped, and control characters from the capture shown as \xHH. */
static void esc(struct strbuf *out, const char *s)
{
	struct strbuf printable = STRBUF_INIT;

	strbuf_add_printable(&printable, s ? s : "");
	strbuf_add_html(out, printable.buf);
	strbuf_release(&printable);
}

/* Where a load is (report_load_where). */
static void where_html(struct strbuf *out, const struct report_load *l)
{
	char *w = report_load_where(l);

	esc(out, w);
	free(w);
}

static const char *decision_class(const char *decision)
{
	if (!strcmp(decision, "bypass"))
		return "bypass";
	if (!strcmp(decision, "cache"))
		return "cache";
	return "other";
}

static const char *decision_color(const char *decision)
{
	if (!strcmp(decision, "bypass"))
		return COLOR_BYPASS;
	if (!strcmp(decision, "cache"))
		return COLOR_CACHE;
	return COLOR_OTHER;
}

static void program_text(struct strbuf *out, const struct report_input *in)
{
	struct strbuf cmd = STRBUF_INIT;

	report_program_command(&cmd, in);
	esc(out, cmd.buf);
	strbuf_release(&cmd);
}

static void scalar_html(struct strbuf *out, json_t *v)
{
	if (json_is_string(v)) {
		esc(out, json_string_value(v));
	} else if (json_is_integer(v)) {
		strbuf_addf(out, "%lld", (long long)json_integer_value(v));
	} else if (json_is_real(v)) {
		strbuf_addf(out, "%.6g", json_real_value(v));
	} else if (json_is_boolean(v)) {
		strbuf_addstr(out, json_is_true(v) ? "yes" : "no");
	} else if (json_is_null(v)) {
		strbuf_addstr(out, "&ndash;");
	} else {
		char *s = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
		esc(out, s);
		free(s);
	}
}

static int is_flat_object(json_t *v)
{
	const char *key;
	json_t *m;

	if (!json_is_object(v))
		return 0;
	json_object_foreach(v, key, m)
		if (json_is_object(m) || json_is_array(m))
			return 0;
	return 1;
}

/* A JSON section as nested tables: objects as key/value rows, lists of
 * flat objects as one table with a column per key. */
static void json_html(struct strbuf *out, json_t *v)
{
	const char *key;
	json_t *m;
	size_t i;

	if (json_is_object(v)) {
		strbuf_addstr(out, "<table class=\"kv\">");
		json_object_foreach(v, key, m) {
			strbuf_addstr(out, "<tr><th>");
			esc(out, key);
			strbuf_addstr(out, "</th><td>");
			json_html(out, m);
			strbuf_addstr(out, "</td></tr>");
		}
		strbuf_addstr(out, "</table>");
	} else if (json_is_array(v)) {
		int flat = json_array_size(v) > 0;
		json_array_foreach(v, i, m)
			if (!is_flat_object(m))
				flat = 0;
		if (flat) {
			/* the columns: every member name, in order of first appearance */
			const char **cols = NULL;
			size_t nc = 0, c;
			json_t *x;

			strbuf_addstr(out, "<table><tr>");
			json_array_foreach(v, i, m)
				json_object_foreach(m, key, x) {
					for (c = 0; c < nc && strcmp(cols[c], key); c++)
						;
					if (c < nc)
						continue;
					cols = xrealloc(cols, (nc + 1) * sizeof(*cols));
					cols[nc++] = key;
					strbuf_addstr(out, "<th>");
					esc(out, key);
					strbuf_addstr(out, "</th>");
				}
			strbuf_addstr(out, "</tr>");
			json_array_foreach(v, i, m) {
				strbuf_addstr(out, "<tr>");
				for (c = 0; c < nc; c++) {
					json_t *cell = json_null();
					const char *k2;

					json_object_foreach(m, k2, x)
						if (!strcmp(k2, cols[c]))
							cell = x;
					strbuf_addstr(out, "<td>");
					scalar_html(out, cell);
					strbuf_addstr(out, "</td>");
				}
				strbuf_addstr(out, "</tr>");
			}
			strbuf_addstr(out, "</table>");
			free(cols);
		} else {
			json_array_foreach(v, i, m) {
				if (json_is_object(m) || json_is_array(m)) {
					json_html(out, m);
				} else {
					if (i)
						strbuf_addstr(out, ", ");
					scalar_html(out, m);
				}
			}
		}
	} else {
		scalar_html(out, v);
	}
}

/* The kernel's short label, its full and mangled names in the title. */
static void label_html(struct strbuf *out, const struct report_kernel *k, const char *label)
{
	strbuf_addstr(out, "<code title=\"");
	if (k->demangled) {
		esc(out, k->demangled);
		strbuf_addstr(out, " &#10;");
	}
	esc(out, k->name);
	strbuf_addstr(out, "\">");
	esc(out, label);
	strbuf_addstr(out, "</code>");
}

/* What the profile cost (capture.json "cost"), when the capture says. */
static void cost_li(struct strbuf *out, const struct report_input *in)
{
	char *line = report_cost_line(&in->model);

	if (line) {
		strbuf_addstr(out, "<li>Capture: ");
		esc(out, line);
		strbuf_addstr(out, ".</li>");
	}
	free(line);
}

static void summary(struct strbuf *out, const struct report_input *in)
{
	const struct report_summary *s = &in->summary;
	char *saved;
	size_t i, j;

	saved = report_human_bytes(s->expected_saved_bytes);
	strbuf_addstr(out, "<section class=\"summary\" id=\"summary\"><h2>Summary</h2><ul class=\"facts\">");
	for (i = 0; i < s->nr_not_run; i++) {
		strbuf_addstr(out, "<li class=\"not-run\"><strong>");
		esc(out, s->not_run[i].sentence);
		strbuf_addstr(out, "</strong></li>");
	}
	if (!in->analysis)
		strbuf_addstr(out, "<li><strong>No analysis:</strong> the capture lacks the measurements "
				   "advice needs (see Notes).</li>");
	strbuf_addf(out, "<li>%zu kernel%s measured; the plan changes <strong>%zu load%s</strong> in "
		    "%zu kernel%s.</li>", s->nr_kernels, s->nr_kernels == 1 ? "" : "s", s->nr_changes,
		    s->nr_changes == 1 ? "" : "s", s->nr_kernels_changed,
		    s->nr_kernels_changed == 1 ? "" : "s");
	strbuf_addf(out, "<li>Expected L2 traffic saved: <strong>%s</strong> (traffic reduction graph "
		    "objective, against bypassing every load).</li>", saved);
	free(saved);
	/* every verified win, whatever its kind, the largest first */
	if (s->nr_wins)
		strbuf_addstr(out, "<li>Verified advice, best first:<table id=\"verified-advice\">"
			      "<tr><th>speedup</th><th>kind</th><th>what</th><th>how to apply"
			      "</th></tr>");
	for (i = 0; i < s->nr_wins; i++) {
		strbuf_addf(out, "<tr><td class=\"num\"><strong>%.3gx</strong> (", s->wins[i].speedup);
		esc(out, s->wins[i].measured);
		if (!isnan(s->wins[i].noise))
			strbuf_addf(out, ", baseline spread %.1f%%", 100 * s->wins[i].noise);
		strbuf_addstr(out, ")</td><td>");
		esc(out, s->wins[i].kind);
		strbuf_addstr(out, "</td><td>");
		esc(out, s->wins[i].what);
		strbuf_addstr(out, "</td><td><code>");
		esc(out, s->wins[i].how);
		strbuf_addstr(out, "</code></td></tr>");
	}
	if (s->nr_wins)
		strbuf_addstr(out, "</table></li>");
	strbuf_addstr(out, "<li id=\"verified\">");
	esc(out, s->headline_lead);
	strbuf_addstr(out, ": <strong>");
	esc(out, s->headline_state);
	strbuf_addstr(out, "</strong>");
	esc(out, s->headline_rest);
	if (s->nr_verdicts)
		strbuf_addstr(out, "<ul>");
	for (i = 0; i < s->nr_verdicts; i++) {
		char *label = report_kernel_label(s->verdicts[i].kernel);

		strbuf_addstr(out, "<li>");
		label_html(out, s->verdicts[i].kernel, label);
		strbuf_addstr(out, ": ");
		esc(out, s->verdicts[i].line);
		strbuf_addstr(out, "</li>");
		free(label);
	}
	if (s->nr_verdicts)
		strbuf_addstr(out, "</ul>");
	strbuf_addstr(out, "</li>");
	cost_li(out, in);
	strbuf_addstr(out, "</ul>");
	if (s->nr_changes || s->nr_patch_changes) {
		strbuf_addstr(out, "<h3>What to change</h3><table><tr><th>kernel</th><th>load</th>"
				   "<th>where</th><th>change</th><th>L2 traffic</th>"
				   "<th>source.patch</th></tr>");
		for (i = 0; i < in->nr_kernels; i++) {
			const struct report_kernel *k = &in->kernels[i];
			char *label = report_kernel_label(k);

			for (j = 0; j < k->nr_loads; j++) {
				const struct report_load *l = &k->loads[j];
				size_t e;
				char *sv;

				if (!l->changes)
					continue;
				/* one row for the loads of one expression or library line */
				e = report_load_group_end(k, j);
				sv = e > j ? xstrdup("") : report_load_saving(l);
				strbuf_addstr(out, "<tr><td>");
				label_html(out, k, label);
				if (e > j)
					strbuf_addf(out, "</td><td class=\"num\">%u&ndash;%u</td><td>",
						    l->ordinal, k->loads[e].ordinal);
				else
					strbuf_addf(out, "</td><td class=\"num\">%u</td><td>", l->ordinal);
				where_html(out, l);
				strbuf_addf(out, "</td><td><span class=\"tag %s\">",
					    decision_class(l->decision));
				esc(out, report_action_phrase(l->action));
				strbuf_addstr(out, "</span></td><td>");
				esc(out, sv);
				strbuf_addf(out, "</td><td>%s</td></tr>",
					    l->hint.status == SOURCE_HINT_REWRITTEN ? "rewritten" :
					    report_load_plan_only(l) ? "only through run --plan" :
					    "see hints");
				free(sv);
				j = e;
			}
			free(label);
		}
		strbuf_addstr(out, "</table><h3>How to apply</h3><p>Without rebuilding:</p><pre>"
				   "cacheadvise run --plan ");
		{
			char *plan = capture_layout_file(in->dir, CAPTURE_LAYOUT_PLAN);

			esc(out, plan);
			free(plan);
		}
		strbuf_addstr(out, " -- ");
		program_text(out, in);
		if (s->nr_patch_changes)
			strbuf_addf(out, "</pre><p>In the source (%zu of %zu loads rewritten in "
				    "<code>source.patch</code>):</p><pre>cacheadvise apply ",
				    s->nr_rewritten, s->nr_patch_changes);
		else
			strbuf_addstr(out, "</pre><p>In the source (the source plan changes no load: "
					   "nothing to rewrite):</p><pre>cacheadvise apply ");
		esc(out, in->dir);
		strbuf_addstr(out, "</pre>");
		{
			char *sps = source_patch_summary(in, NULL);

			if (sps) {
				strbuf_addstr(out, "<p>Verified: ");
				esc(out, sps);
				strbuf_addstr(out, "</p>");
			}
			free(sps);
		}
		if (s->nr_rewritten && isnan(s->rebuilt_speedup)) {
			/* not timed as the user will build it: how to have it timed */
			int python = in->model.program.path &&
				     python_program(in->model.program.path);

			strbuf_addstr(out, "<p>Time it as built (source.patch applied in a private "
					   "copy of the tree, timed against the program as it is):"
					   "</p><pre>cacheadvise check ");
			esc(out, in->dir);
			strbuf_addstr(out, python ? " --in-copy -- " :
				      " --build 'YOUR BUILD COMMAND' -- ");
			program_text(out, in);
			strbuf_addstr(out, "</pre>");
		}
		if (s->nr_plan_only) {
			strbuf_addstr(out, "<p>");
			esc(out, s->plan_only_lead);
			strbuf_addstr(out, ":</p><ul>");
			for (i = 0; i < s->nr_plan_only; i++) {
				strbuf_addstr(out, "<li>");
				esc(out, s->plan_only[i]);
				strbuf_addstr(out, "</li>");
			}
			strbuf_addstr(out, "</ul>");
		}
	} else if (s->no_change) {
		strbuf_addstr(out, "<p>");
		esc(out, s->no_change);
		strbuf_addstr(out, "</p>");
	}
	strbuf_addstr(out, "</section>\n");
}

/* Which load ordinal a graph node id names ("ld3" -> 3), else -1. */
static long node_ordinal(const char *id)
{
	char *end;
	long v;

	if (!id || strncmp(id, "ld", 2))
		return -1;
	v = strtol(id + 2, &end, 10);
	return *end || end == id + 2 ? -1 : v;
}

static const struct report_load *load_by_ordinal(const struct report_kernel *k, long ordinal)
{
	size_t i;

	for (i = 0; i < k->nr_loads; i++)
		if ((long)k->loads[i].ordinal == ordinal)
			return &k->loads[i];
	return NULL;
}

/* The load a graph node stands for: by the analysis' "node", else "ld<ordinal>". */
static const struct report_load *load_by_node(const struct report_kernel *k, const char *id)
{
	size_t i;

	for (i = 0; id && i < k->nr_loads; i++)
		if (k->loads[i].node && !strcmp(k->loads[i].node, id))
			return &k->loads[i];
	return load_by_ordinal(k, node_ordinal(id));
}

/*
 * The traffic reduction graph as SVG: nodes on a circle coloured by
 * decision, edges coloured by sign (reuse blue, conflict red), width by
 * |weight|.
 */
static void graph_svg(struct strbuf *out, const struct report_kernel *k)
{
	const struct graph *g = k->analysis ? &k->analysis->g : NULL;
	size_t n = g ? g->n : 0, i, j;
	const double W = 360, H = 360, cx = 180, cy = 175;
	double r = n > 1 ? 135 : 0, maxw = 0;
	double *x, *y;

	if (!n) {
		strbuf_addstr(out, "<p class=\"muted\">No traffic reduction graph (no measured "
				   "patchable loads).</p>");
		return;
	}
	x = xcalloc(n, sizeof(*x));
	y = xcalloc(n, sizeof(*y));
	for (i = 0; i < n; i++) {
		double a = 2 * M_PI * (double)i / (double)n - M_PI / 2;
		x[i] = cx + r * cos(a);
		y[i] = cy + r * sin(a);
	}
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (fabs(graph_edge(g, i, j)) > maxw)
				maxw = fabs(graph_edge(g, i, j));
	strbuf_addf(out, "<div class=\"graph\"><svg xmlns=\"http://www.w3.org/2000/svg\" "
		    "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
		    "aria-label=\"traffic reduction graph of ", W, H, W, H);
	esc(out, k->name);
	strbuf_addstr(out, "\">");
	for (i = 0; i < n; i++) {
		for (j = i + 1; j < n; j++) {
			double w = graph_edge(g, i, j);
			char *wt;

			if (isnan(w) || w == 0)
				continue;
			wt = report_human_bytes(w);
			strbuf_addf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
				    "stroke=\"%s\" stroke-width=\"%.1f\" stroke-opacity=\"0.75\">"
				    "<title>", x[i], y[i], x[j], y[j],
				    w > 0 ? COLOR_REUSE : COLOR_CONFLICT,
				    1 + 7 * fabs(w) / (maxw > 0 ? maxw : 1));
			esc(out, g->nodes[i].id);
			strbuf_addstr(out, " &#8211; ");
			esc(out, g->nodes[j].id);
			strbuf_addf(out, ": %s (%s)</title></line>", wt, w > 0 ? "reuse" : "conflict");
			free(wt);
		}
	}
	for (i = 0; i < n; i++) {
		const char *id = g->nodes[i].id;
		const struct report_load *l = load_by_node(k, id);
		const char *decision = l ? l->decision : "unknown";
		char *wt = report_human_bytes(g->nodes[i].weight);

		strbuf_addf(out, "<g><circle cx=\"%.1f\" cy=\"%.1f\" r=\"16\" fill=\"%s\" "
			    "stroke=\"#1f2328\" stroke-width=\"1\"><title>", x[i], y[i],
			    decision_color(decision));
		esc(out, id);
		strbuf_addf(out, ": W(v) = %s, %s</title></circle>", wt, decision);
		strbuf_addf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"11\" "
			    "fill=\"#fff\" font-family=\"sans-serif\">", x[i], y[i] + 4);
		esc(out, id);
		strbuf_addstr(out, "</text></g>");
		free(wt);
	}
	strbuf_addf(out, "<text x=\"8\" y=\"%.0f\" font-size=\"11\" fill=\"#656d76\" "
		    "font-family=\"sans-serif\">nodes: green cache, orange bypass</text>"
		    "<text x=\"8\" y=\"%.0f\" font-size=\"11\" fill=\"#656d76\" "
		    "font-family=\"sans-serif\">edges: blue reuse, red conflict, width |W(e)|</text>"
		    "</svg></div>", H - 22, H - 8);
	free(x);
	free(y);
}

static void kernel_section(struct strbuf *out, const struct report_input *in,
			   const struct report_kernel *k, size_t index)
{
	const long long *grid = k->model->grid, *block = k->model->block;
	char *label = report_kernel_label(k), *saved = report_human_bytes(k->expected_saved_bytes);
	char *vt = report_kernel_verification_text(in, k);
	size_t i;

	strbuf_addf(out, "<section class=\"kernel\" id=\"kernel-%zu\"><h2>Kernel ", index);
	label_html(out, k, label);
	strbuf_addstr(out, "</h2><p class=\"muted\">");
	if (k->demangled) {
		strbuf_addstr(out, "<code>");
		esc(out, k->demangled);
		strbuf_addstr(out, "</code><br>");
	}
	esc(out, k->name);
	strbuf_addstr(out, ", module ");
	esc(out, k->module);
	if (k->launches >= 0)
		strbuf_addf(out, ", %lld launch%s", k->launches, k->launches == 1 ? "" : "es");
	if (k->model->has_extents == 3)
		strbuf_addf(out, ", grid %lld&times;%lld&times;%lld, block %lld&times;%lld&times;%lld",
			    grid[0], grid[1], grid[2], block[0], block[1], block[2]);
	strbuf_addstr(out, "</p><p>");
	if (k->analysis) {
		char *sites = report_sites_text(k);

		strbuf_addstr(out, "Plan: ");
		esc(out, k->chosen ? k->chosen : "?");
		strbuf_addf(out, "%s, expected L2 traffic saved <strong>%s</strong>. ",
			    k->optimal == 1 ? " (proven optimal)" : k->optimal == 0 ?
			    " (not proven optimal)" : "", saved);
		/* static words and numbers: nothing to escape */
		if (sites)
			strbuf_addf(out, "D%s. ", sites + 1);   /* "decided per ..." */
		free(sites);
	} else {
		strbuf_addstr(out, "Not analysed. ");
	}
	{
		char *ac = report_async_copies_text(k);

		if (ac) {
			esc(out, ac);
			strbuf_addstr(out, ". ");
		}
		free(ac);
	}
	{
		char *l2 = report_l2_priorities_text(in, k);
		char *close = report_close_calls_text(k);

		if (l2) {
			esc(out, l2);
			strbuf_addstr(out, ". ");
		}
		if (close) {
			close[0] = (char)toupper((unsigned char)close[0]);
			esc(out, close);
			strbuf_addstr(out, ". ");
		}
		free(l2);
		free(close);
	}
	if (vt[0])
		vt[0] = (char)toupper((unsigned char)vt[0]);
	esc(out, vt);
	{
		char *ranks = report_ranks_text(k);

		if (ranks) {
			strbuf_addstr(out, ". ");
			esc(out, ranks);
		}
		free(ranks);
	}
	strbuf_addstr(out, ".");
	if (!isnan(k->l1_hit_rate))
		strbuf_addf(out, "<br>L1 hit rate of the kernel with every load as built: "
			    "<strong>%.1f%%</strong>.", 100 * k->l1_hit_rate);
	if (!isnan(k->jit_vs_cubin))
		strbuf_addf(out, "<br>Baseline (JIT from PTX) against the program's cubin: %+.1f%% "
			    "kernel time (both timed unprofiled).", 100 * k->jit_vs_cubin);
	strbuf_addstr(out, "</p><div class=\"kernel-grid\">");
	graph_svg(out, k);
	strbuf_addstr(out, "<table class=\"loads\"><tr><th>load</th><th>decision</th><th>action</th>"
			   "<th title=\"hit_i\">L1 hits enabled</th><th title=\"access_i\">sectors read</th>"
			   "<th>hit rate</th><th>saved</th>"
			   "<th>where</th><th>source</th></tr>");
	for (i = 0; i < k->nr_loads; i++) {
		const struct report_load *l = &k->loads[i];
		char *sv = isnan(l->traffic_saved_bytes) ? xstrdup("&ndash;") :
			   report_human_bytes(l->traffic_saved_bytes);

		strbuf_addf(out, "<tr class=\"%s\"><td class=\"num\">%u</td><td><span class=\"tag %s\">",
			    decision_class(l->decision), l->ordinal, decision_class(l->decision));
		esc(out, l->decision);
		strbuf_addstr(out, "</span></td><td><code>");
		esc(out, l->action ? l->action : "-");
		strbuf_addstr(out, "</code></td><td class=\"num\">");
		if (isnan(l->hit))
			strbuf_addstr(out, "&ndash;");
		else
			strbuf_addf(out, "%.0f", l->hit);
		strbuf_addstr(out, "</td><td class=\"num\">");
		if (isnan(l->access))
			strbuf_addstr(out, "&ndash;");
		else
			strbuf_addf(out, "%.0f", l->access);
		strbuf_addstr(out, "</td><td class=\"num\">");
		if (isnan(l->hit_rate))
			strbuf_addstr(out, "&ndash;");
		else
			strbuf_addf(out, "<span class=\"bar\"><span style=\"width:%.1f%%\"></span></span>"
				    "%.1f%%", fmin(100, fmax(0, 100 * l->hit_rate)), 100 * l->hit_rate);
		strbuf_addf(out, "</td><td class=\"num\">%s</td><td>", sv);
		where_html(out, l);
		strbuf_addstr(out, "</td><td><code>");
		esc(out, l->hint.source_text ? l->hint.source_text : l->hint.ptx_text);
		strbuf_addstr(out, "</code></td></tr>");
		free(sv);
	}
	strbuf_addstr(out, "</table></div><p class=\"muted\">Columns: see the <a href=\"#legend\">"
			   "legend</a>.</p></section>\n");
	free(label);
	free(saved);
	free(vt);
}

/* What the per-load columns mean, once after the kernels. */
static void legend_html(struct strbuf *out)
{
	const struct report_legend_row *r;

	strbuf_addstr(out, "<section id=\"legend\"><h2>Legend</h2><table class=\"legend-table\">"
			   "<tr><th>column</th><th>what it means</th></tr>");
	for (r = report_load_legend; r->column; r++) {
		strbuf_addstr(out, "<tr><th>");
		esc(out, r->column);
		strbuf_addstr(out, "</th><td>");
		esc(out, r->meaning);
		strbuf_addstr(out, "</td></tr>");
	}
	strbuf_addstr(out, "</table></section>\n");
}

/* Modules the program loaded without PTX: nothing to patch, and why. */
static void no_ptx_html(struct strbuf *out, const struct report_input *in)
{
	size_t i, j;

	if (!in->nr_no_ptx)
		return;
	strbuf_addstr(out, "<section id=\"no-ptx\"><h2>Modules without PTX</h2><p class=\"muted\">"
			   "Not patchable: the advice cannot change their loads.</p><table><tr>"
			   "<th>module</th><th>library</th><th>kernels launched</th>"
			   "<th class=\"num\">GPU time</th><th>why, and what would make it "
			   "patchable</th></tr>");
	for (i = 0; i < in->nr_no_ptx; i++) {
		const struct report_module *m = &in->no_ptx[i];

		strbuf_addstr(out, "<tr><td><code>");
		esc(out, m->id ? m->id : "?");
		strbuf_addstr(out, "</code>");
		if (m->origin) {
			strbuf_addstr(out, "<br><span class=\"muted\">");
			esc(out, m->origin);
			strbuf_addstr(out, "</span>");
		}
		strbuf_addstr(out, "</td><td>");
		esc(out, m->library ? m->library : "the program's own code?");
		strbuf_addstr(out, "</td><td>");
		for (j = 0; j < m->nr_kernels; j++) {
			const char *name = m->kernels[j];
			char *label;

			if (j == 5) {
				strbuf_addf(out, "and %zu more", m->nr_kernels - 5);
				break;
			}
			label = report_name_label(name, NULL);
			strbuf_addstr(out, "<code title=\"");
			esc(out, name);
			strbuf_addstr(out, "\">");
			esc(out, label);
			strbuf_addstr(out, "</code><br>");
			free(label);
		}
		if (!m->nr_kernels)
			strbuf_addstr(out, "&ndash;");
		strbuf_addstr(out, "</td><td class=\"num\">");
		if (isnan(m->gpu_time_ns))
			strbuf_addstr(out, "&ndash;");
		else
			strbuf_addf(out, "%.3f ms", m->gpu_time_ns / 1e6);
		strbuf_addstr(out, "</td><td>");
		esc(out, m->reason);
		strbuf_addstr(out, "</td></tr>");
	}
	strbuf_addstr(out, "</table></section>\n");
}

static void hints_section(struct strbuf *out, const struct report_input *in)
{
	size_t i, j, shown = 0;

	strbuf_addstr(out, "<section id=\"hints\"><h2>Source hints</h2>");
	for (i = 0; i < in->nr_kernels; i++) {
		const struct report_kernel *k = &in->kernels[i];
		char *label = report_kernel_label(k);

		for (j = 0; j < k->nr_loads; j++) {
			const struct report_load *l = &k->loads[j];
			const struct source_hint *h = &l->hint;
			size_t e = j;

			if (!l->changes && strcmp(l->decision, "cache") && strcmp(l->decision, "bypass"))
				continue;
			shown++;
			if (l->changes)
				e = report_load_group_end(k, j);
			strbuf_addf(out, "<div class=\"hint %s\"><p><strong>",
				    h->status == SOURCE_HINT_REWRITTEN ? "rewritten" :
				    l->changes ? "not" : "");
			where_html(out, l);
			strbuf_addstr(out, "</strong> &mdash; ");
			label_html(out, k, label);
			if (e > j)
				strbuf_addf(out, " loads %u&ndash;%u (<code>", l->ordinal,
					    k->loads[e].ordinal);
			else
				strbuf_addf(out, " load %u (<code>", l->ordinal);
			esc(out, l->instruction);
			strbuf_addf(out, "</code>): <span class=\"tag %s\">", decision_class(l->decision));
			esc(out, l->decision);
			strbuf_addstr(out, "</span>");
			if (e > j) {
				char *g = report_load_group_phrase(k, j, e);

				strbuf_addstr(out, ", ");
				esc(out, g);
				free(g);
			} else {
				char *hits = report_load_hits_phrase(l), *saving = report_load_saving(l);

				if (*hits) {
					strbuf_addstr(out, ", ");
					esc(out, hits);
				}
				if (*saving) {
					strbuf_addstr(out, ", ");
					esc(out, saving);
				}
				free(hits);
				free(saving);
			}
			strbuf_addstr(out, "<br>");
			esc(out, h->message);
			strbuf_addstr(out, "</p>");
			if (h->source_text || h->ptx_text) {
				strbuf_addstr(out, "<pre>");
				if (h->rewritten)
					strbuf_addstr(out, "<span class=\"del\">- ");
				esc(out, h->source_text ? h->source_text : h->ptx_text);
				if (h->rewritten) {
					strbuf_addstr(out, "</span>\n<span class=\"add\">+ ");
					esc(out, h->rewritten);
					strbuf_addstr(out, "</span>");
				}
				strbuf_addstr(out, "</pre>");
			}
			strbuf_addstr(out, "</div>");
			j = e;
		}
		free(label);
	}
	if (!shown)
		strbuf_addstr(out, "<p class=\"muted\">No decided loads.</p>");
	strbuf_addstr(out, "</section>\n");
}

/* --oracle: per kernel, every plan's measured speedup, fastest first. */
static void oracle_html(struct strbuf *out, const struct report_input *in,
			const struct capture_oracle *oracle)
{
	size_t i;

	for (i = 0; i < oracle->nr_kernels; i++) {
		const struct capture_oracle_kernel *k = &oracle->kernels[i];
		size_t n = k->nr_plans, j, r;
		double top = k->best_speedup;
		int l2;
		unsigned char *used = xcalloc(n + 1, 1);
		char *label = report_label_of(in, k->kernel);

		strbuf_addstr(out, "<p><code>");
		esc(out, label);
		free(label);
		if (isnan(k->ratio))
			strbuf_addf(out, "</code>: %zu plans, %lld rounds each; %s.</p>\n", n,
				    k->rounds < 0 ? 0 : k->rounds, isnan(k->best_speedup) ?
				    "no plan was timed (the kernel ran no timed launch in the "
				    "oracle's runs)" : "the advised plan was not timed");
		else
			strbuf_addf(out, "</code>: %zu plans, %lld rounds each; the advised plan "
				    "reaches <strong>%.1f%%</strong> of the best measured one.</p>\n",
				    n, k->rounds < 0 ? 0 : k->rounds, 100 * k->ratio);
		l2 = k->dimension && !strcmp(k->dimension, "l2");
		strbuf_addf(out, "<table><tr><th>%s</th><th>speedup</th><th></th><th></th></tr>\n",
			    l2 ? "L2 priorities (the rest as advised)" : "loads cached");
		for (r = 0; r < n; r++) {
			const struct capture_oracle_plan *p;
			size_t pick = n;

			for (j = 0; j < n; j++) {
				double x = k->plans[j].speedup;
				if (!used[j] && !isnan(x) && (pick == n || x > k->plans[pick].speedup))
					pick = j;
			}
			if (pick == n)
				break;
			used[pick] = 1;
			p = &k->plans[pick];
			strbuf_addstr(out, "<tr><td>{");
			if (l2) {
				for (j = 0; j < p->nr_l2; j++) {
					strbuf_addf(out, "%sload %u ", j ? ", " : "", p->l2[j].ordinal);
					esc(out, p->l2[j].form);
				}
			} else {
				for (j = 0; j < p->nr_cached; j++)
					strbuf_addf(out, "%s%lld", j ? ", " : "", p->cached[j]);
			}
			strbuf_addf(out, "}</td><td>%.3fx</td><td><span class=\"bar\"><span style=\"width:%.0f%%\">"
				    "</span></span></td><td>%s%s</td></tr>\n", p->speedup,
				    top > 0 ? fmax(0, fmin(100, 100 * p->speedup / top)) : 0,
				    (long long)pick == k->best_plan ? "best " : "",
				    (long long)pick == k->advised_plan ? "advised" : "");
		}
		strbuf_addstr(out, "</table>\n");
		free(used);
	}
}

/* An integer, or a dash when unknown (-1, NAN, or not whole). */
static void int_html(struct strbuf *out, double v)
{
	if (v >= 0 && v == floor(v) && v <= 9007199254740992.0)
		strbuf_addf(out, "%.0f", v);
	else
		strbuf_addstr(out, "&ndash;");
}

/*
 * The automatic software cache as `profile` applied it (src/profile/softcache.c):
 * kept or rejected with its numbers and the PTX to use, or why it was not
 * rewritten.
 */
static void software_cache_verification_html(struct strbuf *out,
					     const struct capture_softcache_verification *ver)
{
	const char *reason = ver->reason;
	int kept = ver->kept == 1;

	strbuf_addstr(out, "<p><strong>Automatic rewrite:</strong> ");
	if (!ver->status || strcmp(ver->status, "verified")) {
		strbuf_addstr(out, "not applied: ");
		esc(out, reason ? reason : "?");
		strbuf_addstr(out, "</p>");
		return;
	}
	strbuf_addf(out, "<span class=\"tag %s\">%s</span> %.2fx median kernel speedup "
		    "(min %.2fx, max %.2fx, noise %.3f, %lld rounds)", kept ? "cache" : "other",
		    kept ? "kept" : "rejected", ver->speedup.median, ver->speedup.min,
		    ver->speedup.max, ver->noise, ver->repeat < 0 ? 0 : ver->repeat);
	if (!kept && reason) {
		strbuf_addstr(out, ": ");
		esc(out, reason);
	}
	strbuf_addstr(out, "; output ");
	esc(out, ver->output_status ? ver->output_status : "?");
	strbuf_addstr(out, ".");
	if (ver->has_rewrite) {
		strbuf_addf(out, "<br>%lld loads through the cache, %lld bytes of shared memory per block; %s <code>",
			    ver->rewrite_loads < 0 ? 0 : ver->rewrite_loads,
			    ver->rewrite_shared_bytes < 0 ? 0 : ver->rewrite_shared_bytes,
			    kept ? "use" : "tried");
		esc(out, ver->rewrite_ptx);
		strbuf_addstr(out, "</code>");
		if (ver->rewrite_note) {
			strbuf_addstr(out, "<br>");
			esc(out, ver->rewrite_note);
		}
	}
	strbuf_addstr(out, "</p>");
}

/* The members of a section as written that keys[] does not name, as key/value rows. */
static void other_rows(struct strbuf *out, json_t *obj, const char *const *keys, size_t nr)
{
	const char *key;
	json_t *m;
	size_t i;

	json_object_foreach(obj, key, m) {
		for (i = 0; i < nr && strcmp(keys[i], key); i++)
			;
		if (i < nr)
			continue;
		strbuf_addstr(out, "<tr><th>");
		esc(out, key);
		strbuf_addstr(out, "</th><td>");
		json_html(out, m);
		strbuf_addstr(out, "</td></tr>");
	}
}

/*
 * The software-cache advice of a kernel (analysis/softcache_rank.h) as the
 * rest of the report: what is cached and why, the occupancy it assumes,
 * and its candidates as a table; members added later as key/value rows.
 */
static void software_cache_html(struct strbuf *out, const struct capture_software_cache *sc)
{
	static const char *const known[] = { "enabled", "cln", "line_bytes", "reason", "occupancy",
					     "candidates", "selected", "verification" };
	static const char *const occ_keys[] = { "threads_per_block", "blocks_per_sm", "limited_by",
						"threads_per_sm", "shared_per_block",
						"shared_used_per_sm", "shared_free_per_sm",
						"cln_per_sm", "cln_per_block", "registers" };
	const struct capture_softcache_occupancy *occ = &sc->occupancy;
	const struct { const char *label; double value; int bytes; } occ_rows[] = {
		{ "threads per block", (double)occ->threads_per_block, 0 },
		{ "blocks per SM", (double)occ->blocks_per_sm, 0 },
		{ "limited by", NAN, 0 },
		{ "threads per SM", (double)occ->threads_per_sm, 0 },
		{ "shared memory per block", occ->shared_per_block, 1 },
		{ "shared memory used per SM", occ->shared_used_per_sm, 1 },
		{ "shared memory free per SM", occ->shared_free_per_sm, 1 },
		{ "CLN the free shared memory allows", (double)occ->cln_per_sm, 0 },
		{ "CLN the block's shared memory allows", (double)occ->cln_per_block, 0 },
		{ "registers", NAN, 0 },
	};
	json_t *occ_json = capture_section_json(occ->source), *rest;
	size_t i;

	strbuf_addf(out, "<p><strong>%s:</strong> ", sc->enabled == 1 ? "Advised" : "Not advised");
	int_html(out, (double)sc->cln);
	strbuf_addstr(out, " lines (CLN) of ");
	int_html(out, (double)sc->line_bytes);
	strbuf_addstr(out, " bytes per thread in shared memory.");
	if (sc->reason && *sc->reason) {
		strbuf_addstr(out, "<br>");
		esc(out, sc->reason);
	}
	strbuf_addstr(out, "</p>");
	if (sc->has_verification)
		software_cache_verification_html(out, &sc->verification);
	if (sc->nr_candidates) {
		strbuf_addstr(out, "<table><tr><th>parameter</th><th>read-only</th>"
				   "<th>simulated hits</th><th>accesses</th><th>simulated hit rate</th>"
				   "<th>selected</th><th>why</th></tr>");
		for (i = 0; i < sc->nr_candidates; i++) {
			const struct capture_softcache_candidate *c = &sc->candidates[i];
			int sel = report_softcache_selected(sc, c);
			double rate = c->hit_rate;

			if (isnan(rate) && !isnan(c->sim_hits) && c->sim_accesses > 0)
				rate = c->sim_hits / c->sim_accesses;
			strbuf_addf(out, "<tr class=\"%s\"><td class=\"num\">",
				    sel == 1 ? "cache" : "other");
			int_html(out, (double)c->param);
			strbuf_addf(out, "</td><td>%s</td><td class=\"num\">",
				    c->read_only < 0 ? "&ndash;" : c->read_only ? "yes" : "no");
			int_html(out, c->sim_hits);
			strbuf_addstr(out, "</td><td class=\"num\">");
			int_html(out, c->sim_accesses);
			strbuf_addstr(out, "</td><td class=\"num\">");
			if (isnan(rate))
				strbuf_addstr(out, "&ndash;");
			else
				strbuf_addf(out, "<span class=\"bar\"><span style=\"width:%.1f%%\">"
					    "</span></span>%.1f%%", fmin(100, fmax(0, 100 * rate)),
					    100 * rate);
			strbuf_addf(out, "</td><td>%s</td><td>", sel < 0 ? "&ndash;" : sel ?
				    "<span class=\"tag cache\">yes</span>" : "no");
			esc(out, c->why);
			strbuf_addstr(out, "</td></tr>");
		}
		strbuf_addstr(out, "</table>");
	}
	if (sc->has_occupancy) {
		strbuf_addstr(out, "<h3>Occupancy assumed</h3><table class=\"kv\">");
		for (i = 0; i < ARRAY_SIZE(occ_rows); i++) {
			/* the two rows of words */
			const char *words = !strcmp(occ_rows[i].label, "limited by") ?
					    occ->limited_by : !strcmp(occ_rows[i].label,
					    "registers") ? occ->registers : NULL;

			if (!words && !(occ_rows[i].value >= 0))
				continue;
			strbuf_addstr(out, "<tr><th>");
			esc(out, occ_rows[i].label);
			strbuf_addstr(out, "</th><td class=\"num\">");
			if (words) {
				esc(out, words);
			} else if (occ_rows[i].bytes) {
				char *b = report_human_bytes(occ_rows[i].value);
				esc(out, b);
				free(b);
			} else {
				strbuf_addf(out, "%.0f", occ_rows[i].value);
			}
			strbuf_addstr(out, "</td></tr>");
		}
		other_rows(out, occ_json, occ_keys, ARRAY_SIZE(occ_keys));
		strbuf_addstr(out, "</table>");
	}
	rest = json_deep_copy(capture_section_json(sc->source));
	for (i = 0; i < ARRAY_SIZE(known); i++)
		json_object_del(rest, known[i]);
	if (json_object_size(rest))
		json_html(out, rest);
	json_decref(rest);
}

static void sections(struct strbuf *out, const struct report_input *in)
{
	size_t i;

	for (i = 0; i < in->nr_sections; i++) {
		const struct report_section *s = &in->sections[i];
		int candidate;
		const char *title = report_section_title(s->key, &candidate), *standing;

		if (!strcmp(s->key, "oracle") && s->kernel)
			continue;   /* the same numbers as the program-wide section */
		if (!strcmp(s->key, "l2") && !s->kernel)
			continue;   /* report_l2_html(), apart from the load advice */
		strbuf_addf(out, "<section class=\"extra\" id=\"%s-%zu\"><h2>", s->key, i);
		esc(out, title);
		if (s->kernel) {
			char *label = report_label_of(in, s->kernel);
			strbuf_addstr(out, " of <code title=\"");
			esc(out, s->kernel);
			strbuf_addstr(out, "\">");
			esc(out, label);
			strbuf_addstr(out, "</code>");
			free(label);
		}
		standing = report_section_standing(s);
		strbuf_addf(out, "</h2><p class=\"muted\">%c%s; from %s.</p>",
			    toupper((unsigned char)standing[0]), standing + 1, s->origin);
		if (s->oracle && s->oracle->has_kernels)
			oracle_html(out, in, s->oracle);
		else if (s->software_cache)
			software_cache_html(out, s->software_cache);
		else
			json_html(out, s->value);
		if (!strcmp(s->key, "register_cache") && s->kernel)
			regcache_patch_html(out, in, s->kernel);
		strbuf_addstr(out, "</section>\n");
	}
}

static int render_html(const struct report_input *in, const struct report_options *opt,
		       struct strbuf *out)
{
	const struct device_model *dev = &in->model.device;
	const char *created = in->model.created;
	size_t i;

	(void)opt;
	strbuf_addstr(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
			   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
			   "<title>cacheadvise report: ");
	program_text(out, in);
	strbuf_addf(out, "</title><style>%s</style></head><body>\n", css);
	if (in->incomplete) {
		strbuf_addstr(out, "<div class=\"banner\" id=\"incomplete\">Incomplete capture (status "
				   "&quot;");
		esc(out, in->status);
		strbuf_addstr(out, "&quot;): the run was interrupted or failed; what follows is "
				   "partial.</div>\n");
	}
	strbuf_addstr(out, "<main><h1>cacheadvise report</h1><p><code>");
	program_text(out, in);
	strbuf_addstr(out, "</code></p><p class=\"muted\">Capture <code>");
	esc(out, in->dir);
	strbuf_addstr(out, "</code> (");
	esc(out, in->status);
	if (created) {
		strbuf_addstr(out, ", created ");
		esc(out, created);
	}
	strbuf_addstr(out, ")");
	if (in->model.has_device) {
		char *l1 = report_human_bytes(dev->l1_bytes ? (double)dev->l1_bytes : NAN);
		char *l2 = report_human_bytes(dev->l2_bytes ? (double)dev->l2_bytes : NAN);
		strbuf_addstr(out, "<br>Device: ");
		esc(out, dev->name);
		strbuf_addf(out, ", L1 %s per SM, L2 %s (device model: ", l1, l2);
		esc(out, device_model_source_name(dev->source));
		strbuf_addstr(out, ")");
		free(l1);
		free(l2);
	}
	strbuf_addstr(out, "</p>\n");
	summary(out, in);
	for (i = 0; i < in->nr_kernels; i++)
		kernel_section(out, in, &in->kernels[i], i);
	if (in->nr_kernels)
		legend_html(out);
	no_ptx_html(out, in);
	hints_section(out, in);
	sections(out, in);
	report_l2_html(out, in);
	report_carveout_html(out, in);
	report_output_html(out, in);
	if (in->nr_notes) {
		strbuf_addstr(out, "<section id=\"notes\"><h2>Notes</h2><ul>");
		for (i = 0; i < in->nr_notes; i++) {
			strbuf_addstr(out, "<li>");
			esc(out, in->notes[i]);
			strbuf_addstr(out, "</li>");
		}
		strbuf_addstr(out, "</ul></section>\n");
	}
	strbuf_addstr(out, "<footer>cacheadvise " CACHEADVISE_VERSION "</footer></main></body></html>\n");
	return 0;
}

const struct report_format report_format_html = { "html", CAPTURE_LAYOUT_REPORT_HTML, render_html };
