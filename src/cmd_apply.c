#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/xalloc.h"
#include "emitters/rewrite/source_apply.h"
#include "base/strbuf.h"
#include "src/cli.h"

/*
 * `cacheadvise apply DIR`: applies a capture's source.patch to the program's
 * sources itself (emitters/rewrite/source_apply.h: parsed once, strictly, every file
 * or none), after checking that every file it changes is still the file the
 * capture saw (sources.json). It runs no other program.
 */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cacheadvise apply DIR [--source-root PATH] [--python PATH] [--dry-run]\n"
		"\n"
		"Applies DIR/source.patch, written by 'cacheadvise profile', to the program's\n"
		"sources: each advised global load is wrapped in a small inline-PTX helper\n"
		"(ca_ld_na() for L1::no_allocate, ca_ld_el() for L1::evict_last, ...) that the\n"
		"patch adds to the file. Loads the tool cannot rewrite safely are left alone;\n"
		"report.txt says why for each. Rebuild the program afterwards.\n"
		"\n"
		"The patch is parsed strictly and applied by cacheadvise itself (no git or\n"
		"patch is run), to every file or to none. Refuses (exit 2) when a file the\n"
		"patch changes is no longer the file the capture saw (its SHA-256 differs\n"
		"from DIR/sources.json), when the capture or source.patch is invalid, when\n"
		"the patch does anything but change the files sources.json records in place\n"
		"(a new, deleted, renamed or linked file, a mode change, a context or binary\n"
		"diff), when a file is a symbolic link, and when the sources are read-only.\n"
		"Where DIR has no source.patch, writes one from the capture and the sources\n"
		"as they are now (a dry run only prints it).\n"
		"\n"
		"      --source-root P  where the sources are now (default: where they were\n"
		"                       when the program was profiled)\n"
		"      --python PATH    the Python that rewrites Triton tl.load calls, where the\n"
		"                       patch is made here (default: $CACHEADVISE_PYTHON, else\n"
		"                       python3 from PATH; never a program the capture names)\n"
		"  -n, --dry-run        print the patch and check that it applies; change nothing\n"
		"  -h, --help           show this help\n"
		"\n"
		"A capture whose source.patch is empty (the sources were not readable when it\n"
		"was profiled) gets its patch made from the sources as they are now: pass\n"
		"--source-root with where they are.\n"
		"\n"
		"Exit status: 0 applied (or the plan changes no load), 1 usage error, 2 DIR is\n"
		"not a capture, a source changed since the capture, the patch is refused or\n"
		"does not apply, or it rewrites none of the advised loads (the reasons are\n"
		"listed); then no source file is changed.\n"
		"\n"
		"EXAMPLES\n"
		"  cacheadvise apply cacheadvise-out/app-20261122-031000 --dry-run\n"
		"  cacheadvise apply cacheadvise-out/app-20261122-031000\n"
		"  cacheadvise apply cacheadvise-out/app-20261122-031000 --source-root ~/src/app\n");
}

