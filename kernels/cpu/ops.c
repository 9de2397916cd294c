// kernels/cpu/ops.c — the element-wise and per-row ops of the CPU backend:
// embedding, rmsnorm, rope, silu_mul, add, softmax, argmax. Rows are split
// over the backend's threads when there is enough work.
#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "kernels/cpu/cpu_internal.h"

// Threads to use for `elems` elements of work.
static int par_threads(backend *b, double elems) {
    return elems >= CPU_PAR_MIN_ELEMS ? cpu_of(b)->n_threads : 1;
}

void cpu_embedding(backend *b, float *out, const weight_matrix *table, const int32_t *ids,
                   int n) {
    const int dim = table->cols;
    const size_t rowbytes = dtype_row_bytes(table->type, dim);
    void (*conv)(float *, const void *, dtype, int) =
        cpu_of(b)->isa == CPU_ISA_AVX2 ? cpu_convert_row_avx2 : cpu_convert_row_scalar;
    const int nt = par_threads(b, (double)n * dim);
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int i = 0; i < n; i++) {
        assert(ids[i] >= 0 && ids[i] < table->rows);
        conv(out + (size_t)i * dim, (const char *)table->data + (size_t)ids[i] * rowbytes,
             table->type, dim);
    }
}

// As transformers' LlamaRMSNorm in float32: variance = mean(x^2);
// x * rsqrt(variance + eps), then * weight.
void cpu_rmsnorm(backend *b, float *out, const float *x, const float *weight, int n, int dim,
                 float eps) {
    const int nt = par_threads(b, (double)n * dim);
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int i = 0; i < n; i++) {
        const float *xi = x + (size_t)i * dim;
        float *oi = out + (size_t)i * dim;
        float p[8] = {0};  // 8 partial sums: vector-like order, smaller rounding error
        int j = 0;
        for (; j + 8 <= dim; j += 8)
            for (int l = 0; l < 8; l++) p[l] += xi[j + l] * xi[j + l];
        for (; j < dim; j++) p[j & 7] += xi[j] * xi[j];
        const float ss = ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]));
        const float inv = 1.0f / sqrtf(ss / (float)dim + eps);
        for (j = 0; j < dim; j++) oi[j] = weight[j] * (xi[j] * inv);
    }
}

// angle = (float)position * inv_freq[j] in float, cos/sin in float, as
// transformers computes them in float32.
void cpu_rope(backend *b, float *x, const int32_t *positions, int n_tokens, int n_heads,
              int head_dim, int rot_dim, int interleaved, const float *inv_freq) {
    const int half = rot_dim / 2;
    if (half <= 0 || n_tokens <= 0) return;
    const int nt = par_threads(b, (double)n_tokens * n_heads * rot_dim * 4);
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        float *cs = malloc((size_t)half * 2 * sizeof(float));
        if (!cs) abort();
        float *sn = cs + half;
#pragma omp for schedule(static)
        for (int t = 0; t < n_tokens; t++) {
            const float pos = (float)positions[t];
            for (int j = 0; j < half; j++) {
                const float a = pos * inv_freq[j];
                cs[j] = cosf(a);
                sn[j] = sinf(a);
            }
            for (int h = 0; h < n_heads; h++) {
                float *v = x + ((size_t)t * n_heads + h) * head_dim;
                for (int j = 0; j < half; j++) {
                    const int i0 = interleaved ? 2 * j : j;
                    const int i1 = interleaved ? 2 * j + 1 : j + half;
                    const float x0 = v[i0], x1 = v[i1];
                    const float a = x0 * cs[j], bb = x1 * sn[j];
                    const float c = x1 * cs[j], d = x0 * sn[j];
                    v[i0] = a - bb;
                    v[i1] = c + d;
                }
            }
        }
        free(cs);
    }
}

// out must not overlap gate_up.
void cpu_silu_mul(backend *b, float *out, const float *gate_up, int n, int dim) {
    const int nt = par_threads(b, (double)n * dim * 4);
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int i = 0; i < n; i++) {
        const float *g = gate_up + (size_t)i * 2 * dim;
        const float *u = g + dim;
        float *o = out + (size_t)i * dim;
        for (int j = 0; j < dim; j++) o[j] = g[j] / (1.0f + expf(-g[j])) * u[j];
    }
}

void cpu_add(backend *b, float *x, const float *y, size_t count) {
    const int nt = par_threads(b, (double)count / 4);
    const long long cnt = (long long)count;
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (long long i = 0; i < cnt; i++) x[i] += y[i];
}

void cpu_softmax(backend *b, float *x, int n, int dim) {
    const int nt = par_threads(b, (double)n * dim * 4);
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int i = 0; i < n; i++) {
        float *r = x + (size_t)i * dim;
        float m = -INFINITY;
        for (int j = 0; j < dim; j++) m = r[j] > m ? r[j] : m;
        float s = 0.0f;
        for (int j = 0; j < dim; j++) {
            r[j] = expf(r[j] - m);
            s += r[j];
        }
        for (int j = 0; j < dim; j++) r[j] /= s;
    }
}

void cpu_argmax(backend *b, int32_t *out, const float *x, int n, int dim) {
    const int nt = par_threads(b, (double)n * dim);
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int i = 0; i < n; i++) {
        const float *r = x + (size_t)i * dim;
        int best = 0;
        for (int j = 1; j < dim; j++)
            if (r[j] > r[best]) best = j;
        out[i] = best;
    }
}
