#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emitters/capture_layout.h"
#include "base/xalloc.h"
#include "emitters/report.h"
#include "emitters/report_cost.h"
#include "emitters/report_carveout.h"
#include "emitters/report_l2.h"
#include "emitters/rewrite/python_rewrite.h"
#include "emitters/report_output.h"
#include "emitters/rewrite/regcache_patch.h"
#include "emitters/rewrite/source_patch.h"

/* report.txt: summary first, then per kernel, then source hints. */

struct palette {
	const char *bold, *dim, *red, *green, *yellow, *cyan, *reset;
};

static const struct palette plain = { "", "", "", "", "", "", "" };
static const struct palette ansi = { "\033[1m", "\033[2m", "\033[31m", "\033[32m",
				     "\033[33m", "\033[36m", "\033[0m" };

static const char *decision_color(const struct palette *p, const char *decision)
{
	if (!strcmp(decision, "bypass"))
		return p->yellow;
	if (!strcmp(decision, "cache"))
		return p->green;
	return p->dim;
}

static char *num_text(double v)
{
	return isnan(v) ? xstrdup("-") : xasprintf("%.0f", v);
}

static char *pct_text(double v)
{
	return isnan(v) ? xstrdup("-") : xasprintf("%.1f%%", 100 * v);
}


static void json_scalar(struct strbuf *out, json_t *v)
{
	if (json_is_string(v)) {
		strbuf_addstr(out, json_string_value(v));
	} else if (json_is_integer(v)) {
		strbuf_addf(out, "%lld", (long long)json_integer_value(v));
	} else if (json_is_real(v)) {
		strbuf_addf(out, "%.6g", json_real_value(v));
	} else if (json_is_true(v)) {
		strbuf_addstr(out, "yes");
	} else if (json_is_false(v)) {
		strbuf_addstr(out, "no");
	} else if (json_is_null(v)) {
		strbuf_addstr(out, "-");
	} else {
		char *s = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
		strbuf_addstr(out, s ? s : "?");
		free(s);
	}
}

static int is_flat(json_t *v)
{
	const char *key;
	json_t *m;
	size_t i;

	if (json_is_object(v)) {
		json_object_foreach(v, key, m)
			if (json_is_object(m) || json_is_array(m))
				return 0;
		return 1;
	}
	if (json_is_array(v)) {
		json_array_foreach(v, i, m)
			if (json_is_object(m) || json_is_array(m))
				return 0;
		return 1;
	}
	return 1;
}

/* A JSON section as indented "key: value" lines. */
static void json_text(struct strbuf *out, json_t *v, int indent)
{
	const char *key;
	json_t *m;
	size_t i;

	if (json_is_object(v)) {
		json_object_foreach(v, key, m) {
			strbuf_addf(out, "%*s%s:", indent, "", key);
			if (json_is_object(m) || (json_is_array(m) && !is_flat(m))) {
				strbuf_addch(out, '\n');
				json_text(out, m, indent + 2);
			} else if (json_is_array(m)) {
				json_t *e;
				json_array_foreach(m, i, e) {
					strbuf_addstr(out, i ? ", " : " ");
					json_scalar(out, e);
				}
				strbuf_addch(out, '\n');
			} else {
				strbuf_addch(out, ' ');
				json_scalar(out, m);
				strbuf_addch(out, '\n');
			}
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, m) {
			if (json_is_object(m) && is_flat(m)) {
				int first = 1;
				json_t *f;
				strbuf_addf(out, "%*s- ", indent, "");
				json_object_foreach(m, key, f) {
					strbuf_addf(out, "%s%s=", first ? "" : ", ", key);
					json_scalar(out, f);
					first = 0;
				}
				strbuf_addch(out, '\n');
			} else if (json_is_object(m) || json_is_array(m)) {
				strbuf_addf(out, "%*s-\n", indent, "");
				json_text(out, m, indent + 2);
			} else {
				strbuf_addf(out, "%*s- ", indent, "");
				json_scalar(out, m);
				strbuf_addch(out, '\n');
			}
		}
	} else {
		strbuf_addf(out, "%*s", indent, "");
		json_scalar(out, v);
		strbuf_addch(out, '\n');
	}
}

static void program_line(struct strbuf *out, const struct report_input *in)
{
	report_program_command(out, in);
}

