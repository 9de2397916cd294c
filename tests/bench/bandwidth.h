// tests/bench/bandwidth.h — STREAM-like memory bandwidth measurement and
// small statistics helpers shared by the benchmarks.
#ifndef ATOLL_TESTS_BENCH_BANDWIDTH_H
#define ATOLL_TESTS_BENCH_BANDWIDTH_H

#include <stddef.h>

// Read bandwidth in GB/s (1e9 bytes/s) with n_threads OpenMP threads (<= 0:
// all cores): the best of several passes of a sum over a 1 GiB buffer, each
// thread reading its own first-touched half. A read-only stream is what a
// decode GEMV does, so it is the right ceiling to compare against.
double bandwidth_measure_gbs(int n_threads);

// STREAM triad a[i] = b[i] + s*c[i] over 3 x 256 MiB, GB/s counted as STREAM
// does (3 arrays x 8 bytes per element, write-allocate traffic not counted).
double bandwidth_triad_gbs(int n_threads);

// Median of n values (the array is reordered). 0 when n == 0.
double median_of(double *v, size_t n);

// Monotonic wall-clock time in seconds.
double bench_now_s(void);

#endif
