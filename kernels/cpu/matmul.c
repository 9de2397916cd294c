// kernels/cpu/matmul.c — matmul dispatch (threads over output rows, choice of
// ISA kernel, the paths for quantized weights) and the portable scalar kernel.
//
// Weights by path:
//   F32/F16/BF16      the ISA's row kernel (matmul_avx2.c or the scalar one)
//   Q4_0/Q4_1/Q8_0    AVX2: x rounded to int16 blocks once per call, integer
//                     dot products (matmul_quant_avx2.c)
//   other quantized   AVX2: tiles of rows dequantized to F32 (dequant_avx2.c,
//                     the values of kernels/quant.c) into per-thread scratch,
//                     then the F32 kernel
//   any, scalar ISA   each row converted / dequantized to F32, then dotted
#include <omp.h>
#include <stdlib.h>

#include "kernels/cpu/cpu_internal.h"

// Each weight row is converted once into a scratch row, then dotted with
// every x row.
void cpu_matmul_rows_scalar(float *out, int ldc, const float *x, const weight_matrix *w,
                            const float *bias, int n, int r0, int r1) {
    const int K = w->cols;
    const size_t row_bytes = dtype_row_bytes(w->type, K);
    float *wr = malloc((size_t)(K > 0 ? K : 1) * sizeof(float));
    if (!wr) abort();
    for (int j = r0; j < r1; j++) {
        cpu_convert_row_scalar(wr, (const char *)w->data + (size_t)j * row_bytes, w->type, K);
        const float bj = bias ? bias[j] : 0.0f;
        for (int i = 0; i < n; i++) {
            const float *xi = x + (size_t)i * K;
            float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
            int k = 0;
            for (; k + 4 <= K; k += 4) {
                s0 += wr[k] * xi[k];
                s1 += wr[k + 1] * xi[k + 1];
                s2 += wr[k + 2] * xi[k + 2];
                s3 += wr[k + 3] * xi[k + 3];
            }
            for (; k < K; k++) s0 += wr[k] * xi[k];
            out[(size_t)i * ldc + j] = (s0 + s1) + (s2 + s3) + bj;
        }
    }
    free(wr);
}

// Rows of a dequantized tile: enough to reuse each x row over several weight
// rows, small enough to stay in L2 next to the x block.
#define DEQ_TILE_BYTES (64 * 1024)

static int deq_tile_rows(int K) {
    int r = DEQ_TILE_BYTES / (int)((size_t)(K > 0 ? K : 1) * sizeof(float));
    r -= r % 4;
    return r < 4 ? 4 : r > 64 ? 64 : r;
}

// AVX2 generic path for quantized types without an integer kernel: rows
// [r0, r1) are dequantized `tile` at a time into wt ([tile, K] F32) and run
// through the F32 kernel.
static void rows_dequant_avx2(float *out, int ldc, const float *x, const weight_matrix *w,
                              const float *bias, int n, int r0, int r1, float *wt, int tile) {
    const int K = w->cols;
    const size_t row_bytes = dtype_row_bytes(w->type, K);
    for (int j = r0; j < r1; j += tile) {
        const int rows = r1 - j < tile ? r1 - j : tile;
        for (int r = 0; r < rows; r++)
            cpu_dequantize_row_avx2(w->type, (const char *)w->data + (size_t)(j + r) * row_bytes,
                                    wt + (size_t)r * K, K);
        const weight_matrix t = {wt, DTYPE_F32, rows, K};
        cpu_matmul_rows_avx2(out + j, ldc, x, &t, bias ? bias + j : NULL, n, 0, rows);
    }
}

// Rows [r0, r1) of thread t of T: contiguous chunks of whole 8-row tiles.
static void thread_rows(int M, int t, int T, int *r0, int *r1) {
    const int tiles = (M + 7) / 8;
    const int t0 = (int)((long long)tiles * t / T), t1 = (int)((long long)tiles * (t + 1) / T);
    *r0 = t0 * 8;
    *r1 = t1 * 8 > M ? M : t1 * 8;
}

static size_t align64(size_t v) { return (v + 63) & ~(size_t)63; }