static void header(struct strbuf *out, const struct report_input *in, const struct palette *p)
{
	const struct device_model *dev = &in->model.device;
	const char *created = in->model.created;
	const char *model = in->model.options.model;

	if (in->incomplete)
		strbuf_addf(out, "%s%s*** INCOMPLETE CAPTURE (status \"%s\"): the run was interrupted "
			    "or failed; what follows is partial ***%s\n\n", p->bold, p->red,
			    in->status, p->reset);
	strbuf_addf(out, "%scacheadvise report:%s ", p->bold, p->reset);
	program_line(out, in);
	strbuf_addf(out, "\n  capture  %s (%s%s%s)\n", in->dir, in->status,
		    created ? ", created " : "", created ? created : "");
	if (in->model.has_device) {
		const char *name = dev->name, *cc = dev->cc;
		char *l2 = report_human_bytes(dev->l2_bytes ? (double)dev->l2_bytes : NAN);
		char *l1 = report_human_bytes(dev->l1_bytes ? (double)dev->l1_bytes : NAN);

		strbuf_addf(out, "  device   %s%s%s, L1 %s per SM, L2 %s (device model: %s)\n",
			    name ? name : "unknown GPU", cc ? ", cc " : "", cc ? cc : "", l1, l2,
			    device_model_source_name(dev->source));
		free(l1);
		free(l2);
	}
	strbuf_addf(out, "  model    %s\n", model ? model : "sector");
}

/* What the profile cost (capture.json "cost"), when the capture says. */
static void cost_line(struct strbuf *out, const struct report_input *in)
{
	char *line = report_cost_line(&in->model);

	if (line)
		strbuf_addf(out, "  Capture: %s.\n", line);
	free(line);
}


