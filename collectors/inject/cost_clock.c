/*
 * The injection library's own time, by mechanism: see cost_clock.h.
 */
#include "collectors/inject/cost_clock.h"

#include <pthread.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static double sums[RUN_COST_NR_MECHANISMS];
static double started;

/* The mechanism this thread is in (-1 none) and since when. */
static __thread int current = -1;
static __thread double current_since;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Adds the time since current_since to the current mechanism; returns now. */
static double settle(void)
{
	double t = now();

	if (current >= 0) {
		pthread_mutex_lock(&lock);
		sums[current] += t - current_since;
		pthread_mutex_unlock(&lock);
	}
	return t;
}

void cost_clock_start(void)
{
	started = now();
}

struct cost_clock_token cost_clock_enter(enum run_cost_mechanism m)
{
	struct cost_clock_token t = { current };

	current_since = settle();
	current = (int)m;
	return t;
}

void cost_clock_leave(struct cost_clock_token t)
{
	current_since = settle();
	current = t.outer;
}

json_t *cost_clock_json(void)
{
	json_t *secs = json_object();
	double total = started > 0 ? now() - started : 0;
	int i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < RUN_COST_NR_MECHANISMS; i++)
		json_object_set_new(secs, run_cost_mechanisms[i], json_real(sums[i]));
	pthread_mutex_unlock(&lock);
	return json_pack("{s:s, s:f, s:o}", "ev", "cost", "injected_seconds", total, "seconds", secs);
}
