// tests/bench/bench_matmul.c — CPU matmul throughput against measured memory
// bandwidth, for each weight dtype, the model's projection shapes and
// n in {1, 16, 128} rows of x.
//
// usage: bench_matmul [--threads N] [--reps R] [--dtype NAME]
//   NAME: f32 f16 bf16 q4_0 q4_1 q5_0 q5_1 q8_0 q4_k q5_k q6_k q8_k
//
// GB/s counts the weight bytes as stored (a Q4_1 matrix is 20/32 bytes per
// weight), so `frac` is the fraction of the measured read bandwidth the
// kernel reaches. Quantized weights are random blocks with small finite
// scales; shapes whose columns are not a multiple of the type's block size
// (K-quants: 256) are skipped.
//
// Weights are cold as in a real decode step (where the whole model streams
// from memory once per token): each shape is replicated into enough copies
// to exceed the last-level cache many times over, and successive calls walk
// through the copies. Reported figures are medians over R samples.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bandwidth.h"
#include "kernels/backend.h"
#include "kernels/cpu/backend_cpu.h"

#define COLD_BYTES ((size_t)384 << 20)   // total bytes of weight copies per shape
#define SAMPLE_BYTES ((size_t)64 << 20)  // weight bytes streamed per timing sample

static uint16_t f32_to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}

static uint16_t f32_to_f16(float f) {  // values here are small normal numbers
    uint32_t u;
    memcpy(&u, &f, 4);
    const uint32_t sign = (u >> 16) & 0x8000u;
    const int e = (int)((u >> 23) & 0xff) - 127 + 15;
    if (e <= 0) return (uint16_t)sign;
    return (uint16_t)(sign | ((uint32_t)e << 10) | ((u >> 13) & 0x3ffu));
}

