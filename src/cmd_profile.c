/*
 * `cacheadvise profile`: parses the options into struct profile_options,
 * runs the profile library (src/profile/profile.h) and prints its progress.
 */
#include <getopt.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/budget.h"
#include "base/error.h"
#include "collectors/runner.h"
#include "emitters/capture_layout.h"
#include "emitters/progress_view.h"
#include "collectors/launcher.h"
#include "src/cli.h"
#include "src/profile/profile.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cacheadvise profile [OPTIONS] [--out DIR] [--] PROGRAM [ARGS...]\n"
		"\n"
		"Runs PROGRAM again and again under the injection library: measures what\n"
		"every global load of its busiest kernels gains from L1 (hit_i) and what\n"
		"pairs of loads do to each other (hit_ij), chooses the loads to cache or\n"
		"bypass, writes the advice, and verifies it by running the program with it.\n"
		"The first argument that is not an option starts the program.\n"
		"\n"
		"  -o, --out DIR        capture directory (default ./cacheadvise-out/PROGRAM-TIME)\n"
		"      --kernels REGEX  only kernels whose (mangled) name matches\n"
		"      --top K          the K kernels with the most GPU time (default 5)\n"
		"      --min-share PCT  leave out kernels under PCT%% of the kernels' GPU time\n"
		"                       (default 1; 0 measures them; --kernels names any)\n"
		"      --max-loads N    loads measured per kernel, the busiest first (default 24)\n"
		"      --timeout SEC    limit per program run (default 300)\n"
		"      --repeat N       A/B rounds of verification (default 5)\n"
		"      --compare FILE[:KIND]  an output file of the program that must not change;\n"
		"                       KIND f32 or f64 compares its values within the\n"
		"                       tolerance, text its lines, bytes its bytes (default:\n"
		"                       recognised from its contents)\n"
		"      --output-rtol R, --output-atol A  numbers in the output (text and float\n"
		"                       files) are equal when |a-b| <= A + R*max(|a|,|b|)\n"
		"                       (default R 1e-5, A 1e-8, as numpy.allclose)\n"
		"      --output-ignore REGEX  stdout/stderr lines not compared (e.g. '^kernel .* ms$')\n"
		"      --strict-output  reject advice when the program's results differ between\n"
		"                       baseline runs (default: kept on timing, \"output unchecked\")\n"
		"      --oracle [N]     also measure every plan of kernels with <= N loads (default 6)\n"
		"      --model M        sector (default) or classic (the seed's 128-byte model)\n"
		"      --device FILE    device model from `cacheadvise probe -o FILE`\n"
		"      --bypass-form F  no_allocate (default) or cg (reproduces the seed)\n"
		"      --no-verify      do not run the verification step\n"
		"      --no-monitor     skip the instrumented monitor run\n"
		"      --no-l2          skip the persisting-L2 window step\n"
		"      --no-softcache   skip the automatic software-cache step\n"
		"      --budget X       the whole profile may take X times the program's native\n"
		"                       run (at least 15 s; default 20, 0: no limit): a step past\n"
		"                       it is skipped with a note (the capture and verification\n"
		"                       of the advice never are)\n"
		"      --measure M      launches (default): variants measured inside one run at\n"
		"                       sampled launches, replayed with memory restored; runs:\n"
		"                       one program run per variant (the first method)\n"
		"      --samples N      launches per kernel that carry counters (default 3; a\n"
		"                       pair of loads is replayed at one of them)\n"
		"      --all-pairs      measure every pair of loads, none assumed additive\n"
		"      --l2-priority    measure each load's L2 eviction priority in-run even\n"
		"                       past the budget (evict_first, evict_last: DRAM bytes\n"
		"                       per load and pair; measured by default, as the budget\n"
		"                       allows)\n"
		"      --no-l2-priority leave the L2 priority pass out\n"
		"      --build CMD      builds the program in its tree (sh -c): run in a copy\n"
		"                       with source.patch applied, and the rebuilt program timed\n"
		"                       (a Triton program needs none; as the budget allows)\n"
		"      --ranks LIST     an MPI or Slurm job (-- mpirun ... or -- srun ...): the\n"
		"                       ranks measured, \"all\" or numbers and ranges (\"0,2-3\");\n"
		"                       the others run with the advice, unmeasured (default:\n"
		"                       all of a job of up to 8 ranks, else rank 0)\n"
		"      --gpus LIST      spread the independent runs of a single-process program\n"
		"                       over these GPUs (\"0,1\", \"0-3\"): in-run capture passes\n"
		"                       split their sampled launches, --measure runs its\n"
		"                       variants; A/B timing and output checks stay on the first\n"
		"      --variant-form F in-run variants: auto (default: a module per variant while\n"
		"                       a pass has at most 64, else one module switched by a\n"
		"                       mask), modules, or mask\n"
		"  -h, --help           this text\n"
		"\n"
		"Exit status: 0 the capture completed (even when no advice is kept), 1 usage,\n"
		"2 invalid input, 3 the program failed or timed out in its baseline run,\n"
		"4 no usable GPU or profiling not permitted, 130 interrupted (the capture\n"
		"is kept and marked incomplete).\n"
		"\n"
		"EXAMPLES\n"
		"  cacheadvise profile ./app\n"
		"  cacheadvise profile --kernels 'gather|scatter' --top 2 ./app input.dat\n"
		"  cacheadvise profile --out run1 --repeat 9 --compare out.bin -- ./app -o out.bin\n");
}

