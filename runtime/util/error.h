// runtime/util/error.h — errors as values: a failing function fills an
// atoll_error with a message naming the file, tensor, parameter or limit
// involved and returns -1; callers pass it up unchanged or add context.
#ifndef ATOLL_UTIL_ERROR_H
#define ATOLL_UTIL_ERROR_H

typedef struct {
    char msg[1024];
} atoll_error;

// Formats the message into e (if e is not NULL) and returns -1.
int error_set(atoll_error *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
// Prefixes the existing message with more context ("loading X: ...") and returns -1.
int error_prefix(atoll_error *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
