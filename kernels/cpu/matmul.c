// kernels/cpu/matmul.c — matmul dispatch (threads over output rows, choice of
// ISA kernel) and the portable scalar kernel.
#include <omp.h>
#include <stdlib.h>

#include "kernels/cpu/cpu_internal.h"

// Each weight row is converted once into a scratch row, then dotted with
// every x row.
void cpu_matmul_rows_scalar(float *out, int ldc, const float *x, const weight_matrix *w,
                            const float *bias, int n, int r0, int r1) {
    const int K = w->cols;
    const size_t esz = dtype_size(w->type);
    float *wr = malloc((size_t)(K > 0 ? K : 1) * sizeof(float));
    if (!wr) abort();
    for (int j = r0; j < r1; j++) {
        cpu_convert_row_scalar(wr, (const char *)w->data + (size_t)j * K * esz, w->type, K);
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

void cpu_matmul(backend *b, float *out, int ldc, const float *x, const weight_matrix *w,
                const float *bias, int n) {
    const cpu_impl *c = cpu_of(b);
    const int M = w->rows;
    if (n <= 0 || M <= 0) return;
    void (*kern)(float *, int, const float *, const weight_matrix *, const float *, int, int,
                 int) = c->isa == CPU_ISA_AVX2 ? cpu_matmul_rows_avx2 : cpu_matmul_rows_scalar;

    // Threads split the output rows into contiguous chunks (multiples of 8 so
    // the SIMD row tiles stay whole); each weight row is read once overall.
    int nt = c->n_threads;
    const double work = (double)M * (double)(w->cols > 0 ? w->cols : 1) * n;
    if (work < CPU_PAR_MIN_ELEMS) nt = 1;
    if (nt > (M + 7) / 8) nt = (M + 7) / 8;
    if (nt <= 1) {
        kern(out, ldc, x, w, bias, n, 0, M);
        return;
    }
#pragma omp parallel num_threads(nt)
    {
        const int t = omp_get_thread_num(), T = omp_get_num_threads();
        const int tiles = (M + 7) / 8;
        const int t0 = (int)((long long)tiles * t / T), t1 = (int)((long long)tiles * (t + 1) / T);
        int r0 = t0 * 8, r1 = t1 * 8;
        if (r1 > M) r1 = M;
        if (r0 < r1) kern(out, ldc, x, w, bias, n, r0, r1);
    }
}