static void summary(struct strbuf *out, const struct report_input *in, const struct palette *p)
{
	const struct report_summary *s = &in->summary;
	char *saved;
	size_t i, j;

	saved = report_human_bytes(s->expected_saved_bytes);
	strbuf_addf(out, "\n%sSUMMARY%s\n", p->bold, p->reset);
	for (i = 0; i < s->nr_not_run; i++)
		strbuf_addf(out, "  %s%s%s\n", p->yellow, s->not_run[i].sentence, p->reset);
	if (!in->analysis)
		strbuf_addstr(out, "  No analysis: the capture lacks the measurements advice needs "
				   "(see NOTES).\n");
	strbuf_addf(out, "  %zu kernel%s measured; the plan changes %zu load%s in %zu kernel%s.\n",
		    s->nr_kernels, s->nr_kernels == 1 ? "" : "s", s->nr_changes,
		    s->nr_changes == 1 ? "" : "s", s->nr_kernels_changed,
		    s->nr_kernels_changed == 1 ? "" : "s");
	strbuf_addf(out, "  Expected L2 traffic saved: %s (traffic reduction graph objective, "
			 "against bypassing every load).\n", saved);
	free(saved);
	/* every verified win, whatever its kind, the largest first */
	if (s->nr_wins)
		strbuf_addf(out, "  %sVerified advice, best first:%s\n", p->bold, p->reset);
	for (i = 0; i < s->nr_wins; i++) {
		const struct report_win *w = &s->wins[i];

		strbuf_addf(out, "    %zu. %s%.3gx%s %-14s %s (%s", i + 1, p->green, w->speedup,
			    p->reset, w->kind, w->what, w->measured);
		if (!isnan(w->noise))
			strbuf_addf(out, ", baseline spread %.1f%%", 100 * w->noise);
		strbuf_addf(out, ")\n         apply: %s\n", w->how);
	}
	strbuf_addf(out, "  %s: %s%s%s%s\n", s->headline_lead,
		    s->plan == REPORT_PLAN_VERIFIED ? "" : s->kept_any ? p->green : p->yellow,
		    s->headline_state, p->reset, s->headline_rest);
	for (i = 0; i < s->nr_verdicts; i++) {
		const struct report_verdict *v = &s->verdicts[i];
		char *label = report_kernel_label(v->kernel);

		strbuf_addf(out, "    %-16s %s%s%s\n", label,
			    !v->kept ? p->red : v->changes ? p->green : p->yellow, v->line, p->reset);
		free(label);
	}
	cost_line(out, in);
	if (s->nr_changes || s->nr_patch_changes) {
		strbuf_addstr(out, "\n  What to change:\n");
		for (i = 0; i < in->nr_kernels; i++) {
			const struct report_kernel *k = &in->kernels[i];
			char *label = report_kernel_label(k);

			for (j = 0; j < k->nr_loads; j++) {
				const struct report_load *l = &k->loads[j];
				char *where, *sv, ords[64];
				size_t e = j;

				if (!l->changes)
					continue;
				/* the loads one source expression compiled to (a Triton tl.load
				 * is several PTX loads): one line when they get one action */
				e = report_load_group_end(k, j);
				if (e > j)
					snprintf(ords, sizeof(ords), "loads %u-%u", l->ordinal,
						 k->loads[e].ordinal);
				else
					snprintf(ords, sizeof(ords), "load %-3u", l->ordinal);
				where = report_load_where(l);
				sv = e > j ? xstrdup("") : report_load_saving(l);
				strbuf_addf(out, "    %-16s %-8s %-22s %s%s%s%s%s%s\n", label, ords, where,
					    decision_color(p, l->decision),
					    report_action_phrase(l->action), p->reset, *sv ? ", " : "", sv,
					    l->hint.status == SOURCE_HINT_REWRITTEN ?
					    "  [in source.patch]" : report_load_plan_only(l) ?
					    "  [only through run --plan]" : "");
				free(where);
				free(sv);
				j = e;
			}
			free(label);
		}
		strbuf_addstr(out, "\n  How to apply:\n    without rebuilding:  cacheadvise run --plan ");
		report_shell_path(out, in->dir, CAPTURE_LAYOUT_PLAN);
		strbuf_addstr(out, " -- ");
		program_line(out, in);
		if (in->plan_from_analysis) {
			strbuf_addstr(out, "\n                         (plan.json is missing: write it with "
				      "cacheadvise report ");
			report_shell_path(out, in->dir, NULL);
			strbuf_addstr(out, " --all)");
		}
		strbuf_addstr(out, "\n    in the source:       cacheadvise apply ");
		report_shell_path(out, in->dir, NULL);
		if (s->nr_patch_changes)
			strbuf_addf(out, "   (%zu of %zu loads rewritten in source.patch; see SOURCE "
				    "HINTS)\n", s->nr_rewritten, s->nr_patch_changes);
		else
			strbuf_addstr(out, "   (the source plan changes no load: nothing to "
				      "rewrite)\n");
		{
			char *sps = source_patch_summary(in, NULL);

			if (sps)
				strbuf_addf(out, "    verified:            %s\n", sps);
			free(sps);
		}
		if (s->nr_rewritten && isnan(s->rebuilt_speedup)) {
			/* not timed as the user will build it: how to have it timed */
			int python = in->model.program.path &&
				     python_program(in->model.program.path);

			strbuf_addstr(out, "    time it as built:    cacheadvise check ");
			report_shell_path(out, in->dir, NULL);
			strbuf_addstr(out, python ? " --in-copy -- " : " --build 'YOUR BUILD COMMAND' -- ");
			program_line(out, in);
			strbuf_addstr(out, python ?
				      "\n                         (source.patch applied in a private copy "
				      "of the tree, its .py compiled afresh, timed against the program as "
				      "it is)\n" :
				      "\n                         (source.patch applied and built in a "
				      "private copy of the tree, timed against the program as it is)\n");
		}
		if (s->nr_plan_only)
			strbuf_addf(out, "    %s:\n", s->plan_only_lead);
		for (i = 0; i < s->nr_plan_only; i++)
			strbuf_addf(out, "      %s\n", s->plan_only[i]);
	} else if (s->no_change) {
		strbuf_addf(out, "  %s\n", s->no_change);
	}
}

