#ifndef CACHEADVISE_JSON_STREAM_H
#define CACHEADVISE_JSON_STREAM_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "base/strbuf.h"

/*
 * A JSON document written as it is made, for documents too large to hold
 * as one jansson tree (issue 36: `inspect --json` of 10^6 loads held 4 GB).
 * The bytes are exactly those of json_to_string() (base/json_file.h:
 * indented by 2, keys in the order given) of the same tree, followed by a
 * newline, so a caller can switch to streaming without changing its
 * output. Containers are opened and closed here; leaves and small subtrees
 * are jansson values, dumped and released at once. Output goes to fp in
 * chunks of about JSON_STREAM_CHUNK bytes: what is held at any time is one
 * chunk and the value being added.
 *
 *     struct json_stream js;
 *     json_stream_init(&js, stdout);
 *     json_stream_begin_object(&js, NULL);
 *     json_stream_value(&js, "schema", json_string("x/1"));
 *     json_stream_begin_array(&js, "items");
 *     ... json_stream_value(&js, NULL, item) ...
 *     json_stream_end(&js);
 *     json_stream_end(&js);
 *     json_stream_finish(&js);         // then check ferror(fp)
 *
 * Write errors are the caller's to find (ferror, or atomic_file_commit).
 */

#define JSON_STREAM_CHUNK ((size_t)64 << 10)
#define JSON_STREAM_MAX_DEPTH 32

struct json_stream {
	FILE *fp;
	struct strbuf buf;          /* written, not yet passed to fp */
	size_t depth;               /* containers open */
	char close[JSON_STREAM_MAX_DEPTH];      /* '}' or ']' of each */
	unsigned char items[JSON_STREAM_MAX_DEPTH]; /* whether each has one yet */
	size_t peak;                /* the most bytes buf held (for tests) */
};

void json_stream_init(struct json_stream *js, FILE *fp);
/*
 * Opens an object or array: the document itself (key NULL, nothing open),
 * an element of the array open (key NULL) or a member of the object open
 * (key). Nesting beyond JSON_STREAM_MAX_DEPTH is a programming error
 * (abort).
 */
void json_stream_begin_object(struct json_stream *js, const char *key);
void json_stream_begin_array(struct json_stream *js, const char *key);
/* Closes the innermost object or array. */
void json_stream_end(struct json_stream *js);
/*
 * Adds value (stolen) as an element or a member, key as for begin. A NULL
 * value adds nothing, as json_object_set_new() and json_array_append_new()
 * add nothing (json_string() of text that is not UTF-8 is NULL).
 */
void json_stream_value(struct json_stream *js, const char *key, json_t *value);
/* Ends the document with a newline, passes the rest to fp, flushes it and
 * releases the buffer. */
void json_stream_finish(struct json_stream *js);

#endif
