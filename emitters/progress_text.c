#include "emitters/progress_text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/xalloc.h"

char *progress_text_duration(double seconds)
{
	long s;

	if (isnan(seconds) || seconds < 0)
		return xstrdup("?");
	s = lround(seconds);
	if (s < 60)
		return xasprintf("%ld s", s);
	if (s < 3600)
		return xasprintf("%ld:%02ld", s / 60, s % 60);
	return xasprintf("%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
}

/* Seconds left: the finished runs' mean time for each run left, less what
 * the run in flight has taken, held by held (progress_eta); NAN before a
 * run has finished. */
static double eta(unsigned done, unsigned total, double last_end, double now, int running,
		  struct progress_eta *held)
{
	double left, mean, most;

	if (!done || !total || last_end <= 0)
		return NAN;
	mean = last_end / done;
	left = mean * (total > done ? total - done : 0);
	if (running)
		left -= now - last_end;
	if (left < 0)
		left = 0;
	if (!held)
		return left;
	if (held->shown) {
		most = held->seconds - (now - held->at);
		if (most < 0)
			most = 0;
		if (total > held->total)
			most += mean * (total - held->total);
		if (left > most)
			left = most;
	}
	*held = (struct progress_eta){ 1, left, now, total };
	return left;
}

char *progress_text_line(const char *label, unsigned done, unsigned total, double elapsed,
			 struct progress_eta *held)
{
	char *el = progress_text_duration(elapsed), *ret;

	if (total >= done && total) {
		char *e = progress_text_duration(eta(done, total, elapsed, elapsed, 0, held));
		ret = xasprintf("run %u/%u done (%s), %s elapsed, ETA %s", done, total,
				label ? label : "?", el, e);
		free(e);
	} else {
		ret = xasprintf("run %u done (%s), %s elapsed", done, label ? label : "?", el);
	}
	free(el);
	return ret;
}

char *progress_text_bar(const char *label, unsigned running, unsigned done, unsigned total,
			double now, double last_end, unsigned width, struct progress_eta *held)
{
	struct strbuf sb = STRBUF_INIT;
	char *el = progress_text_duration(now), *tail;
	double left = eta(done, total, last_end, now, running != 0, held);
	unsigned cells = 20, filled = total ? (unsigned)((double)cells * done / total) : 0, i;
	size_t room;

	if (filled > cells)
		filled = cells;
	strbuf_addch(&sb, '[');
	for (i = 0; i < cells; i++)
		strbuf_addch(&sb, i < filled ? '#' : '.');
	strbuf_addstr(&sb, "] ");
	if (running && total)
		strbuf_addf(&sb, "run %u/%u ", running, total);
	else if (running)
		strbuf_addf(&sb, "run %u ", running);
	else
		strbuf_addf(&sb, "%u/%u runs ", done, total);
	if (isnan(left)) {
		tail = xasprintf("  %s elapsed", el);
	} else {
		char *e = progress_text_duration(left);
		tail = xasprintf("  %s elapsed  ETA %s", el, e);
		free(e);
	}
	/* The label gets what the width leaves, shortened with "..." at its end. */
	room = width > sb.len + strlen(tail) ? width - sb.len - strlen(tail) : 0;
	if (label && room) {
		size_t n = strlen(label);
		if (n <= room)
			strbuf_addstr(&sb, label);
		else if (room > 3)
			strbuf_addf(&sb, "%.*s...", (int)(room - 3), label);
	}
	strbuf_addstr(&sb, tail);
	if (sb.len > width && width)
		strbuf_setlen(&sb, width);
	free(el);
	free(tail);
	return strbuf_detach(&sb, NULL);
}
