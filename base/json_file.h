#ifndef CACHEADVISE_JSON_FILE_H
#define CACHEADVISE_JSON_FILE_H

#include <jansson.h>

/*
 * Reading and writing JSON documents (jansson) with this project's error
 * conventions.
 */

/*
 * Loads path ("-": standard input) through input_file_read(): a directory,
 * FIFO or device is refused as such, a file over INPUT_MAX_JSON (256 MiB) by
 * its size. On error returns NULL with the message set, naming the file,
 * line and column. The caller owns the returned reference (json_decref).
 */
json_t *json_file_load(const char *path);

/*
 * If expected_schema is given, checks that doc is an object whose "schema"
 * is that string; a newer version of the same family ("x/2" for "x/1") gets
 * a message saying the file comes from a newer cacheadvise. Returns 0 or
 * CA_E_INPUT with the message set (naming path).
 */
int json_check_schema(json_t *doc, const char *path, const char *expected_schema);

/* Writes doc (indented, keys in insertion order) to path atomically.
 * Returns 0 or CA_E_IO. Does not steal the reference. */
int json_file_write(const char *path, json_t *doc);

/* Dumps doc into a fresh heap string (caller frees). */
char *json_to_string(json_t *doc);

#endif