static int parse(struct source_apply_options *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "source-root", required_argument, NULL, 'S' },
		{ "python", required_argument, NULL, 'P' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":nh", longopts, NULL)) != -1) {
		switch (c) {
		case 'S':
			o->source_root = optarg;
			break;
		case 'P':
			o->python = optarg;
			break;
		case 'n':
			o->dry_run = 1;
			break;
		case 'h':
			usage(stdout);
			return -1;
		case ':':
			return cli_usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			return cli_usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (cli_capture_dir_operand(argc, argv, optind, "cacheadvise apply DIR", &o->dir))
		return 1;
	return 0;
}

/* What prepare found before it answered (what it made, the loads left). */
static void show(const struct source_apply_options *o, const struct source_apply *r)
{
	size_t i;

	if (r->made == SOURCE_APPLY_MADE && !o->dry_run)
		cli_warn("'%s' had no source.patch or sources.json: wrote them from the sources "
			 "as they are now in '%s'; check that they are the sources the program "
			 "was built from", o->dir, r->in.lookup_root);
	else if (r->made == SOURCE_APPLY_MADE)
		cli_warn("'%s' has no source.patch or sources.json: the patch below is made "
			 "from the sources as they are now in '%s' (dry run: nothing written)",
			 o->dir, r->in.lookup_root);
	else if (r->made == SOURCE_APPLY_REMADE)
		fprintf(stderr, "cacheadvise apply: the capture's source.patch was empty: made "
			"it from the sources in '%s' (%zu line%s rewritten)%s\n",
			r->in.lookup_root, r->remade_lines, r->remade_lines == 1 ? "" : "s",
			o->dry_run ? " (dry run: nothing written)" : "");
	if (r->nr_skips)
		fprintf(stderr, "cacheadvise apply: no advised load could be rewritten in source:\n");
	for (i = 0; i < r->nr_skips; i++) {
		const struct source_apply_skip *s = &r->skips[i];
		struct strbuf line = STRBUF_INIT, safe = STRBUF_INIT;

		if (s->path)
			strbuf_addf(&line, "  %s load %u (%s:%d, %s): %s", s->label, s->ordinal,
				    s->path, s->line, s->action, s->reason);
		else
			strbuf_addf(&line, "  %s load %u (%s): %s", s->label, s->ordinal,
				    s->action, s->reason);
		strbuf_add_printable(&safe, line.buf);   /* names from the capture */
		fprintf(stderr, "%s\n", safe.buf);
		strbuf_release(&line);
		strbuf_release(&safe);
	}
}

/* The -I the patched sources need when they include cacheadvise's installed
 * headers (<cacheadvise/...>): the include/ beside bin/ of this copy. */
static void include_hint(const struct strbuf *patch)
{
	char *dir, *probe, *real;

	if (!strstr(patch->buf, "<cacheadvise/"))
		return;
	dir = xasprintf("%s/../include", cli_exe_dir());
	probe = xasprintf("%s/cacheadvise/regcache.cuh", dir);
	real = access(probe, R_OK) ? NULL : realpath(dir, NULL);
	if (real)
		fprintf(stderr, "cacheadvise apply: the patched sources include cacheadvise's "
			"headers: compile with -I%s\n", real);
	else
		fprintf(stderr, "cacheadvise apply: the patched sources include cacheadvise's "
			"headers, which this copy of cacheadvise lacks ('%s'): reinstall it "
			"(cmake --install, or the .deb) and compile with -I<its prefix>/include\n",
			probe);
	free(real);
	free(probe);
	free(dir);
}

int cmd_apply(int argc, char **argv)
{
	struct source_apply_options o;
	struct source_apply r;
	int ret = parse(&o, argc, argv);

	if (ret)
		return ret < 0 ? 0 : ret;   /* -1: --help */
	ret = source_apply_prepare(&o, &r);
	show(&o, &r);
	if (!ret && r.state == SOURCE_APPLY_NO_CHANGES) {
		fprintf(stderr, "cacheadvise apply: nothing to apply: the plan changes no load\n");
	} else if (!ret && r.state == SOURCE_APPLY_ALREADY) {
		fprintf(stderr, "cacheadvise apply: %s is already applied in '%s': nothing to do\n",
			r.name, r.root);
	} else if (!ret && o.dry_run && fwrite(r.patch.buf, 1, r.patch.len, stdout) != r.patch.len) {
		ret = error_set(CA_E_IO, "cannot write the patch to standard output");
	} else if (!ret && !(ret = source_apply_write(&r, o.dry_run))) {
		if (o.dry_run)
			fprintf(stderr, "cacheadvise apply: the patch applies cleanly in '%s' (dry "
				"run: nothing changed)\n", r.root);
		else
			fprintf(stderr, "cacheadvise apply: applied %s in '%s'; rebuild the program\n",
				r.name, r.root);
		include_hint(&r.patch);
	}
	source_apply_release(&r);
	return ret ? cli_fail(ret, NULL) : 0;
}
