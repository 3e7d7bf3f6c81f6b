/*
 * Per-launch hardware counters through CUPTI's Range Profiler API (CUDA 13):
 * auto range (one range per kernel launch) and kernel replay (CUPTI replays
 * a launch as many passes as the metrics need, restoring memory between
 * passes; CACHEADVISE_USER_REPLAY=1 tries user replay for the lighter
 * configuration, see struct range_metrics). Ranges are decoded before the next launch and at the end, and
 * each becomes a "metrics" event carrying the launch's seq number.
 */
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cupti_profiler_host.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include "base/xalloc.h"
#include "collectors/inject/cost_clock.h"
#include "collectors/inject/inject.h"

/* Ranges a session holds: launch plans batch up to this many replays in
 * one profiler session (its start, stop and decode cost tens of ms). */
#define RM_MAX_RANGES 64
enum { RM_FULL, RM_HITS };

/* The metric in the second, lighter configuration: hit_i and hit_{i,j} need
 * only it, and a range of it alone cost 30 ms against 66 ms for the seven
 * default metrics (records sample, H100, 2026-11-24: bench/results/
 * capture-cost.md). */
#define RM_HITS_METRIC "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum"

/* L1 global-load traffic, L2 reads from L1, DRAM reads, duration (FACTS.md:
 * every one read on an H200 with ncu). Names map to capture.json keys. */
static const struct {
	const char *metric;
	const char *key;
} default_metrics[] = {
	{ "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1_requests" },
	{ "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1_sectors" },
	{ RM_HITS_METRIC, "l1_hits" },
	{ "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum", "l1_misses" },
	{ "lts__t_sectors_srcunit_tex_op_read.sum", "l2_sectors_from_l1" },
	{ "dram__bytes_read.sum", "dram_bytes_read" },
	{ "gpu__time_duration.sum", "duration_ns" },
};


/* One set of metrics: its host object, config and counter data images. */
struct rm_config {
	CUpti_Profiler_Host_Object *host;
	uint8_t *config;
	size_t config_size;
	uint8_t *counter_data;
	size_t counter_data_size;
	const char **names;        /* metrics in use */
	const char **keys;         /* their capture.json keys */
	size_t nr_names;
};

struct range_metrics {
	CUpti_RangeProfiler_Object *object;
	const char *chip;           /* CUPTI's, valid while the object lives */
	uint8_t *availability;      /* counter availability image of the context */
	struct rm_config configs[2];    /* RM_FULL, RM_HITS */
	int nr_configs;
	int cur;                    /* the configuration of the session in progress */
	range_metrics_listener *listener;
	void *listener_arg;
	uint64_t pending_seq[RM_MAX_RANGES];
	char *pending_kernel[RM_MAX_RANGES];
	char *pending_label[RM_MAX_RANGES];     /* launch plans: the variant, else NULL */
	int64_t pending_ordinal[RM_MAX_RANGES]; /* launch plans: the kernel's launch ordinal */
	size_t nr_pending;
	int started;
	int per_launch;            /* started and stopped around chosen launches */
	/*
	 * CACHEADVISE_USER_REPLAY=1 (an experiment, issue 39): the lighter
	 * configuration's sessions in CUPTI_UserReplay. The launch plans
	 * replay each variant and restore the memory it writes themselves,
	 * and a range cost about 50 ms in kernel replay whatever the kernel
	 * (bench/cost_breakdown.py's replay lines: 51 ms for a kernel that
	 * writes nothing); a one-pass configuration needs no more. A session
	 * whose passes are not all submitted after one is dropped, with an
	 * error event, and kernel replay is used from then on.
	 */
	int user_replay;
	int cur_user;              /* the session in progress is in user replay */
};

static const char *cupti_error_string(CUptiResult r)
{
	const char *s = NULL;

	cuptiGetResultString(r, &s);
	return s ? s : "unknown CUPTI error";
}

/* CHECK records the call text and CUPTI's own message as an error event,
 * then jumps to fail; it never exits the program. */
#define CHECK(call)                                                              \
	do {                                                                     \
		CUptiResult check_r_ = (call);                                   \
		if (check_r_ != CUPTI_SUCCESS) {                                 \
			inject_error("%s failed (%s:%d): %s%s", #call, __FILE__, \
				     __LINE__, cupti_error_string(check_r_),     \
				     check_r_ == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES \
				     ? ": profiling is not permitted for this user" : ""); \
			goto fail;                                               \
		}                                                                \
	} while (0)

