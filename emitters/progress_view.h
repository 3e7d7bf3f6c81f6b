#ifndef CACHEADVISE_PROGRESS_VIEW_H
#define CACHEADVISE_PROGRESS_VIEW_H

/*
 * Progress (issue 14) drawn on a stream the command names (`profile`
 * passes stderr). On a terminal one line, redrawn in place twice a second
 * by a thread while a run is in flight, with the elapsed time and the ETA;
 * elsewhere (a log, CI) one line per finished run with its label. Messages
 * clear the bar, print, and let it be redrawn. The words are
 * emitters/progress_text.h's; every line starts with prefix.
 * NEEDSWORK: this draws on the stream the command gives it, a terminal
 * included, from emitters/ (STYLE.md keeps terminals to src/); it moved
 * here from src/cmd_profile.c to keep the commands thin (issue 37).
 */

#include <pthread.h>
#include <stdio.h>

#include "emitters/progress_text.h"

struct progress_view {
	pthread_mutex_t lock;
	pthread_t ticker;
	FILE *out;
	const char *prefix;          /* "cacheadvise profile: " */
	int tty, ticking, stop, drawn;
	char label[128];
	unsigned running, done, total;
	double t0;                   /* the start of the work on this clock */
	double last_end;             /* elapsed at the last run's end, 0 none */
	struct progress_eta eta;     /* what the ETA said last */
};

/* tty: out is a terminal that takes the redrawn bar. */
void progress_view_init(struct progress_view *v, FILE *out, int tty, const char *prefix);
/* Stops the ticker and clears the bar. */
void progress_view_release(struct progress_view *v);

/*
 * A run started (ended 0) or ended: run is its number from 1, done the runs
 * finished, planned the runs planned so far (0 unknown), elapsed the time
 * since the work began.
 */
void progress_view_run(struct progress_view *v, const char *label, unsigned run, unsigned done,
		       unsigned planned, double elapsed, int ended);

/* A message: prefix, the text and a newline, the bar redrawn after it. */
void progress_view_message(struct progress_view *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
