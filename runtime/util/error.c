// runtime/util/error.c — formatting of error values (see error.h).
#include "runtime/util/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int error_set(atoll_error *e, const char *fmt, ...) {
    if (!e) return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return -1;
}

int error_prefix(atoll_error *e, const char *fmt, ...) {
    if (!e) return -1;
    char prefix[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    char old[sizeof e->msg];
    memcpy(old, e->msg, sizeof old);
    size_t n = strlen(prefix);
    memcpy(e->msg, prefix, n);
    memcpy(e->msg + n, ": ", 2);
    snprintf(e->msg + n + 2, sizeof e->msg - n - 2, "%s", old);
    return -1;
}
