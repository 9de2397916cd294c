// runtime/util/log.h — logging for SPMD ranks. Every line goes to stderr,
// starts with "[rank host]" and is flushed, so interleaved ranks stay
// readable. LOG_RANK0 prints on rank 0 only. fatal() is the one exit for
// device and communication faults: it logs and aborts the whole job.
#ifndef ATOLL_UTIL_LOG_H
#define ATOLL_UTIL_LOG_H

typedef enum {
    LOG_LEVEL_ERROR = 0,
    LOG_LEVEL_WARN = 1,
    LOG_LEVEL_INFO = 2,
    LOG_LEVEL_DEBUG = 3,
    LOG_LEVEL_COUNT
} log_level;

const char *log_level_name(log_level level);
// Sets the identity printed in each line (called once MPI is up).
void log_set_identity(int rank, const char *host);
void log_set_level(log_level level);
int log_rank(void);
void log_message(log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
_Noreturn void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define LOG_ERROR(...) log_message(LOG_LEVEL_ERROR, __VA_ARGS__)
#define LOG_WARN(...) log_message(LOG_LEVEL_WARN, __VA_ARGS__)
#define LOG_INFO(...) log_message(LOG_LEVEL_INFO, __VA_ARGS__)
#define LOG_DEBUG(...) log_message(LOG_LEVEL_DEBUG, __VA_ARGS__)
#define LOG_RANK0(level, ...) \
    do { if (log_rank() == 0) log_message(level, __VA_ARGS__); } while (0)

#endif