static void kernel_section(struct strbuf *out, const struct report_input *in,
			   const struct report_kernel *k, const struct palette *p)
{
	const long long *grid = k->model->grid, *block = k->model->block;
	char *label = report_kernel_label(k), *saved = report_human_bytes(k->expected_saved_bytes);
	char *vt = report_kernel_verification_text(in, k);
	size_t i;

	strbuf_addf(out, "\n%sKERNEL %s%s", p->bold, label, p->reset);
	if (k->demangled)
		strbuf_addf(out, "  %s%s%s", p->dim, k->demangled, p->reset);
	strbuf_addf(out, "\n  %s, module %s", k->name, k->module);
	if (k->launches >= 0)
		strbuf_addf(out, ", %lld launch%s", k->launches, k->launches == 1 ? "" : "es");
	if (k->model->has_extents == 3)
		strbuf_addf(out, ", grid %lldx%lldx%lld, block %lldx%lldx%lld", grid[0], grid[1],
			    grid[2], block[0], block[1], block[2]);
	strbuf_addch(out, '\n');
	if (k->generated_from) {
		const char *l = k->provenance, *nl;

		strbuf_addf(out, "  generated by torch.compile (Inductor): %s\n", k->generated_from);
		for (; l && *l; l = nl ? nl + 1 : l + strlen(l)) {
			nl = strchr(l, '\n');
			strbuf_addf(out, "    %.*s\n", (int)(nl ? nl - l : (long)strlen(l)), l);
		}
		if (!k->provenance)
			strbuf_addstr(out, "    (Inductor's output code naming it was not found)\n");
	}
	{
		char *ac = report_async_copies_text(k);

		if (ac)
			strbuf_addf(out, "  %s\n", ac);
		free(ac);
	}
	if (k->analysis) {
		char *sites = report_sites_text(k);

		strbuf_addf(out, "  plan: %s%s, expected L2 traffic saved %s\n",
			    k->chosen ? k->chosen : "?", k->optimal == 1 ? " (proven optimal)" :
			    k->optimal == 0 ? " (not proven optimal)" : "", saved);
		if (sites)
			strbuf_addf(out, "  %s\n", sites);
		free(sites);
	} else
		strbuf_addstr(out, "  not analysed\n");
	{
		char *l2 = report_l2_priorities_text(in, k);
		char *close = report_close_calls_text(k);

		if (l2)
			strbuf_addf(out, "  %s\n", l2);
		if (close)
			strbuf_addf(out, "  %s\n", close);
		free(l2);
		free(close);
	}
	strbuf_addf(out, "  %s\n", vt);
	{
		char *ranks = report_ranks_text(k);

		if (ranks)
			strbuf_addf(out, "  %s\n", ranks);
		free(ranks);
	}
	if (!isnan(k->l1_hit_rate))
		strbuf_addf(out, "  L1 hit rate of the kernel with every load as built: %.1f%%\n",
			    100 * k->l1_hit_rate);
	if (!isnan(k->jit_vs_cubin))
		strbuf_addf(out, "  baseline (JIT from PTX) vs the program's cubin: %+.1f%% kernel time "
			    "(both timed unprofiled)\n", 100 * k->jit_vs_cubin);
	strbuf_addf(out, "  %s%4s  %-13s %-16s %15s %12s %8s %11s  %s%s\n", p->dim, "load", "decision",
		    "action", "L1 hits enabled", "sectors read", "hit rate", "saved", "where", p->reset);
	for (i = 0; i < k->nr_loads; i++) {
		const struct report_load *l = &k->loads[i];
		char *hit = num_text(l->hit), *acc = num_text(l->access), *rate = pct_text(l->hit_rate);
		char *sv = isnan(l->traffic_saved_bytes) ? xstrdup("-") :
			   report_human_bytes(l->traffic_saved_bytes);
		char *where = report_load_where(l);

		strbuf_addf(out, "  %4u  %s%-13s%s %-16s %15s %12s %8s %11s  %s\n", l->ordinal,
			    decision_color(p, l->decision), l->decision, p->reset,
			    l->action ? l->action : "-", hit, acc, rate, sv, where);
		free(hit);
		free(acc);
		free(rate);
		free(sv);
		free(where);
	}
	free(label);
	free(saved);
	free(vt);
}

/* What the per-load columns mean, once after the kernels. */
static void legend(struct strbuf *out, const struct palette *p)
{
	const struct report_legend_row *r;

	strbuf_addf(out, "\n%sLEGEND%s (the load tables)\n", p->bold, p->reset);
	for (r = report_load_legend; r->column; r++) {
		const char *m = r->meaning;
		size_t col = 0;

		/* The meaning wrapped at word boundaries beside the column name. */
		strbuf_addf(out, "  %-16s", r->column);
		while (*m) {
			size_t n = strcspn(m, " ");

			if (col && col + 1 + n > 76) {
				strbuf_addf(out, "\n  %-16s", "");
				col = 0;
			}
			strbuf_addf(out, " %.*s", (int)n, m);
			col += n + 1;
			m += n;
			m += strspn(m, " ");
		}
		strbuf_addch(out, '\n');
	}
}

