/*
 * `cacheadvise profile`: parses the options into struct profile_options,
 * runs the profile library (src/profile/profile.h) and prints its progress.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analysis/budget.h"
#include "analysis/device_model.h"
#include "base/error.h"
#include "collectors/runner.h"
#include "emitters/capture_layout.h"
#include "emitters/progress_text.h"
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
		"      --l2-priority    also measure each load's L2 eviction priority in-run\n"
		"                       (evict_first, evict_last: DRAM bytes per load and pair;\n"
		"                       experimental: not yet run on a GPU)\n"
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

/*
 * The file an option names must be a readable regular file before any GPU
 * work (issue 16: a typo is an input error, exit 2, on any machine).
 * what says what the file is for. Returns 0 or the exit status, printed.
 */
static int check_option_file(const char *option, const char *path, const char *what)
{
	struct stat st;

	if (stat(path, &st))
		return cli_fail(CA_E_INPUT, "%s '%s': %s: %s", option, path, strerror(errno), what);
	if (S_ISDIR(st.st_mode))
		return cli_fail(CA_E_INPUT, "%s '%s' is a directory: %s", option, path, what);
	if (!S_ISREG(st.st_mode))
		return cli_fail(CA_E_INPUT, "%s '%s' is not a regular file: %s", option, path, what);
	if (access(path, R_OK))
		return cli_fail(CA_E_INPUT, "%s '%s': %s: %s", option, path, strerror(errno), what);
	return 0;
}

/* --device FILE and --compare FILE, read and checked before the GPU is. */
static int check_option_files(const struct profile_options *opt)
{
	int ret;

	if (opt->device_file) {
		struct device_model dm;

		ret = check_option_file("--device", opt->device_file,
					"give the device.json that 'cacheadvise probe -o FILE' wrote");
		if (ret)
			return ret;
		device_model_init(&dm);
		ret = device_model_load_file(&dm, opt->device_file);
		device_model_release(&dm);
		if (ret)
			return cli_fail(ret, NULL);
	}
	if (opt->compare_file)
		return check_option_file("--compare", opt->compare_file,
					 "run the program once so that it writes the file, then "
					 "profile it");
	return 0;
}

/*
 * Progress (issue 14): on a terminal one line, redrawn in place twice a
 * second by a thread while a run is in flight, with the elapsed time and
 * the ETA; elsewhere (a log, CI) one line per finished run with its label.
 * Messages clear the bar, print, and let it be redrawn. The words are
 * emitters/progress_text.h's.
 */
struct progress_view {
	pthread_mutex_t lock;
	pthread_t ticker;
	int tty, ticking, stop, drawn;
	char label[128];
	unsigned running, done, total;
	double t0;                   /* profile_run's start on this clock */
	double last_end;             /* elapsed at the last run's end, 0 none */
};

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static unsigned term_width(void)
{
	struct winsize ws;

	if (!ioctl(2, TIOCGWINSZ, &ws) && ws.ws_col >= 20)
		return ws.ws_col - 1;
	return 79;
}

/* Called with v->lock held. */
static void draw_bar(struct progress_view *v)
{
	char *bar = progress_text_bar(v->label, v->running, v->done, v->total,
				      now_seconds() - v->t0, v->last_end, term_width());

	fprintf(stderr, "\r\033[K%s", bar);
	fflush(stderr);
	free(bar);
	v->drawn = 1;
}

/* Called with v->lock held: the line is left empty for a message. */
static void clear_bar(struct progress_view *v)
{
	if (v->drawn)
		fputs("\r\033[K", stderr);
	v->drawn = 0;
}

static void *ticker_main(void *data)
{
	struct progress_view *v = data;
	const struct timespec half = { 0, 500000000 };

	for (;;) {
		nanosleep(&half, NULL);
		pthread_mutex_lock(&v->lock);
		if (v->stop) {
			pthread_mutex_unlock(&v->lock);
			return NULL;
		}
		if (v->running)
			draw_bar(v);
		pthread_mutex_unlock(&v->lock);
	}
}

static void progress_view_init(struct progress_view *v)
{
	memset(v, 0, sizeof(*v));
	pthread_mutex_init(&v->lock, NULL);
	v->tty = isatty(2) && !getenv("CACHEADVISE_NO_PROGRESS_BAR");
	v->t0 = now_seconds();
}

static void progress_view_release(struct progress_view *v)
{
	if (v->ticking) {
		pthread_mutex_lock(&v->lock);
		v->stop = 1;
		pthread_mutex_unlock(&v->lock);
		pthread_join(v->ticker, NULL);
	}
	pthread_mutex_lock(&v->lock);
	clear_bar(v);
	pthread_mutex_unlock(&v->lock);
	pthread_mutex_destroy(&v->lock);
}