static uint64_t xorshift(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

// Byte offsets of a block's f16 scale fields (-1: none), per quantized type.
static void scale_offsets(dtype t, int off[2]) {
    off[0] = off[1] = -1;
    switch (t) {
    case DTYPE_Q4_1: case DTYPE_Q5_1: case DTYPE_Q4_K: case DTYPE_Q5_K: off[1] = 2;  // fall through
    case DTYPE_Q4_0: case DTYPE_Q5_0: case DTYPE_Q8_0: off[0] = 0; break;
    case DTYPE_Q6_K: off[0] = 208; break;
    default: break;
    }
}

// n_blocks random blocks of a quantized type with small finite scales.
static void fill_quant(dtype t, uint8_t *p, size_t n_blocks, uint64_t *seed) {
    const size_t bb = dtype_block_bytes(t);
    int off[2];
    scale_offsets(t, off);
    for (size_t b = 0; b < n_blocks; b++, p += bb) {
        for (size_t k = 0; k < bb; k++) p[k] = (uint8_t)xorshift(seed);
        for (int f = 0; f < 2; f++)
            if (off[f] >= 0) {  // |scale| in [2^-12, 2^-8)
                const uint16_t h = (uint16_t)(((xorshift(seed) & 1) << 15) | ((3 + xorshift(seed) % 4) << 10) |
                                              (xorshift(seed) & 0x3ff));
                memcpy(p + off[f], &h, 2);
            }
        if (t == DTYPE_Q8_K) {
            const float d = 1e-3f;
            memcpy(p, &d, 4);
        }
    }
}

static float frand(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (float)((*s >> 40) & 0xffffff) / (float)0x1000000 * 2.0f - 1.0f;
}

int main(int argc, char **argv) {
    int threads = 0, reps = 15;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--dtype") && i + 1 < argc) only = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--threads N] [--reps R] [--dtype f32|f16|bf16|q4_0|q4_1|q5_0|"
                            "q5_1|q8_0|q4_k|q5_k|q6_k|q8_k]\n", argv[0]);
            return 2;
        }
    }
    if (reps < 1) reps = 1;
    backend *b = backend_cpu_create(threads);
    if (!b) return 1;
    threads = backend_cpu_threads(b);
    const double bw = bandwidth_measure_gbs(threads);
    const double triad = bandwidth_triad_gbs(threads);
    printf("cpu backend: isa=%s threads=%d\n", backend_cpu_isa(b), threads);
    printf("memory bandwidth (best of 7): read-sum %.2f GB/s, triad %.2f GB/s; "
           "frac below is vs read-sum\n\n", bw, triad);
    printf("%-5s %-12s %4s %10s %9s %8s %6s\n", "dtype", "shape", "n", "time_us", "GFLOP/s",
           "GB/s", "frac");

    static const int shapes[][2] = {{1536, 576}, {576, 1536}, {49152, 576}};
    static const int ns[] = {1, 16, 128};
    static const dtype types[] = {DTYPE_F32,  DTYPE_F16,  DTYPE_BF16, DTYPE_Q4_0,
                                  DTYPE_Q4_1, DTYPE_Q5_0, DTYPE_Q5_1, DTYPE_Q8_0,
                                  DTYPE_Q4_K, DTYPE_Q5_K, DTYPE_Q6_K, DTYPE_Q8_K};
    const size_t n_types = sizeof types / sizeof types[0];
    uint64_t seed = 0x9e3779b97f4a7c15ull;

    for (size_t ti = 0; ti < n_types; ti++) {
        for (size_t si = 0; si < 3; si++) {
            const dtype T = types[ti];
            if (only && strcmp(only, dtype_name(T))) continue;
            if (!only && ti >= 3 && T != DTYPE_Q4_0 && T != DTYPE_Q4_1 && T != DTYPE_Q8_0 &&
                T != DTYPE_Q4_K && T != DTYPE_Q6_K)
                continue;  // the rest with --dtype
            const int rows = shapes[si][0], cols = shapes[si][1];
            if (cols % dtype_block_elems(T)) {
                printf("%-5s %dx%d skipped: %d columns are not whole %d-element blocks\n", dtype_name(T),
                       rows, cols, cols, dtype_block_elems(T));
                continue;
            }
            const size_t elems = (size_t)rows * cols, bytes = (size_t)rows * dtype_row_bytes(T, cols);
            int copies = (int)((COLD_BYTES + bytes - 1) / bytes);
            if (copies < 2) copies = 2;
            char *wdata = b->ops->alloc(b, bytes * copies);
            float *x = malloc((size_t)128 * cols * sizeof(float));
            float *out = malloc((size_t)128 * rows * sizeof(float));
            if (!wdata || !x || !out) {
                fprintf(stderr, "out of memory\n");
                return 1;
            }
            if (dtype_is_quantized(T))
                fill_quant(T, (uint8_t *)wdata, bytes / dtype_block_bytes(T), &seed);
            for (size_t e = 0; e < elems && !dtype_is_quantized(T); e++) {
                const float v = frand(&seed) * 0.05f;
                if (T == DTYPE_F32) memcpy(wdata + e * 4, &v, 4);
                else {
                    const uint16_t h = T == DTYPE_F16 ? f32_to_f16(v) : f32_to_bf16(v);
                    memcpy(wdata + e * 2, &h, 2);
                }
            }
            for (int c = 1; c < copies; c++) memcpy(wdata + (size_t)c * bytes, wdata, bytes);
            for (size_t e = 0; e < (size_t)128 * cols; e++) x[e] = frand(&seed);

            for (size_t ni = 0; ni < 3; ni++) {
                const int n = ns[ni];
                int inner = (int)(SAMPLE_BYTES / bytes);
                if (inner < 1) inner = 1;
                if (n >= 16 && inner > 8) inner = 8;  // compute-bound: fewer calls suffice
                double *t = malloc((size_t)reps * sizeof(double));
                int cur = 0;
                for (int r = -1; r < reps; r++) {  // r = -1: warm-up
                    const double t0 = bench_now_s();
                    for (int k = 0; k < inner; k++) {
                        weight_matrix w = {wdata + (size_t)cur * bytes, T, rows, cols};
                        b->ops->matmul(b, out, rows, x, &w, NULL, n);
                        cur = (cur + 1) % copies;
                    }
                    const double dt = (bench_now_s() - t0) / inner;
                    if (r >= 0) t[r] = dt;
                }
                const double med = median_of(t, (size_t)reps);
                const double gflops = 2.0 * n * (double)elems / med * 1e-9;
                const double gbs = (double)bytes / med * 1e-9;
                char shape[32];
                snprintf(shape, sizeof shape, "%dx%d", rows, cols);
                printf("%-5s %-12s %4d %10.1f %9.2f %8.2f %6.2f\n", dtype_name(T), shape, n,
                       med * 1e6, gflops, gbs, gbs / bw);
                fflush(stdout);
                free(t);
            }
            b->ops->free(b, wdata);
            free(x);
            free(out);
        }
    }
    backend_destroy(b);
    return 0;
}
