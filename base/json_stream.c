/* A JSON document written as it is made (base/json_stream.h). */
#include "base/json_stream.h"

#include <stdlib.h>
#include <string.h>

/* json_to_string()'s flags: the bytes must be the same. */
#define DUMP_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10) | \
		    JSON_ENCODE_ANY)

void json_stream_init(struct json_stream *js, FILE *fp)
{
	memset(js, 0, sizeof(*js));
	js->fp = fp;
	strbuf_init(&js->buf, JSON_STREAM_CHUNK + 4096);
}

static void spill(struct json_stream *js, int all)
{
	if (js->buf.len > js->peak)
		js->peak = js->buf.len;
	if (js->buf.len && (all || js->buf.len >= JSON_STREAM_CHUNK)) {
		fwrite(js->buf.buf, 1, js->buf.len, js->fp);
		strbuf_reset(&js->buf);
	}
}

static void indent(struct json_stream *js, size_t depth)
{
	strbuf_addch(&js->buf, '\n');
	strbuf_grow(&js->buf, depth * 2);
	while (depth--)
		strbuf_addstr(&js->buf, "  ");
}

/* Appends jansson's output at the current depth: every line after the
 * first indented by two spaces per open container (a dumped string holds
 * no raw newline, so each '\n' is one of the layout's). */
static int add_dumped(const char *p, size_t n, void *data)
{
	struct json_stream *js = data;
	const char *nl;

	while ((nl = memchr(p, '\n', n))) {
		strbuf_add(&js->buf, p, (size_t)(nl - p));
		indent(js, js->depth);
		n -= (size_t)(nl - p) + 1;
		p = nl + 1;
	}
	strbuf_add(&js->buf, p, n);
	return 0;
}

/* Appends v as jansson dumps it, with no copy of its own. */
static void add_dump(struct json_stream *js, json_t *v)
{
	if (json_dump_callback(v, add_dumped, js, DUMP_FLAGS))
		abort();    /* only an invalid json_t fails, and none can be built */
}

/* The separator, the indentation and the key before an element or member. */
static void add_prefix(struct json_stream *js, const char *key)
{
	if (js->depth) {
		if (js->items[js->depth - 1])
			strbuf_addch(&js->buf, ',');
		js->items[js->depth - 1] = 1;
		indent(js, js->depth);
	}
	if (key) {
		json_t *k = json_string(key);

		add_dump(js, k);
		json_decref(k);
		strbuf_addstr(&js->buf, ": ");
	}
}

static void begin(struct json_stream *js, const char *key, char open, char close)
{
	if (js->depth == JSON_STREAM_MAX_DEPTH)
		abort();
	add_prefix(js, key);
	strbuf_addch(&js->buf, open);
	js->close[js->depth] = close;
	js->items[js->depth] = 0;
	js->depth++;
}

void json_stream_begin_object(struct json_stream *js, const char *key)
{
	begin(js, key, '{', '}');
}

void json_stream_begin_array(struct json_stream *js, const char *key)
{
	begin(js, key, '[', ']');
}

void json_stream_end(struct json_stream *js)
{
	if (!js->depth)
		abort();
	js->depth--;
	if (js->items[js->depth])
		indent(js, js->depth);
	strbuf_addch(&js->buf, js->close[js->depth]);
	spill(js, 0);
}

void json_stream_value(struct json_stream *js, const char *key, json_t *value)
{
	if (!value)
		return;
	add_prefix(js, key);
	add_dump(js, value);
	json_decref(value);
	spill(js, 0);
}

void json_stream_finish(struct json_stream *js)
{
	strbuf_addch(&js->buf, '\n');
	spill(js, 1);
	fflush(js->fp);
	strbuf_release(&js->buf);
}