/* Modules the program loaded without PTX: nothing to patch, and why. */
static void no_ptx_section(struct strbuf *out, const struct report_input *in,
			   const struct palette *p)
{
	size_t i, j;

	if (!in->nr_no_ptx)
		return;
	strbuf_addf(out, "\n%sMODULES WITHOUT PTX%s (not patchable: the advice cannot change their "
		    "loads)\n", p->bold, p->reset);
	for (i = 0; i < in->nr_no_ptx; i++) {
		const struct report_module *m = &in->no_ptx[i];

		strbuf_addf(out, "  %s%s%s", p->bold, m->id ? m->id : "?", p->reset);
		if (m->origin)
			strbuf_addf(out, " (%s)", m->origin);
		if (m->library)
			strbuf_addf(out, ", %s", m->library);
		if (m->nr_kernels)
			strbuf_addf(out, ", %zu kernel%s launched", m->nr_kernels,
				    m->nr_kernels == 1 ? "" : "s");
		if (!isnan(m->gpu_time_ns))
			strbuf_addf(out, ", %.3f ms GPU time", m->gpu_time_ns / 1e6);
		strbuf_addf(out, "\n    %s\n", m->reason);
		for (j = 0; j < m->nr_kernels; j++) {
			const char *name = m->kernels[j];
			char *label;

			if (j == 5) {
				strbuf_addf(out, "    ... and %zu more\n", m->nr_kernels - 5);
				break;
			}
			label = report_name_label(name, NULL);
			strbuf_addf(out, "    - %s", label);
			if (strcmp(label, name))
				strbuf_addf(out, "  %s%s%s", p->dim, name, p->reset);
			strbuf_addch(out, '\n');
			free(label);
		}
	}
}

static void hints_section(struct strbuf *out, const struct report_input *in,
			  const struct palette *p)
{
	size_t i, j, shown = 0;

	strbuf_addf(out, "\n%sSOURCE HINTS%s\n", p->bold, p->reset);
	for (i = 0; i < in->nr_kernels; i++) {
		const struct report_kernel *k = &in->kernels[i];
		char *label = report_kernel_label(k);

		for (j = 0; j < k->nr_loads; j++) {
			const struct report_load *l = &k->loads[j];
			const struct source_hint *h = &l->hint;
			char *where = report_load_where(l), *hits, *saving;
			size_t e = j;

			if (!l->changes && strcmp(l->decision, "cache") && strcmp(l->decision, "bypass")) {
				free(where);
				continue;
			}
			shown++;
			/* a tl.load's PTX loads, one hint (as in "What to change") */
			if (l->changes)
				e = report_load_group_end(k, j);
			if (e > j) {
				hits = report_load_group_phrase(k, j, e);
				saving = xstrdup("");
				strbuf_addf(out, "  %s%s%s  %s loads %u-%u (%s): %s%s%s, %s\n", p->cyan,
					    where, p->reset, label, l->ordinal, k->loads[e].ordinal,
					    l->instruction, decision_color(p, l->decision), l->decision,
					    p->reset, hits);
			} else {
				hits = report_load_hits_phrase(l);
				saving = report_load_saving(l);
				strbuf_addf(out, "  %s%s%s  %s load %u (%s): %s%s%s%s%s%s%s\n", p->cyan,
					    where, p->reset, label, l->ordinal, l->instruction,
					    decision_color(p, l->decision), l->decision, p->reset,
					    *hits ? ", " : "", hits, *saving ? ", " : "", saving);
			}
			j = e;
			strbuf_addf(out, "    %s\n", h->message ? h->message : "");
			free(hits);
			free(saving);
			if (h->source_text)
				strbuf_addf(out, "      %s\n", h->source_text);
			else if (h->ptx_text)
				strbuf_addf(out, "      %s (%s:%u)\n", h->ptx_text,
					    h->ptx_path ? h->ptx_path : "PTX", l->ptx_line);
			if (h->rewritten)
				strbuf_addf(out, "    %s+ %s%s\n", p->green, h->rewritten, p->reset);
			free(where);
		}
		free(label);
	}
	if (!shown)
		strbuf_addstr(out, "  (no decided loads)\n");
}

