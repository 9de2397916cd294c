// tests/bench/bandwidth.c — STREAM-like memory bandwidth (read-only sum and
// triad) and the median/timer helpers used by the benchmarks.
#include "bandwidth.h"

#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define READ_BYTES ((size_t)1 << 30)
#define TRIAD_BYTES ((size_t)256 << 20)
#define REPS 7

double bench_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double median_of(double *v, size_t n) {
    if (n == 0) return 0.0;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int resolve_threads(int n_threads) {
    return n_threads > 0 ? n_threads : omp_get_num_procs();
}

// Eight independent accumulators keep the loop far from its add latency so
// memory, not the core, is the limit.
static double sum_range(const double *a, size_t n) {
    double s[8] = {0};
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; l++) s[l] += a[i + l];
    for (; i < n; i++) s[0] += a[i];
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

volatile double bandwidth_sink;

double bandwidth_measure_gbs(int n_threads) {
    const int nt = resolve_threads(n_threads);
    const size_t n = READ_BYTES / sizeof(double);
    double *a = aligned_alloc(64, READ_BYTES);
    if (!a) return 0.0;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (size_t i = 0; i < n; i++) a[i] = (double)(i & 1023);
    double best = 0.0;
    for (int r = 0; r < REPS; r++) {
        double total = 0.0;
        const double t0 = bench_now_s();
#pragma omp parallel num_threads(nt) reduction(+ : total)
        {
            const int t = omp_get_thread_num(), T = omp_get_num_threads();
            const size_t lo = n * t / T, hi = n * (t + 1) / T;  // same split as first touch
            total += sum_range(a + lo, hi - lo);
        }
        const double dt = bench_now_s() - t0;
        bandwidth_sink = total;
        const double gbs = (double)READ_BYTES / dt * 1e-9;
        if (gbs > best) best = gbs;
    }
    free(a);
    return best;
}

double bandwidth_triad_gbs(int n_threads) {
    const int nt = resolve_threads(n_threads);
    const size_t n = TRIAD_BYTES / sizeof(double);
    double *a = aligned_alloc(64, TRIAD_BYTES), *b = aligned_alloc(64, TRIAD_BYTES),
           *c = aligned_alloc(64, TRIAD_BYTES);
    double best = 0.0;
    if (a && b && c) {
#pragma omp parallel for num_threads(nt) schedule(static)
        for (size_t i = 0; i < n; i++) {
            a[i] = 0.0;
            b[i] = 1.0;
            c[i] = 2.0;
        }
        for (int r = 0; r < REPS; r++) {
            const double s = 3.0, t0 = bench_now_s();
#pragma omp parallel for num_threads(nt) schedule(static)
            for (size_t i = 0; i < n; i++) a[i] = b[i] + s * c[i];
            const double dt = bench_now_s() - t0;
            const double gbs = 3.0 * (double)TRIAD_BYTES / dt * 1e-9;
            if (gbs > best) best = gbs;
        }
        bandwidth_sink = a[n / 2];
    }
    free(a);
    free(b);
    free(c);
    return best;
}
