#ifndef CACHEADVISE_PROGRESS_TEXT_H
#define CACHEADVISE_PROGRESS_TEXT_H

/*
 * The progress of `profile` as text, for src/cmd_profile.c to print: pure
 * formatting, no terminal or clock access (the caller passes the times),
 * so the words are unit-tested (tests/unit/test_progress_text.c).
 *
 * Runs are numbered from 1; done is how many have finished; total is the
 * runs planned so far (0 unknown: the batch is not sized yet).
 */

/* Seconds for people: "7 s", "1:05", "1:02:03"; "?" when negative or NAN. Caller frees. */
char *progress_text_duration(double seconds);

/*
 * What the ETA has said so far, so that it never grows from one line to
 * the next by more than the runs the plan gained (issue 39 item 5): zero
 * it before the first line; NULL where lines are drawn alone.
 */
struct progress_eta {
	int shown;                  /* a figure was shown */
	double seconds, at;         /* the last figure, and when (seconds since profile began) */
	unsigned total;             /* the runs planned then */
};

/*
 * The log line of a run that ended, one a run:
 * "run 2/15 done (baseline#2), 14 s elapsed, ETA 1:30"; without a total,
 * "run 2 done (baseline#2), 14 s elapsed". elapsed is the time since
 * profile began, at the run's end. The ETA is the mean time of the
 * finished runs times the runs left, held by eta (when given) to at most
 * the last figure less the time since, plus the mean time of each run the
 * plan gained since. Caller frees.
 */
char *progress_text_line(const char *label, unsigned done, unsigned total, double elapsed,
			 struct progress_eta *eta);

/*
 * The single-line bar of a terminal, redrawn while a run is in flight:
 * "[#######.............] run 3/15 baseline#2  0:12 elapsed  ETA 1:20",
 * at most width columns (the label is shortened to fit). running is the
 * number of the run in flight (0: none), now the time since profile began,
 * last_end the time the last run ended (0 none). The ETA is the mean time
 * of the finished runs times the runs left, less the time the current run
 * has already taken, held by eta as in progress_text_line; none is shown
 * before a run has finished. Caller frees.
 */
char *progress_text_bar(const char *label, unsigned running, unsigned done, unsigned total,
			double now, double last_end, unsigned width, struct progress_eta *eta);

#endif