static const char *key_for(const char *metric)
{
	size_t i;

	for (i = 0; i < sizeof(default_metrics) / sizeof(default_metrics[0]); i++)
		if (!strcmp(default_metrics[i].metric, metric))
			return default_metrics[i].key;
	return metric;
}

static void add_metric(struct rm_config *cfg, const char *name)
{
	CUpti_Profiler_Host_GetMetricProperties_Params props = { .structSize = CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE };
	CUptiResult r;

	props.pHostObject = cfg->host;
	props.pMetricName = name;
	r = cuptiProfilerHostGetMetricProperties(&props);
	if (r != CUPTI_SUCCESS) {
		inject_error("metric '%s' does not exist on this GPU (%s): it is left out",
			     name, cupti_error_string(r));
		return;
	}
	cfg->names = xrealloc(cfg->names, (cfg->nr_names + 1) * sizeof(*cfg->names));
	cfg->keys = xrealloc(cfg->keys, (cfg->nr_names + 1) * sizeof(*cfg->keys));
	cfg->names[cfg->nr_names] = xstrdup(name);
	cfg->keys[cfg->nr_names] = key_for(name);
	cfg->nr_names++;
}

static int has_metric(const struct rm_config *cfg, const char *name)
{
	size_t i;

	for (i = 0; i < cfg->nr_names; i++)
		if (!strcmp(cfg->names[i], name))
			return 1;
	return 0;
}

/*
 * The host object, metrics (a comma-separated list, or the defaults) and
 * images of one configuration. Returns 0, or -1 with an error event.
 */
static int config_init(struct range_metrics *rm, struct rm_config *cfg, const char *metric_list)
{
	size_t i;

	{
		CUpti_Profiler_Host_Initialize_Params host = { .structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE };

		host.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
		host.pChipName = rm->chip;
		host.pCounterAvailabilityImage = rm->availability;
		CHECK(cuptiProfilerHostInitialize(&host));
		cfg->host = host.pHostObject;
	}
	if (metric_list && *metric_list) {
		char *copy = xstrdup(metric_list), *save = NULL, *tok;
		for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
			add_metric(cfg, tok);
		free(copy);
	} else {
		for (i = 0; i < sizeof(default_metrics) / sizeof(default_metrics[0]); i++)
			add_metric(cfg, default_metrics[i].metric);
	}
	if (!cfg->nr_names) {
		inject_error("none of the requested metrics exists on this GPU");
		goto fail;
	}
	{
		CUpti_Profiler_Host_ConfigAddMetrics_Params add = { .structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE };
		CUpti_Profiler_Host_GetConfigImageSize_Params size = { .structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE };
		CUpti_Profiler_Host_GetConfigImage_Params get = { .structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE };

		add.pHostObject = cfg->host;
		add.ppMetricNames = cfg->names;
		add.numMetrics = cfg->nr_names;
		CHECK(cuptiProfilerHostConfigAddMetrics(&add));
		size.pHostObject = cfg->host;
		CHECK(cuptiProfilerHostGetConfigImageSize(&size));
		cfg->config_size = size.configImageSize;
		cfg->config = xmalloc(cfg->config_size);
		get.pHostObject = cfg->host;
		get.pConfigImage = cfg->config;
		get.configImageSize = cfg->config_size;
		CHECK(cuptiProfilerHostGetConfigImage(&get));
	}
	{
		CUpti_RangeProfiler_GetCounterDataSize_Params size = { .structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE };
		CUpti_RangeProfiler_CounterDataImage_Initialize_Params init = { .structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE };

		size.pRangeProfilerObject = rm->object;
		size.pMetricNames = cfg->names;
		size.numMetrics = cfg->nr_names;
		size.maxNumOfRanges = RM_MAX_RANGES;
		size.maxNumRangeTreeNodes = RM_MAX_RANGES;
		CHECK(cuptiRangeProfilerGetCounterDataSize(&size));
		cfg->counter_data_size = size.counterDataSize;
		cfg->counter_data = xcalloc(1, cfg->counter_data_size);
		init.pRangeProfilerObject = rm->object;
		init.pCounterData = cfg->counter_data;
		init.counterDataSize = cfg->counter_data_size;
		CHECK(cuptiRangeProfilerCounterDataImageInitialize(&init));
	}
	return 0;
fail:
	return -1;
}