static int parse_uint(const char *s, unsigned *out, const char *what)
{
	unsigned long v;

	if (cli_parse_uint(s, what, 0, 1000000, "a whole number", &v))
		return 1;
	*out = (unsigned)v;
	return 0;
}

/* profile's events on emitters/progress_view.h's view of stderr. */
static void print_event(void *data, const struct profile_event *ev)
{
	struct progress_view *v = data;

	switch (ev->kind) {
	case PROFILE_EVENT_RUN:
		progress_view_run(v, ev->label, ev->run_number, ev->runs_done, ev->runs_planned,
				  ev->elapsed, ev->run_ended);
		break;
	case PROFILE_EVENT_MESSAGE:
		progress_view_message(v, "%s", ev->message);
		break;
	case PROFILE_EVENT_DONE:
		progress_view_message(v, "capture written to %s (%u runs)%s%s\n  read it:    cacheadvise "
				      "report %s   (or open %s/" CAPTURE_LAYOUT_REPORT_HTML ")",
				      ev->dir, ev->runs_done, ev->message ? "\n  cost:       " : "",
				      ev->message ? ev->message : "", ev->dir, ev->dir);
		break;
	case PROFILE_EVENT_INCOMPLETE:
		progress_view_message(v, "the capture in %s is incomplete", ev->dir);
		break;
	}
}