// Q4_0/Q4_1/Q8_0 on AVX2: x -> int16 blocks in the backend's scratch (in
// parallel when there are enough rows), then the integer kernel.
static void matmul_x16(cpu_impl *c, int nt, float *out, int ldc, const float *x,
                       const weight_matrix *w, const float *bias, int n) {
    const int K = w->cols, nb = K / 32, M = w->rows;
    const size_t qbytes = align64((size_t)n * K * sizeof(int16_t));
    const size_t fbytes = align64((size_t)n * nb * sizeof(float));
    char *buf = cpu_scratch(c, qbytes + 2 * fbytes);
    const cpu_x16 a = {(int16_t *)buf, (float *)(buf + qbytes), (float *)(buf + qbytes + fbytes), K, nb};
    const int par_quant = nt > 1 && n >= 2 * nt;
    if (!par_quant) cpu_quantize_x16_avx2(x, &a, 0, n);
    if (nt <= 1) {
        cpu_matmul_rows_x16_avx2(out, ldc, &a, w, bias, n, 0, M);
        return;
    }
#pragma omp parallel num_threads(nt)
    {
        const int t = omp_get_thread_num(), T = omp_get_num_threads();
        if (par_quant) {
            cpu_quantize_x16_avx2(x, &a, (int)((long long)n * t / T), (int)((long long)n * (t + 1) / T));
#pragma omp barrier
        }
        int r0, r1;
        thread_rows(M, t, T, &r0, &r1);
        if (r0 < r1) cpu_matmul_rows_x16_avx2(out, ldc, &a, w, bias, n, r0, r1);
    }
}

static void matmul_dequant(cpu_impl *c, int nt, float *out, int ldc, const float *x,
                           const weight_matrix *w, const float *bias, int n) {
    const int K = w->cols, M = w->rows, tile = deq_tile_rows(K);
    const size_t per_thread = align64((size_t)tile * K * sizeof(float));
    char *buf = cpu_scratch(c, per_thread * (size_t)nt);
    if (nt <= 1) {
        rows_dequant_avx2(out, ldc, x, w, bias, n, 0, M, (float *)buf, tile);
        return;
    }
#pragma omp parallel num_threads(nt)
    {
        const int t = omp_get_thread_num(), T = omp_get_num_threads();
        int r0, r1;
        thread_rows(M, t, T, &r0, &r1);
        if (r0 < r1)
            rows_dequant_avx2(out, ldc, x, w, bias, n, r0, r1, (float *)(buf + per_thread * t), tile);
    }
}

void cpu_matmul(backend *b, float *out, int ldc, const float *x, const weight_matrix *w,
                const float *bias, int n) {
    cpu_impl *c = cpu_of(b);
    const int M = w->rows;
    if (n <= 0 || M <= 0) return;

    // Threads split the output rows into contiguous chunks (multiples of 8 so
    // the SIMD row tiles stay whole); each weight row is read once overall.
    int nt = c->n_threads;
    const double work = (double)M * (double)(w->cols > 0 ? w->cols : 1) * n;
    if (work < CPU_PAR_MIN_ELEMS) nt = 1;
    if (nt > (M + 7) / 8) nt = (M + 7) / 8;
    if (nt < 1) nt = 1;

    if (c->isa == CPU_ISA_AVX2 && dtype_is_quantized(w->type)) {
        if (cpu_x16_kernel_supported(w->type)) matmul_x16(c, nt, out, ldc, x, w, bias, n);
        else matmul_dequant(c, nt, out, ldc, x, w, bias, n);
        return;
    }

    void (*kern)(float *, int, const float *, const weight_matrix *, const float *, int, int,
                 int) = c->isa == CPU_ISA_AVX2 ? cpu_matmul_rows_avx2 : cpu_matmul_rows_scalar;
    if (nt <= 1) {
        kern(out, ldc, x, w, bias, n, 0, M);
        return;
    }
#pragma omp parallel num_threads(nt)
    {
        int r0, r1;
        thread_rows(M, omp_get_thread_num(), omp_get_num_threads(), &r0, &r1);
        if (r0 < r1) kern(out, ldc, x, w, bias, n, r0, r1);
    }
}
