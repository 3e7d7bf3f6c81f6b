#define _GNU_SOURCE
#include "emitters/progress_view.h"

#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

#include "emitters/progress_text.h"

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static unsigned term_width(FILE *out)
{
	struct winsize ws;

	if (!ioctl(fileno(out), TIOCGWINSZ, &ws) && ws.ws_col >= 20)
		return ws.ws_col - 1;
	return 79;
}

/* Called with v->lock held. */
static void draw_bar(struct progress_view *v)
{
	char *bar = progress_text_bar(v->label, v->running, v->done, v->total,
				      now_seconds() - v->t0, v->last_end, term_width(v->out), &v->eta);

	fprintf(v->out, "\r\033[K%s", bar);
	fflush(v->out);
	free(bar);
	v->drawn = 1;
}

/* Called with v->lock held: the line is left empty for a message. */
static void clear_bar(struct progress_view *v)
{
	if (v->drawn)
		fputs("\r\033[K", v->out);
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

void progress_view_init(struct progress_view *v, FILE *out, int tty, const char *prefix)
{
	memset(v, 0, sizeof(*v));
	pthread_mutex_init(&v->lock, NULL);
	v->out = out;
	v->prefix = prefix;
	v->tty = tty;
	v->t0 = now_seconds();
}

void progress_view_release(struct progress_view *v)
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

void progress_view_run(struct progress_view *v, const char *label, unsigned run, unsigned done,
		       unsigned planned, double elapsed, int ended)
{
	if (!v->tty) {
		if (ended) {
			char *line = progress_text_line(label, run, planned, elapsed, &v->eta);
			fprintf(v->out, "%s%s\n", v->prefix, line);
			free(line);
		}
		return;
	}
	if (!v->ticking)
		start_ticker(v);
	pthread_mutex_lock(&v->lock);
	v->t0 = now_seconds() - elapsed;
	snprintf(v->label, sizeof(v->label), "%s", label ? label : "");
	v->done = done;
	v->total = planned;
	v->running = ended ? 0 : run;
	if (ended)
		v->last_end = elapsed;
	draw_bar(v);
	pthread_mutex_unlock(&v->lock);
}

void progress_view_message(struct progress_view *v, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&v->lock);
	clear_bar(v);
	fputs(v->prefix, v->out);
	va_start(ap, fmt);
	vfprintf(v->out, fmt, ap);
	va_end(ap);
	fputc('\n', v->out);
	if (v->tty && v->running)
		draw_bar(v);
	pthread_mutex_unlock(&v->lock);
}