int cmd_profile(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "kernels", required_argument, NULL, 'k' },
		{ "top", required_argument, NULL, 't' },
		{ "min-share", required_argument, NULL, 'H' },
		{ "max-loads", required_argument, NULL, 'm' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "compare", required_argument, NULL, 'c' },
		{ "output-ignore", required_argument, NULL, 'I' },
		{ "output-rtol", required_argument, NULL, 'R' },
		{ "output-atol", required_argument, NULL, 'A' },
		{ "strict-output", no_argument, NULL, 'X' },
		{ "oracle", optional_argument, NULL, 'O' },
		{ "model", required_argument, NULL, 'M' },
		{ "device", required_argument, NULL, 'd' },
		{ "bypass-form", required_argument, NULL, 'b' },
		{ "no-verify", no_argument, NULL, 'V' },
		{ "no-monitor", no_argument, NULL, 'N' },
		{ "no-l2", no_argument, NULL, 'L' },
		{ "no-softcache", no_argument, NULL, 'C' },
		{ "budget", required_argument, NULL, 'B' },
		{ "measure", required_argument, NULL, 'E' },
		{ "samples", required_argument, NULL, 'S' },
		{ "all-pairs", no_argument, NULL, 'P' },
		{ "ranks", required_argument, NULL, 'K' },
		{ "gpus", required_argument, NULL, 'G' },
		{ "l2-priority", no_argument, NULL, 'Q' },
		{ "no-l2-priority", no_argument, NULL, 'q' },
		{ "variant-form", required_argument, NULL, 'F' },
		{ "build", required_argument, NULL, 'U' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct profile_options opt;
	int gpus[LAUNCHER_MAX_GPUS];
	struct progress_view view;
	struct profile_progress progress = { print_event, &view };
	int c, ret;

	memset(&opt, 0, sizeof(opt));
	opt.top = 5;
	opt.l2_priority = 1;        /* the lever that wins on Hopper (issue 39 item 4) */
	opt.min_share = 1.0;
	opt.max_loads = 24;
	opt.timeout = 300;
	opt.repeat = 5;
	opt.model = "sector";
	opt.bypass_form = "no_allocate";
	opt.samples = 3;
	opt.output_rtol = opt.output_atol = -1;     /* the defaults */
	opt.budget = BUDGET_DEFAULT_FACTOR;
	opterr = 0;
	optind = 1;
	/* '+': stop at the first non-option, which starts the program;
	 * ':': a missing value is told apart from an unknown option. */
	while ((c = getopt_long(argc, argv, "+:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!*optarg || !strcmp(optarg, "-"))
				return cli_usage_error("-o wants a folder name, not %s (the folder the "
						       "capture goes in)", *optarg ? "'-'" : "an empty one");
			opt.out_dir = optarg;
			break;
		case 'k': opt.kernels_regex = optarg; break;
		case 't': if (parse_uint(optarg, &opt.top, "--top")) return 1; break;
		case 'H': {
			char *end;
			opt.min_share = strtod(optarg, &end);
			if (end == optarg || *end || !(opt.min_share >= 0 && opt.min_share <= 100))
				return cli_usage_error("--min-share is a percentage from 0 to 100, not '%s'", optarg);
			break;
		}
		case 'm': if (parse_uint(optarg, &opt.max_loads, "--max-loads")) return 1; break;
		case 'T': {
			if (cli_parse_timeout(optarg, "--timeout", &opt.timeout))
				return 1;
			break;
		}
		case 'r': if (parse_uint(optarg, &opt.repeat, "--repeat")) return 1; break;
		case 'c': {
			/* the path without its ":KIND": kept for the whole command (a
			 * static, so a usage error after it leaks nothing) */
			static char *compare_path;

			free(compare_path);
			compare_path = NULL;
			if (output_compare_parse(optarg, &compare_path, &opt.compare_kind))
				return cli_fail(CA_E_USAGE, NULL);
			opt.compare_file = compare_path;
			break;
		}
		case 'R':
			if (cli_parse_number(optarg, "--output-rtol", 0, 1e9, "a number of 0 or more",
					     &opt.output_rtol))
				return 1;
			break;
		case 'A':
			if (cli_parse_number(optarg, "--output-atol", 0, 1e300, "a number of 0 or more",
					     &opt.output_atol))
				return 1;
			break;
		case 'I': opt.output_ignore = optarg; break;
		case 'X': opt.strict_output = 1; break;
		case 'O':
			opt.oracle_max = 6;
			/* DESIGN.md writes `--oracle [N]`: take a bare number after it too */
			if (!optarg && optind < argc && argv[optind][0] &&
			    strspn(argv[optind], "0123456789") == strlen(argv[optind]))
				optarg = argv[optind++];
			if (optarg && parse_uint(optarg, &opt.oracle_max, "--oracle"))
				return 1;
			if (opt.oracle_max > 16)
				return cli_usage_error("--oracle %u would time 2^%u plans per kernel: use 16 or fewer",
						       opt.oracle_max, opt.oracle_max);
			break;
		case 'M':
			if (strcmp(optarg, "sector") && strcmp(optarg, "classic"))
				return cli_usage_error("--model is 'sector' or 'classic', not '%s'", optarg);
			opt.model = optarg;
			break;
		case 'd': opt.device_file = optarg; break;
		case 'b':
			if (strcmp(optarg, "no_allocate") && strcmp(optarg, "cg"))
				return cli_usage_error("--bypass-form is 'no_allocate' or 'cg', not '%s'", optarg);
			opt.bypass_form = optarg;
			break;
		case 'V': opt.no_verify = 1; break;
		case 'N': opt.no_monitor = 1; break;
		case 'L': opt.no_l2 = 1; break;
		case 'C': opt.no_softcache = 1; break;
		case 'B':
			if (cli_parse_number(optarg, "--budget", 0, 1e9, "a number of native run times "
					     "(0: no limit)", &opt.budget))
				return 1;
			break;
		case 'E':
			if (strcmp(optarg, "launches") && strcmp(optarg, "runs"))
				return cli_usage_error("--measure is 'launches' or 'runs', not '%s'", optarg);
			opt.measure_runs = !strcmp(optarg, "runs");
			break;
		case 'S':
			if (parse_uint(optarg, &opt.samples, "--samples"))
				return 1;
			if (!opt.samples || opt.samples > 64)
				return cli_usage_error("--samples is 1 to 64, not %u", opt.samples);
			break;
		case 'P': opt.all_pairs = 1; break;
		case 'Q': opt.l2_priority = opt.l2_priority_asked = 1; break;
		case 'q': opt.l2_priority = opt.l2_priority_asked = 0; break;
		case 'U':
			if (!*optarg)
				return cli_usage_error("--build needs a command: the one that builds "
						       "the program in its source tree");
			opt.build = optarg;
			break;
		case 'K': {
			struct rank_set set;

			if (launcher_ranks_parse(optarg, &set))
				return cli_usage_error("--ranks takes \"all\" or rank numbers and ranges "
						       "(\"0\", \"0,2-3\"), not '%s'", optarg);
			opt.ranks = optarg;
			break;
		}
		case 'G':
			if (launcher_gpus_parse(optarg, gpus, &opt.nr_gpus))
				return cli_usage_error("--gpus takes distinct GPU numbers 0 to %d and ranges "
						       "(\"0,1\", \"0-3\"), at most %d, not '%s'",
						       LAUNCHER_MAX_GPU_ID, LAUNCHER_MAX_GPUS, optarg);
			opt.gpus = gpus;
			break;
		case 'F':
			if (!strcmp(optarg, "auto"))
				opt.variant_form = 0;
			else if (!strcmp(optarg, "mask"))
				opt.variant_form = 1;
			else if (!strcmp(optarg, "modules"))
				opt.variant_form = 2;
			else
				return cli_usage_error("--variant-form is 'auto', 'mask' or 'modules', not '%s'", optarg);
			break;
		case 'h': usage(stdout); return 0;
		case ':': return cli_usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			if (optopt)
				return cli_usage_error("unknown option '-%c'", optopt);
			return cli_usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return cli_usage_error("no program given: cacheadvise profile ./app [ARGS...]");
	if (opt.nr_gpus && launcher_of(argv[optind]) != LAUNCHER_NONE)
		return cli_usage_error("--gpus spreads the runs of a single-process program; in an MPI "
				       "or Slurm job each rank uses its own GPU: leave --gpus out");
	if (opt.build && opt.no_verify)
		return cli_usage_error("--build rebuilds the program after verifying the advice: "
				       "leave --no-verify out");
	if (!opt.top)
		return cli_usage_error("--top must be at least 1");
	if (opt.repeat > 64)
		return cli_usage_error("--repeat is at most 64");
	if (opt.output_ignore) {
		regex_t re;
		if (regcomp(&re, opt.output_ignore, REG_EXTENDED | REG_NOSUB))
			return cli_usage_error("--output-ignore '%s' is not a valid regular expression",
					       opt.output_ignore);
		regfree(&re);
	}
	if (opt.kernels_regex) {
		regex_t re;
		if (regcomp(&re, opt.kernels_regex, REG_EXTENDED | REG_NOSUB))
			return cli_usage_error("--kernels '%s' is not a valid regular expression",
					       opt.kernels_regex);
		regfree(&re);
	}
	if ((ret = profile_check_files(&opt)))
		return cli_fail(ret, NULL);
	opt.argv = argv + optind;
	opt.tool_dir = cli_exe_dir();
	runner_install_interrupt_handler();
	progress_view_init(&view, stderr, isatty(2) && !getenv("CACHEADVISE_NO_PROGRESS_BAR"),
			   "cacheadvise profile: ");
	ret = profile_run(&opt, &progress);
	progress_view_release(&view);
	if (ret == CA_E_INTERRUPTED)
		return 130;   /* the capture says where it stopped */
	return ret ? cli_fail(ret, NULL) : 0;
}