static void plan_bits(struct strbuf *out, const struct capture_oracle_kernel *k, long long plan)
{
	const struct capture_oracle_plan *p = plan >= 0 && (size_t)plan < k->nr_plans ?
					      &k->plans[plan] : NULL;
	size_t i;

	if (k->dimension && !strcmp(k->dimension, "l2")) {
		/* an L2 plan: each load given a form; the rest as advised */
		strbuf_addch(out, '{');
		for (i = 0; p && i < p->nr_l2; i++)
			strbuf_addf(out, "%sload %u %s", i ? ", " : "", p->l2[i].ordinal,
				    p->l2[i].form);
		strbuf_addstr(out, p && p->nr_l2 ? "}" : "as advised in L1}");
		return;
	}
	strbuf_addch(out, '{');
	for (i = 0; p && i < p->nr_cached; i++)
		strbuf_addf(out, "%s%lld", i ? ", " : "", p->cached[i]);
	strbuf_addch(out, '}');
}

/* --oracle: one line a kernel, then its five fastest plans. */
static void oracle_text(struct strbuf *out, const struct report_input *in,
			const struct capture_oracle *oracle)
{
	size_t i;

	for (i = 0; i < oracle->nr_kernels; i++) {
		const struct capture_oracle_kernel *k = &oracle->kernels[i];
		size_t n = k->nr_plans, shown, j;
		unsigned char *used = xcalloc(n + 1, 1);
		char *label = report_label_of(in, k->kernel);

		strbuf_addf(out, "  %s: %lld loads, %lld %splans x %lld rounds\n", label,
			    k->loads < 0 ? 0 : k->loads, (long long)n,
			    k->dimension && !strcmp(k->dimension, "l2") ? "L2 priority " : "",
			    k->rounds < 0 ? 0 : k->rounds);
		free(label);
		strbuf_addstr(out, "    advised plan ");
		plan_bits(out, k, k->advised_plan);
		if (isnan(k->best_speedup)) {
			strbuf_addstr(out, ": no plan was timed (the kernel ran no timed launch "
				      "in the oracle's runs)\n");
			free(used);
			continue;
		}
		if (isnan(k->advised_speedup))
			strbuf_addstr(out, " not timed, best plan ");
		else
			strbuf_addf(out, " %.3fx, best plan ", k->advised_speedup);
		plan_bits(out, k, k->best_plan);
		if (isnan(k->ratio))
			strbuf_addf(out, " %.3fx\n", k->best_speedup);
		else
			strbuf_addf(out, " %.3fx: the advice reaches %.1f%% of the best\n",
				    k->best_speedup, 100 * k->ratio);
		for (shown = 0; shown < 5 && shown < n; shown++) {
			size_t best = n;
			for (j = 0; j < n; j++)
				if (!used[j] && !isnan(k->plans[j].speedup) &&
				    (best == n || k->plans[j].speedup > k->plans[best].speedup))
					best = j;
			if (best == n)
				break;
			used[best] = 1;
			strbuf_addstr(out, k->dimension && !strcmp(k->dimension, "l2") ?
				      "      L2 " : "      cached ");
			plan_bits(out, k, (long long)best);
			strbuf_addf(out, ": %.3fx\n", k->plans[best].speedup);
		}
		free(used);
	}
}

/* Members of obj not in known[] as "key: value" lines (fields added later). */
static void other_members(struct strbuf *out, json_t *obj, const char *const *known, int indent)
{
	json_t *rest = json_deep_copy(obj);
	size_t i;

	for (i = 0; known[i]; i++)
		json_object_del(rest, known[i]);
	if (json_object_size(rest))
		json_text(out, rest, indent);
	json_decref(rest);
}

/* An integer, or '?' when unknown (-1). */
static void int_or_unknown(struct strbuf *out, long long v)
{
	if (v >= 0)
		strbuf_addf(out, "%lld", v);
	else
		strbuf_addch(out, '?');
}

/*
 * The automatic software cache as `profile` applied it (src/profile/softcache.c):
 * kept or rejected with its numbers and the PTX to use, or why it was not
 * rewritten.
 */