/* config_init, its time counted as the host's counter configuration. */
static int config_init_timed(struct range_metrics *rm, struct rm_config *cfg,
			     const char *metric_list)
{
	struct cost_clock_token t = cost_clock_enter(RUN_COST_COUNTER_CONFIG);
	int ret = config_init(rm, cfg, metric_list);

	cost_clock_leave(t);
	return ret;
}

static void config_release(struct rm_config *cfg)
{
	size_t i;

	if (cfg->host) {
		CUpti_Profiler_Host_Deinitialize_Params p = { .structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE };
		p.pHostObject = cfg->host;
		cuptiProfilerHostDeinitialize(&p);
	}
	for (i = 0; i < cfg->nr_names; i++)
		free((char *)cfg->names[i]);
	free(cfg->names);
	free(cfg->keys);
	free(cfg->config);
	free(cfg->counter_data);
	memset(cfg, 0, sizeof(*cfg));
}

/* SetConfig and Start: from here every launch is a range (auto range,
 * kernel replay). Returns 0 or -1 with an error event. */
static int start_session_now(struct range_metrics *rm, int which)
{
	const struct rm_config *cfg = &rm->configs[which];

	rm->cur = which;
	{
		CUpti_RangeProfiler_SetConfig_Params set = { .structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE };
		CUpti_RangeProfiler_Start_Params start = { .structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE };

		set.pRangeProfilerObject = rm->object;
		set.configSize = cfg->config_size;
		set.pConfig = cfg->config;
		set.counterDataImageSize = cfg->counter_data_size;
		set.pCounterDataImage = cfg->counter_data;
		set.range = CUPTI_AutoRange;
		rm->cur_user = rm->user_replay && which == RM_HITS;
		set.replayMode = rm->cur_user ? CUPTI_UserReplay : CUPTI_KernelReplay;
		set.maxRangesPerPass = RM_MAX_RANGES;
		set.numNestingLevels = 1;
		set.minNestingLevel = 1;
		set.passIndex = 0;
		set.targetNestingLevel = 0;
		CHECK(cuptiRangeProfilerSetConfig(&set));
		start.pRangeProfilerObject = rm->object;
		CHECK(cuptiRangeProfilerStart(&start));
		rm->started = 1;
	}
	return 0;
fail:
	return -1;
}

/* start_session_now, its time counted as counter setup (cost_clock.h). */
static int start_session(struct range_metrics *rm, int which)
{
	struct cost_clock_token t = cost_clock_enter(RUN_COST_COUNTER_SETUP);
	int ret = start_session_now(rm, which);

	cost_clock_leave(t);
	return ret;
}

struct range_metrics *range_metrics_new(void *cu_context, const char *metric_list, int per_launch)
{
	struct range_metrics *rm = xcalloc(1, sizeof(*rm));
	CUcontext ctx = cu_context;
	CUdevice dev;
	size_t i;

	{
		CUpti_Profiler_Initialize_Params p = { .structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE };
		CHECK(cuptiProfilerInitialize(&p));
	}
	{
		CUpti_RangeProfiler_Enable_Params p = { .structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE };
		p.ctx = ctx;
		CHECK(cuptiRangeProfilerEnable(&p));
		rm->object = p.pRangeProfilerObject;
	}
	if (cuCtxGetDevice(&dev) != CUDA_SUCCESS) {
		inject_error("cuCtxGetDevice failed while setting up the range profiler");
		goto fail;
	}
	{
		CUpti_Device_GetChipName_Params chip = { .structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE };
		CUpti_Profiler_GetCounterAvailability_Params avail = { .structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE };

		chip.deviceIndex = (size_t)dev;
		CHECK(cuptiDeviceGetChipName(&chip));
		rm->chip = chip.pChipName;
		avail.ctx = ctx;
		CHECK(cuptiProfilerGetCounterAvailability(&avail));
		rm->availability = xmalloc(avail.counterAvailabilityImageSize);
		avail.pCounterAvailabilityImage = rm->availability;
		CHECK(cuptiProfilerGetCounterAvailability(&avail));
	}
	if (config_init_timed(rm, &rm->configs[RM_FULL], metric_list))
		goto fail;
	rm->nr_configs = 1;
	/* the lighter configuration, where the full one counts the hits */
	if (per_launch && rm->configs[RM_FULL].nr_names > 1 &&
	    has_metric(&rm->configs[RM_FULL], RM_HITS_METRIC)) {
		if (config_init_timed(rm, &rm->configs[RM_HITS], RM_HITS_METRIC))
			config_release(&rm->configs[RM_HITS]);
		else
			rm->nr_configs = 2;
	}
	rm->per_launch = per_launch;
	rm->user_replay = getenv("CACHEADVISE_USER_REPLAY") &&
			  !strcmp(getenv("CACHEADVISE_USER_REPLAY"), "1");
	if (!per_launch && start_session(rm, RM_FULL))
		goto fail;
	{
		const struct rm_config *full = &rm->configs[RM_FULL];
		json_t *ev = json_pack("{s:s}", "ev", "metrics_config");
		json_t *arr = json_array();
		for (i = 0; i < full->nr_names; i++)
			json_array_append_new(arr, json_string(full->names[i]));
		json_object_set_new(ev, "metrics", arr);
		if (rm->nr_configs > 1)
			json_object_set_new(ev, "hits_only", json_string(RM_HITS_METRIC));
		inject_event(ev);
	}
	return rm;
fail:
	range_metrics_free(rm);
	return NULL;
}

