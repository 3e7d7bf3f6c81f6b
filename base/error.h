#ifndef CACHEADVISE_ERROR_H
#define CACHEADVISE_ERROR_H

/*
 * Error codes and the last error message.
 *
 * Library code (everything outside src/) returns 0 or one of the negative
 * codes below and never prints. Where it fails it records a message with
 * error_set(), which names the subject first ("cannot read fatbin in 'a.out':
 * PTX entry is truncated"), starts lowercase and has no trailing period.
 * src/ prints error_message() and exits with error_exit_status(code).
 * The message is thread-local.
 */
enum ca_error {
	CA_OK = 0,
	CA_E_USAGE = -1,    /* bad command line: exit 1 */
	CA_E_INPUT = -2,    /* unreadable or invalid input: exit 2 */
	CA_E_PROGRAM = -3,  /* the target program failed or timed out: exit 3 */
	CA_E_NOGPU = -4,    /* no usable GPU or profiling not permitted: exit 4 */
	CA_E_IO = -5,       /* cannot write output: exit 2 */
	CA_E_INTERRUPTED = -6, /* stopped by a signal: exit 130 */
	CA_E_INTERNAL = -7, /* a bug or an unexpected library failure: exit 2 */
};

/* Records the message and returns code, so callers can `return error_set(...)`. */
int error_set(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prefixes the current message with "<prefix>: " and returns code. */
int error_prefix(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The last message recorded in this thread ("" when none). */
const char *error_message(void);
void error_clear(void);
/* Exit status for an error code (0 for CA_OK). */
int error_exit_status(int code);

#endif
