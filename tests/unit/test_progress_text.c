/*
 * Unit tests of profile's progress text (emitters/progress_text.h): one
 * line a finished run with its own label, and the terminal bar with the
 * elapsed time and the ETA (issue 14).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emitters/progress_text.h"
#include "tests/unit/check.h"

#define CHECK_TEXT(expr, want)                                                 \
	do {                                                                   \
		char *t_ = (expr);                                             \
		CHECK_STR(t_, want);                                           \
		free(t_);                                                      \
	} while (0)

static void test_duration(void)
{
	CHECK_TEXT(progress_text_duration(0), "0 s");
	CHECK_TEXT(progress_text_duration(59.4), "59 s");
	CHECK_TEXT(progress_text_duration(65), "1:05");
	CHECK_TEXT(progress_text_duration(3723), "1:02:03");
	CHECK_TEXT(progress_text_duration(-1), "?");
	CHECK_TEXT(progress_text_duration(NAN), "?");
}

static void test_line(void)
{
	/* The run that ended, with its own label: 2 runs in 20 s, 13 left. */
	CHECK_TEXT(progress_text_line("baseline#2", 2, 15, 20, NULL),
		   "run 2/15 done (baseline#2), 20 s elapsed, ETA 2:10");
	CHECK_TEXT(progress_text_line("discovery run", 1, 0, 3, NULL),
		   "run 1 done (discovery run), 3 s elapsed");
	CHECK_TEXT(progress_text_line("oracle 3", 15, 15, 150, NULL),
		   "run 15/15 done (oracle 3), 2:30 elapsed, ETA 0 s");
}

static void test_bar(void)
{
	char *t;

	/* Before any run ended there is no ETA. */
	CHECK_TEXT(progress_text_bar("discovery run", 1, 0, 4, 2, 0, 80, NULL),
		   "[....................] run 1/4 discovery run  2 s elapsed");
	/* 2 of 4 done in 20 s; the third has run 4 s: 2 x 10 s - 4 s left. */
	CHECK_TEXT(progress_text_bar("baseline#2", 3, 2, 4, 24, 20, 80, NULL),
		   "[##########..........] run 3/4 baseline#2  24 s elapsed  ETA 16 s");
	/* A run longer than the mean: the ETA stops at 0, never negative. */
	CHECK_TEXT(progress_text_bar("x", 3, 2, 4, 80, 20, 80, NULL),
		   "[##########..........] run 3/4 x  1:20 elapsed  ETA 0 s");
	/* A long label is shortened to the width, the times kept. */
	t = progress_text_bar("single 12 of a kernel with a very long name indeed", 3, 2, 4, 24,
			      20, 60, NULL);
	CHECK(strlen(t) <= 60);
	CHECK(strstr(t, "...  24 s elapsed  ETA 16 s") != NULL);
	free(t);
	/* More done than planned (a batch re-sized late) stays full. */
	t = progress_text_bar("y", 0, 9, 4, 30, 30, 80, NULL);
	CHECK(strncmp(t, "[####################] 9/4 runs", 31) == 0);
	free(t);
}

/* Issue 39 item 5: the ETA never grows from one line to the next by more
 * than the runs the plan gained. A 1 s discovery run, then capture runs of
 * 10 s: the mean alone would jump from 3 s to 16 s with no run added. */
static void test_eta_held(void)
{
	struct progress_eta held = { 0 };

	/* 1 of 4 done in 1 s: 3 left at 1 s each */
	CHECK_TEXT(progress_text_line("discovery", 1, 4, 1, &held),
		   "run 1/4 done (discovery), 1 s elapsed, ETA 3 s");
	/* 2 of 4 in 11 s: the mean says 11 s, held to 3 s less the 10 s since: 0 */
	CHECK_TEXT(progress_text_line("capture", 2, 4, 11, &held),
		   "run 2/4 done (capture), 11 s elapsed, ETA 0 s");
	/* the plan gains 4 runs (a step learned): at most 4 runs of the mean 7 s more */
	CHECK_TEXT(progress_text_line("capture", 3, 8, 21, &held),
		   "run 3/8 done (capture), 21 s elapsed, ETA 28 s");
	/* a shorter estimate is shown as it is */
	CHECK_TEXT(progress_text_line("capture", 7, 8, 30, &held),
		   "run 7/8 done (capture), 30 s elapsed, ETA 4 s");
	/* without the held state the same line gives the mean's own figure */
	CHECK_TEXT(progress_text_line("capture", 2, 4, 11, NULL),
		   "run 2/4 done (capture), 11 s elapsed, ETA 11 s");
}

int main(void)
{
	test_duration();
	test_line();
	test_bar();
	test_eta_held();
	return check_done();
}