static void software_cache_verification_text(struct strbuf *out,
					     const struct capture_softcache_verification *ver)
{
	const char *reason = ver->reason;
	size_t i;

	if (!ver->status || strcmp(ver->status, "verified")) {
		strbuf_addf(out, "  automatic rewrite: not applied: %s\n", reason ? reason : "?");
		return;
	}
	strbuf_addf(out, "  automatic rewrite: %s, %.2fx median kernel speedup (min %.2fx, max %.2fx, noise %.3f, %lld rounds)",
		    ver->kept == 1 ? "KEPT" : "rejected", ver->speedup.median, ver->speedup.min,
		    ver->speedup.max, ver->noise, ver->repeat < 0 ? 0 : ver->repeat);
	if (ver->kept != 1 && reason)
		strbuf_addf(out, ": %s", reason);
	strbuf_addf(out, "\n  output: %s\n", ver->output_status ? ver->output_status : "?");
	if (ver->has_rewrite) {
		strbuf_addstr(out, "  rewrite: parameters");
		for (i = 0; i < ver->nr_rewrite_params; i++)
			strbuf_addf(out, "%s %lld", i ? "," : "", ver->rewrite_params[i]);
		strbuf_addf(out, "; %lld loads through the cache, %lld bytes of shared memory per block\n",
			    ver->rewrite_loads < 0 ? 0 : ver->rewrite_loads,
			    ver->rewrite_shared_bytes < 0 ? 0 : ver->rewrite_shared_bytes);
		if (ver->kept == 1)
			strbuf_addf(out, "  use: %s (the module's PTX with the software cache)\n",
				    ver->rewrite_ptx ? ver->rewrite_ptx : "?");
		else
			strbuf_addf(out, "  tried: %s\n", ver->rewrite_ptx ? ver->rewrite_ptx : "?");
		if (ver->rewrite_note)
			strbuf_addf(out, "  note: %s\n", ver->rewrite_note);
	}
}

/*
 * The software-cache advice of a kernel (analysis/softcache_rank.h): what
 * is cached and why, the occupancy it assumes, and its candidates as a
 * table.
 */
static void software_cache_text(struct strbuf *out, const struct capture_software_cache *sc)
{
	static const char *const known[] = { "enabled", "cln", "line_bytes", "reason", "occupancy",
					     "candidates", "selected", "verification", NULL };
	static const char *const known_occ[] = { "threads_per_block", "blocks_per_sm", "limited_by",
						 "threads_per_sm", "shared_per_block",
						 "shared_used_per_sm", "shared_free_per_sm",
						 "cln_per_sm", "cln_per_block", "registers", NULL };
	const struct capture_softcache_occupancy *occ = &sc->occupancy;
	const char *limited = occ->limited_by;
	size_t i;

	strbuf_addf(out, "  %s: ", sc->enabled == 1 ? "advised" : "not advised");
	int_or_unknown(out, sc->cln);
	strbuf_addstr(out, " lines (CLN) of ");
	int_or_unknown(out, sc->line_bytes);
	strbuf_addstr(out, " bytes per thread in shared memory\n");
	if (sc->reason && *sc->reason)
		strbuf_addf(out, "  why: %s\n", sc->reason);
	if (sc->has_occupancy) {
		char *per_block = report_human_bytes(occ->shared_per_block);
		char *free_sm = report_human_bytes(occ->shared_free_per_sm);

		strbuf_addstr(out, "  occupancy: ");
		int_or_unknown(out, occ->threads_per_block);
		strbuf_addstr(out, " threads per block, ");
		int_or_unknown(out, occ->blocks_per_sm);
		strbuf_addf(out, " blocks per SM%s%s%s, ", limited ? " (limited by " : "",
			    limited ? limited : "", limited ? ")" : "");
		int_or_unknown(out, occ->threads_per_sm);
		strbuf_addf(out, " threads per SM; shared memory %s per block, %s free per SM\n",
			    per_block, free_sm);
		free(per_block);
		free(free_sm);
		other_members(out, capture_section_json(occ->source), known_occ, 4);
	}
	if (sc->nr_candidates) {
		strbuf_addf(out, "  %5s  %-9s %14s %14s %9s  %-8s  %s\n", "param", "read-only",
			    "simulated hits", "accesses", "hit rate", "selected", "why");
		for (i = 0; i < sc->nr_candidates; i++) {
			const struct capture_softcache_candidate *c = &sc->candidates[i];
			int sel = report_softcache_selected(sc, c);
			double rate = c->hit_rate;
			char *h = num_text(c->sim_hits), *a = num_text(c->sim_accesses), *r;
			struct strbuf p = STRBUF_INIT;

			if (isnan(rate) && !isnan(c->sim_hits) && c->sim_accesses > 0)
				rate = c->sim_hits / c->sim_accesses;
			r = pct_text(rate);
			int_or_unknown(&p, c->param);
			strbuf_addf(out, "  %5s", p.buf);
			strbuf_release(&p);
			strbuf_addf(out, "  %-9s %14s %14s %9s  %-8s  %s\n",
				    c->read_only < 0 ? "-" : c->read_only ? "yes" : "no", h, a, r,
				    sel < 0 ? "-" : sel ? "yes" : "no", c->why ? c->why : "");
			free(h);
			free(a);
			free(r);
		}
	}
	if (sc->has_verification)
		software_cache_verification_text(out, &sc->verification);
	other_members(out, capture_section_json(sc->source), known, 2);
}

