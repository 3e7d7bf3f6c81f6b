#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char last_message[4096];

int error_set(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_message, sizeof(last_message), fmt, ap);
	va_end(ap);
	return code;
}

int error_prefix(int code, const char *fmt, ...)
{
	char prefix[1024], old[sizeof(last_message)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, last_message, sizeof(old));
	/* Truncation is acceptable: the message is for people. */
	last_message[0] = '\0';
	strncat(last_message, prefix, sizeof(last_message) - 1);
	strncat(last_message, ": ", sizeof(last_message) - 1 - strlen(last_message));
	strncat(last_message, old, sizeof(last_message) - 1 - strlen(last_message));
	return code;
}

const char *error_message(void)
{
	return last_message;
}

void error_clear(void)
{
	last_message[0] = '\0';
}

int error_exit_status(int code)
{
	switch (code) {
	case CA_OK: return 0;
	case CA_E_USAGE: return 1;
	case CA_E_PROGRAM: return 3;
	case CA_E_NOGPU: return 4;
	case CA_E_INTERRUPTED: return 130;
	default: return 2;
	}
}