static void flush_ranges_now(struct range_metrics *rm)
{
	const struct rm_config *cfg = &rm->configs[rm->cur];
	CUpti_RangeProfiler_DecodeData_Params decode = { .structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE };
	CUpti_RangeProfiler_GetCounterDataInfo_Params info = { .structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE };
	CUpti_RangeProfiler_CounterDataImage_Initialize_Params init = { .structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE };
	double *values = NULL;
	size_t r, i;

	if (!rm->nr_pending)
		return;
	decode.pRangeProfilerObject = rm->object;
	CHECK(cuptiRangeProfilerDecodeData(&decode));
	if (decode.numOfRangeDropped)
		inject_error("the range profiler dropped %zu ranges", decode.numOfRangeDropped);
	info.pCounterDataImage = cfg->counter_data;
	info.counterDataImageSize = cfg->counter_data_size;
	CHECK(cuptiRangeProfilerGetCounterDataInfo(&info));
	if (info.numTotalRanges != rm->nr_pending)
		inject_error("the range profiler returned %zu ranges for %zu launches",
			     info.numTotalRanges, rm->nr_pending);
	values = xcalloc(cfg->nr_names, sizeof(*values));
	for (r = 0; r < info.numTotalRanges && r < rm->nr_pending; r++) {
		CUpti_Profiler_Host_EvaluateToGpuValues_Params eval = { .structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE };
		json_t *ev, *vals;

		eval.pHostObject = cfg->host;
		eval.pCounterDataImage = cfg->counter_data;
		eval.counterDataImageSize = cfg->counter_data_size;
		eval.rangeIndex = r;
		eval.ppMetricNames = cfg->names;
		eval.numMetrics = cfg->nr_names;
		eval.pMetricValues = values;
		CHECK(cuptiProfilerHostEvaluateToGpuValues(&eval));
		vals = json_object();
		for (i = 0; i < cfg->nr_names; i++)
			json_object_set_new(vals, cfg->keys[i], json_real(values[i]));
		if (rm->pending_label[r] && rm->listener)
			rm->listener(rm->listener_arg, rm->pending_kernel[r], rm->pending_label[r], vals);
		ev = json_pack("{s:s, s:I, s:s, s:o}", "ev", "metrics", "seq",
			       (json_int_t)rm->pending_seq[r], "kernel", rm->pending_kernel[r],
			       "values", vals);
		if (rm->pending_label[r]) {
			json_object_set_new(ev, "variant", json_string(rm->pending_label[r]));
			json_object_set_new(ev, "ordinal", json_integer(rm->pending_ordinal[r]));
		}
		inject_event(ev);
	}
	init.pRangeProfilerObject = rm->object;
	init.pCounterData = cfg->counter_data;
	init.counterDataSize = cfg->counter_data_size;
	CHECK(cuptiRangeProfilerCounterDataImageInitialize(&init));
fail:
	free(values);
	for (r = 0; r < rm->nr_pending; r++) {
		free(rm->pending_kernel[r]);
		free(rm->pending_label[r]);
		rm->pending_label[r] = NULL;
	}
	rm->nr_pending = 0;
}