static void sections(struct strbuf *out, const struct report_input *in, const struct palette *p)
{
	size_t i;

	for (i = 0; i < in->nr_sections; i++) {
		const struct report_section *s = &in->sections[i];
		int candidate;
		const char *title = report_section_title(s->key, &candidate);
		size_t c;

		char *label;

		if (!strcmp(s->key, "oracle") && s->kernel)
			continue;   /* the same numbers as the program-wide section */
		if (!strcmp(s->key, "l2") && !s->kernel)
			continue;   /* report_l2_text(), apart from the load advice */
		label = s->kernel ? report_label_of(in, s->kernel) : NULL;
		strbuf_addf(out, "\n%s", p->bold);
		for (c = 0; title[c]; c++)
			strbuf_addch(out, toupper((unsigned char)title[c]));
		strbuf_addf(out, "%s%s%s  (%s, from %s)\n", p->reset, label ? " of " : "",
			    label ? label : "",
			    report_section_standing(s), s->origin);
		free(label);
		if (s->oracle && s->oracle->has_kernels)
			oracle_text(out, in, s->oracle);
		else if (s->software_cache)
			software_cache_text(out, s->software_cache);
		else
			json_text(out, s->value, 2);
		if (!strcmp(s->key, "register_cache") && s->kernel)
			regcache_patch_text(out, in, s->kernel);
	}
}

/* The palette's own escape sequence that starts at s, its length; 0 for none. */
static size_t palette_code_at(const struct palette *p, const char *s)
{
	const char *codes[] = { p->bold, p->dim, p->red, p->green, p->yellow, p->cyan, p->reset };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(codes); i++)
		if (*codes[i] && !strncmp(s, codes[i], strlen(codes[i])))
			return strlen(codes[i]);
	return 0;
}

/*
 * text, as a terminal may show it: the capture's strings (a device name, a
 * program argument, a file name) reach the report as recorded, so every
 * control character but newline and tab is written as \xHH, and an escape
 * sequence only where it is one of the palette's own.
 */
static void add_terminal_safe(struct strbuf *out, const char *text, const struct palette *p)
{
	const char *s = text, *esc;

	/* between the palette's own codes, the tool's one escaper */
	while ((esc = strchr(s, 0x1b))) {
		size_t n = palette_code_at(p, esc);

		strbuf_add_printable_mem(out, s, (size_t)(esc - s) + !n, 1);
		if (n)
			strbuf_add(out, esc, n);
		s = esc + (n ? n : 1);
	}
	strbuf_add_printable_lines(out, s);
}

static int render_text(const struct report_input *in, const struct report_options *opt,
		       struct strbuf *final)
{
	const struct palette *p = opt && opt->color ? &ansi : &plain;
	struct strbuf text = STRBUF_INIT, *out = &text;
	size_t i;

	header(out, in, p);
	summary(out, in, p);
	for (i = 0; i < in->nr_kernels; i++)
		kernel_section(out, in, &in->kernels[i], p);
	if (in->nr_kernels)
		legend(out, p);
	no_ptx_section(out, in, p);
	hints_section(out, in, p);
	sections(out, in, p);
	report_l2_text(out, in, p->bold, p->reset);
	report_carveout_text(out, in, p->bold, p->reset);
	report_output_text(out, in, p->bold, p->reset);
	if (in->nr_notes) {
		strbuf_addf(out, "\n%sNOTES%s\n", p->bold, p->reset);
		for (i = 0; i < in->nr_notes; i++)
			strbuf_addf(out, "  - %s\n", in->notes[i]);
	}
	add_terminal_safe(final, text.buf, p);
	strbuf_release(&text);
	return 0;
}

const struct report_format report_format_text = { "text", CAPTURE_LAYOUT_REPORT_TEXT, render_text };
