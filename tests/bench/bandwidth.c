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

// Four independent 32-byte vector accumulators (GCC vector extension) keep
// the loop far from its add latency and load limits, so memory, not the
// core, is the bottleneck. Built twice: with AVX2 (chosen at run time where
// the CPU has it; the SSE2 build is core-bound at ~2/3 of the bandwidth on
// Zen 3) and baseline.
typedef double v4d __attribute__((vector_size(32)));

#define SUM_BODY                                                        \
    v4d s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};                         \
    const v4d *v = (const v4d *)a;                                      \
    for (size_t i = 0; i + 4 <= n / 4; i += 4) {                        \
        s0 += v[i];                                                     \
        s1 += v[i + 1];                                                 \
        s2 += v[i + 2];                                                 \
        s3 += v[i + 3];                                                 \
    }                                                                   \
    const v4d s = (s0 + s1) + (s2 + s3);                                \
    return (s[0] + s[1]) + (s[2] + s[3]);

// a is 64-byte aligned and n % 16 == 0.
static double sum_range_base(const double *a, size_t n) { SUM_BODY }
#if defined(__x86_64__)
__attribute__((target("avx2"))) static double sum_range_avx2(const double *a, size_t n) {
    SUM_BODY
}
#endif

static double sum_range(const double *a, size_t n) {
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx2")) return sum_range_avx2(a, n);
#endif
    return sum_range_base(a, n);
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
            // Same split as the first touch, rounded to whole 128-byte groups.
            const size_t lo = (n / 16 * t / T) * 16, hi = (n / 16 * (t + 1) / T) * 16;
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