/* The ticker takes no signal: Ctrl-C reaches the thread that runs the program. */
static void start_ticker(struct progress_view *v)
{
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	v->ticking = !pthread_create(&v->ticker, NULL, ticker_main, v);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void print_run(struct progress_view *v, const struct profile_event *ev)
{
	if (!v->tty) {
		if (ev->run_ended) {
			char *line = progress_text_line(ev->label, ev->run_number, ev->runs_planned,
							ev->elapsed);
			fprintf(stderr, "cacheadvise profile: %s\n", line);
			free(line);
		}
		return;
	}
	if (!v->ticking)
		start_ticker(v);
	pthread_mutex_lock(&v->lock);
	v->t0 = now_seconds() - ev->elapsed;
	snprintf(v->label, sizeof(v->label), "%s", ev->label ? ev->label : "");
	v->done = ev->runs_done;
	v->total = ev->runs_planned;
	v->running = ev->run_ended ? 0 : ev->run_number;
	if (ev->run_ended)
		v->last_end = ev->elapsed;
	draw_bar(v);
	pthread_mutex_unlock(&v->lock);
}

static void print_event(void *data, const struct profile_event *ev)
{
	struct progress_view *v = data;

	if (ev->kind == PROFILE_EVENT_RUN) {
		print_run(v, ev);
		return;
	}
	pthread_mutex_lock(&v->lock);
	clear_bar(v);
	switch (ev->kind) {
	case PROFILE_EVENT_RUN:
		break;
	case PROFILE_EVENT_MESSAGE:
		fprintf(stderr, "cacheadvise profile: %s\n", ev->message);
		break;
	case PROFILE_EVENT_DONE:
		fprintf(stderr, "cacheadvise profile: capture written to %s (%u runs)\n", ev->dir,
			ev->runs_done);
		fprintf(stderr, "  read it:    cacheadvise report %s   (or open %s/"
			CAPTURE_LAYOUT_REPORT_HTML ")\n", ev->dir, ev->dir);
		break;
	case PROFILE_EVENT_INCOMPLETE:
		fprintf(stderr, "cacheadvise profile: the capture in %s is incomplete\n", ev->dir);
		break;
	}
	if (v->tty && v->running)
		draw_bar(v);
	pthread_mutex_unlock(&v->lock);
}

/* --gpus: the GPUs a profile's independent runs spread over. */
#define MAX_GPUS 16
#define MAX_GPU_ID 1023

/* "0,1", "0-3", "2": distinct numbers 0..MAX_GPU_ID, at most MAX_GPUS (the
 * list form of --ranks, launcher_ranks_parse, without "all"). */
static int parse_gpus(const char *s, int *ids, size_t *n)
{
	struct rank_set set;
	size_t i, j;
	long g;

	*n = 0;
	if (launcher_ranks_parse(s, &set) || set.all)
		return -1;
	for (i = 0; i < set.nr; i++) {
		if (set.r[i].hi > MAX_GPU_ID)
			return -1;
		for (g = set.r[i].lo; g <= set.r[i].hi; g++) {
			for (j = 0; j < *n; j++)
				if (ids[j] == g)
					return -1;
			if (*n == MAX_GPUS)
				return -1;
			ids[(*n)++] = (int)g;
		}
	}
	return *n ? 0 : -1;
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
		{ "variant-form", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct profile_options opt;
	int gpus[MAX_GPUS];
	struct progress_view view;
	struct profile_progress progress = { print_event, &view };
	int c, ret;

	memset(&opt, 0, sizeof(opt));
	opt.top = 5;
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
		case 'Q': opt.l2_priority = 1; break;
		case 'K': {
			struct rank_set set;

			if (launcher_ranks_parse(optarg, &set))
				return cli_usage_error("--ranks takes \"all\" or rank numbers and ranges "
						       "(\"0\", \"0,2-3\"), not '%s'", optarg);
			opt.ranks = optarg;
			break;
		}
		case 'G':
			if (parse_gpus(optarg, gpus, &opt.nr_gpus))
				return cli_usage_error("--gpus takes distinct GPU numbers 0 to %d and ranges "
						       "(\"0,1\", \"0-3\"), at most %d, not '%s'",
						       MAX_GPU_ID, MAX_GPUS, optarg);
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
	if ((ret = check_option_files(&opt)))
		return ret;
	opt.argv = argv + optind;
	opt.tool_dir = cli_exe_dir();
	runner_install_interrupt_handler();
	progress_view_init(&view);
	ret = profile_run(&opt, &progress);
	progress_view_release(&view);
	if (ret == CA_E_INTERRUPTED)
		return 130;   /* the capture says where it stopped */
	return ret ? cli_fail(ret, NULL) : 0;
}
