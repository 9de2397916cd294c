// runtime/util/log.c — "[rank host]" prefixed, flushed log lines and fatal().
#include "runtime/util/log.h"

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int log_rank_id = 0;
static char log_host[64] = "?";
static log_level log_current_level = LOG_LEVEL_INFO;

static const char *const log_level_names[LOG_LEVEL_COUNT] = {
    [LOG_LEVEL_ERROR] = "error",
    [LOG_LEVEL_WARN] = "warning",
    [LOG_LEVEL_INFO] = "info",
    [LOG_LEVEL_DEBUG] = "debug",
};

const char *log_level_name(log_level level) {
    return level >= 0 && level < LOG_LEVEL_COUNT ? log_level_names[level] : "?";
}

void log_set_identity(int rank, const char *host) {
    log_rank_id = rank;
    snprintf(log_host, sizeof log_host, "%s", host);
}

void log_set_level(log_level level) { log_current_level = level; }

int log_rank(void) { return log_rank_id; }

static void log_vprint(log_level level, const char *fmt, va_list ap) {
    char line[4096];
    int n = snprintf(line, sizeof line, "[%d %s] ", log_rank_id, log_host);
    if (level <= LOG_LEVEL_WARN)
        n += snprintf(line + n, sizeof line - n, "%s: ", log_level_name(level));
    if (n < (int)sizeof line) vsnprintf(line + n, sizeof line - n, fmt, ap);
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
}

void log_message(log_level level, const char *fmt, ...) {
    if (level > log_current_level) return;
    va_list ap;
    va_start(ap, fmt);
    log_vprint(level, fmt, ap);
    va_end(ap);
}

void fatal(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    log_vprint(LOG_LEVEL_ERROR, fmt, ap);
    va_end(ap);
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized) {
        int size = 1;
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        if (size > 1) MPI_Abort(MPI_COMM_WORLD, 1);
    }
    exit(1);
}