/* Decodes the ranges of the launches made so far and records them. */
static void flush_ranges(struct range_metrics *rm)
{
	struct cost_clock_token t = cost_clock_enter(RUN_COST_COUNTER_READING);

	flush_ranges_now(rm);
	cost_clock_leave(t);
}

void range_metrics_before_launch(struct range_metrics *rm, uint64_t seq, const char *kernel)
{
	if (!rm || rm->per_launch)
		return;
	flush_ranges(rm);
	rm->pending_seq[rm->nr_pending] = seq;
	rm->pending_kernel[rm->nr_pending] = xstrdup(kernel ? kernel : "?");
	rm->nr_pending++;
}

void range_metrics_begin(struct range_metrics *rm, uint64_t seq, const char *kernel,
			 const char *label, uint64_t ordinal, int hits_only)
{
	int which = hits_only && rm && rm->nr_configs > 1 ? RM_HITS : RM_FULL;
	size_t n;

	if (!rm || !rm->per_launch)
		return;
	/* a session has one configuration: a full one, or another, is ended */
	if (rm->started && (rm->nr_pending >= RM_MAX_RANGES || rm->cur != which))
		range_metrics_end(rm);
	if (!rm->started) {
		flush_ranges(rm);
		if (start_session(rm, which))
			return;
		rm->started = 1;
	}
	/* one more range in the session: the next launch */
	n = rm->nr_pending++;
	rm->pending_seq[n] = seq;
	rm->pending_kernel[n] = xstrdup(kernel ? kernel : "?");
	rm->pending_label[n] = label ? xstrdup(label) : NULL;
	rm->pending_ordinal[n] = (int64_t)ordinal;
}

void range_metrics_end(struct range_metrics *rm)
{
	CUpti_RangeProfiler_Stop_Params stop = { .structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE };

	if (!rm || !rm->per_launch || !rm->started)
		return;
	rm->started = 0;
	stop.pRangeProfilerObject = rm->object;
	if (cuptiRangeProfilerStop(&stop) != CUPTI_SUCCESS)
		inject_error("cuptiRangeProfilerStop failed");
	if (rm->cur_user && !stop.isAllPassSubmitted) {
		CUpti_RangeProfiler_CounterDataImage_Initialize_Params init = { .structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE };
		const struct rm_config *cfg = &rm->configs[rm->cur];
		size_t r;

		/* the image holds a partial pass: cleared for the next session */
		init.pRangeProfilerObject = rm->object;
		init.pCounterData = cfg->counter_data;
		init.counterDataSize = cfg->counter_data_size;
		if (cuptiRangeProfilerCounterDataImageInitialize(&init) != CUPTI_SUCCESS)
			inject_error("cuptiRangeProfilerCounterDataImageInitialize failed");
		inject_error("user replay: the hit counter needs more than one pass; its %zu ranges "
			     "are dropped and kernel replay is used from here on", rm->nr_pending);
		rm->user_replay = 0;
		for (r = 0; r < rm->nr_pending; r++) {
			free(rm->pending_kernel[r]);
			free(rm->pending_label[r]);
			rm->pending_label[r] = NULL;
		}
		rm->nr_pending = 0;
		return;
	}
	flush_ranges(rm);
}

void range_metrics_set_listener(struct range_metrics *rm, range_metrics_listener *fn, void *arg)
{
	if (!rm)
		return;
	rm->listener = fn;
	rm->listener_arg = arg;
}

void range_metrics_free(struct range_metrics *rm)
{
	size_t i;

	if (!rm)
		return;
	if (rm->started) {
		CUpti_RangeProfiler_Stop_Params stop = { .structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE };
		stop.pRangeProfilerObject = rm->object;
		if (cuptiRangeProfilerStop(&stop) != CUPTI_SUCCESS)
			inject_error("cuptiRangeProfilerStop failed");
		flush_ranges(rm);
	}
	if (rm->object) {
		CUpti_RangeProfiler_Disable_Params p = { .structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE };
		p.pRangeProfilerObject = rm->object;
		cuptiRangeProfilerDisable(&p);
	}
	for (i = 0; i < 2; i++)
		config_release(&rm->configs[i]);
	for (i = 0; i < rm->nr_pending; i++) {
		free(rm->pending_kernel[i]);
		free(rm->pending_label[i]);
	}
	free(rm->availability);
	free(rm);
}
