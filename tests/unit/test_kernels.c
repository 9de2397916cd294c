// tests/unit/test_kernels.c — every CPU backend op against a plain scalar
// reference written here (double accumulation), on random inputs with odd
// sizes, for 1 and 2 threads and for both the SIMD and the scalar kernels
// (ATOLL_CPU_ISA is set before each backend_cpu_create). Prints each failure;
// the exit code is the verdict (0: all passed, 1: some failed).
//
// Tolerances are relative to the magnitude of what was summed, with the
// reason next to each; a genuine indexing/layout bug moves results by orders
// of magnitude more than any tolerance here.
//
// Quantized weights (Q4_0 ... Q8_K) are random blocks with finite scales;
// their reference values come from kernels/quant.c's dequantize_row, which
// tests/gguf checks bit for bit against the gguf Python package.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/cpu/backend_cpu.h"
#include "kernels/quant.h"

static int g_failures = 0;
static char g_ctx[64];
static int g_case_fail;  // failures printed in the current case (printing is capped)

#define FAIL(...)                                                          \
    do {                                                                   \
        g_failures++;                                                      \
        if (g_case_fail++ < 5) {                                           \
            fprintf(stderr, "FAIL [%s] %s:%d: ", g_ctx, __func__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
        }                                                                  \
    } while (0)

// ---------------------------------------------------------------- helpers --
static uint64_t g_rng = 0x243f6a8885a308d3ull;
static uint64_t rnd_u64(void) {
    g_rng ^= g_rng >> 12;
    g_rng ^= g_rng << 25;
    g_rng ^= g_rng >> 27;
    return g_rng * 0x2545f4914f6cdd1dull;
}
static float rnd_f(float lo, float hi) {
    return lo + (hi - lo) * (float)((rnd_u64() >> 40) * (1.0 / 16777216.0));
}
static int rnd_int(int n) { return (int)(rnd_u64() % (uint64_t)n); }
static void shuffle_int(int *a, int n) {
    for (int i = n - 1; i > 0; i--) {
        int j = rnd_int(i + 1), t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}
static float *rnd_vec(size_t n, float lo, float hi) {
    float *v = malloc((n ? n : 1) * sizeof(float));
    for (size_t i = 0; i < n; i++) v[i] = rnd_f(lo, hi);
    return v;
}

// Reference half -> value, written independently of the library's.
static double ref_f16(uint16_t h) {
    const int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v;
    if (e == 0) v = ldexp((double)m, -24);
    else if (e == 31) v = m ? NAN : INFINITY;
    else v = ldexp((double)(1024 + m), e - 25);
    return s ? -v : v;
}
static double ref_bf16(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
// Random finite F16: all exponents 0..15 (subnormals included), |v| < 2.
static uint16_t rnd_f16(void) {
    return (uint16_t)((rnd_int(2) << 15) | (rnd_int(16) << 10) | rnd_int(1024));
}
// Random BF16 with |v| in about [2^-20, 2).
static uint16_t rnd_bf16(void) {
    return (uint16_t)((rnd_int(2) << 15) | ((107 + rnd_int(21)) << 7) | rnd_int(128));
}

// A random weight matrix in `type` and its exact values as doubles.
static void *make_weights(dtype t, int rows, int cols, double **ref) {
    const size_t n = (size_t)rows * cols;
    void *data = malloc(n * (t == DTYPE_F32 ? 4 : 2) + 1);
    *ref = malloc((n + 1) * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        if (t == DTYPE_F32) {
            float f = rnd_f(-1, 1);
            ((float *)data)[i] = f;
            (*ref)[i] = f;
        } else if (t == DTYPE_F16) {
            uint16_t h = rnd_f16();
            ((uint16_t *)data)[i] = h;
            (*ref)[i] = ref_f16(h);
        } else {
            uint16_t h = rnd_bf16();
            ((uint16_t *)data)[i] = h;
            (*ref)[i] = ref_bf16(h);
        }
    }
    return data;
}

static const dtype k_types[] = {DTYPE_F32, DTYPE_F16, DTYPE_BF16};
static const dtype k_qtypes[] = {DTYPE_Q4_0, DTYPE_Q4_1, DTYPE_Q5_0, DTYPE_Q5_1, DTYPE_Q8_0,
                                 DTYPE_Q4_K, DTYPE_Q5_K, DTYPE_Q6_K, DTYPE_Q8_K};
#define N_QTYPES ((int)(sizeof k_qtypes / sizeof k_qtypes[0]))

// Random finite F16 scale: |d| in [2^-10, 2).
static uint16_t rnd_scale16(void) {
    return (uint16_t)((rnd_int(2) << 15) | ((5 + rnd_int(11)) << 10) | rnd_int(1024));
}

// A random [rows, cols] matrix of quantized type t (cols a multiple of the
// block size): random bytes with the scale fields set to finite values, and
// its values (dequantize_row) as doubles.
static void *make_qweights(dtype t, int rows, int cols, double **ref) {
    const size_t row_bytes = dtype_row_bytes(t, cols), bb = dtype_block_bytes(t);
    const size_t n_blocks = (size_t)rows * row_bytes / bb;
    uint8_t *data = malloc(rows * row_bytes + 1);
    for (size_t i = 0; i < rows * row_bytes; i++) data[i] = (uint8_t)rnd_int(256);
    for (size_t b = 0; b < n_blocks; b++) {
        uint8_t *blk = data + b * bb;
        uint16_t h[2] = {rnd_scale16(), rnd_scale16()};
        switch (t) {
        case DTYPE_Q4_1: case DTYPE_Q5_1: case DTYPE_Q4_K: case DTYPE_Q5_K:
            memcpy(blk, h, 4);  // d and m / dmin
            break;
        case DTYPE_Q6_K: memcpy(blk + 208, h, 2); break;
        case DTYPE_Q8_K: { const float d = rnd_f(-0.01f, 0.01f); memcpy(blk, &d, 4); break; }
        default: memcpy(blk, h, 2); break;
        }
    }
    *ref = malloc(((size_t)rows * cols + 1) * sizeof(double));
    float *row = malloc((size_t)cols * sizeof(float));
    for (int r = 0; r < rows; r++) {
        dequantize_row(t, data + r * row_bytes, row, cols);
        for (int k = 0; k < cols; k++) (*ref)[(size_t)r * cols + k] = row[k];
    }
    free(row);
    return data;
}

// 1 if the AVX2 kernels round x to int16 blocks for weights of type t
// (kernels/cpu/matmul_quant_avx2.c).
static int rounds_x(dtype t) { return t == DTYPE_Q4_0 || t == DTYPE_Q4_1 || t == DTYPE_Q8_0; }
static int g_isa_avx2;  // the backend under test chose AVX2

// ---------------------------------------------------------------- memory ----
static void test_memory(backend *b) {
    g_case_fail = 0;
    const backend_ops *o = b->ops;
    if (!o->name || !o->alloc || !o->free || !o->copy_to_device || !o->copy_to_host ||
        !o->synchronize || !o->free_memory || !o->embedding || !o->rmsnorm || !o->rope ||
        !o->matmul || !o->silu_mul || !o->add || !o->kv_store || !o->attention ||
        !o->softmax || !o->argmax)
        FAIL("ops table has NULL entries");
    for (size_t sz = 1; sz < 100000; sz = sz * 7 + 3) {
        char *p = o->alloc(b, sz);
        if (!p || ((uintptr_t)p & 63)) FAIL("alloc(%zu) = %p, not 64-byte aligned", sz, (void *)p);
        char *h = malloc(sz), *h2 = malloc(sz);
        for (size_t i = 0; i < sz; i++) h[i] = (char)rnd_int(256);
        o->copy_to_device(b, p, h, sz);
        o->synchronize(b);
        o->copy_to_host(b, h2, p, sz);
        if (memcmp(h, h2, sz)) FAIL("copy round trip of %zu bytes differs", sz);
        free(h);
        free(h2);
        o->free(b, p);
    }
    if (o->free_memory(b) == 0) FAIL("free_memory is 0");
    int x = 0;
    if (o->view_host && o->view_host(b, &x, sizeof x) != &x) FAIL("view_host is not the host pointer");
    if (strcmp(dtype_name(DTYPE_BF16), "bf16") || dtype_size(DTYPE_F32) != 4 ||
        dtype_size(DTYPE_F16) != 2 || dtype_size(DTYPE_BF16) != 2)
        FAIL("dtype_name/dtype_size");
    // Block geometry as ggml-common.h (bytes per block of 32 or 256).
    static const struct { dtype t; int elems; size_t bytes; } geo[] = {
        {DTYPE_F32, 1, 4},      {DTYPE_F16, 1, 2},      {DTYPE_BF16, 1, 2},
        {DTYPE_Q4_0, 32, 18},   {DTYPE_Q4_1, 32, 20},   {DTYPE_Q5_0, 32, 22},
        {DTYPE_Q5_1, 32, 24},   {DTYPE_Q8_0, 32, 34},   {DTYPE_Q4_K, 256, 144},
        {DTYPE_Q5_K, 256, 176}, {DTYPE_Q6_K, 256, 210}, {DTYPE_Q8_K, 256, 292},
    };
    for (size_t i = 0; i < sizeof geo / sizeof geo[0]; i++) {
        const dtype t = geo[i].t;
        if (dtype_block_elems(t) != geo[i].elems || dtype_block_bytes(t) != geo[i].bytes ||
            dtype_row_bytes(t, 4 * geo[i].elems) != 4 * geo[i].bytes ||
            dtype_is_quantized(t) != (geo[i].elems > 1) ||
            dtype_size(t) != (geo[i].elems > 1 ? 0 : geo[i].bytes) ||
            (geo[i].elems > 1 && dtype_row_bytes(t, geo[i].elems + 1) != 0))
            FAIL("block geometry of %s", dtype_name(t));
    }
    if (dtype_block_elems(DTYPE_COUNT) != 0 || dtype_row_bytes(DTYPE_COUNT, 32) != 0 ||
        strcmp(dtype_name(DTYPE_COUNT), "unknown"))
        FAIL("DTYPE_COUNT is not an invalid dtype");
}

// ---------------------------------------------------------------- matmul ----
static void check_matmul(backend *b, dtype t, int rows, int cols, int n, int with_bias) {
    g_case_fail = 0;
    double *wref;
    void *wdata = dtype_is_quantized(t) ? make_qweights(t, rows, cols, &wref)
                                        : make_weights(t, rows, cols, &wref);
    float *x = rnd_vec((size_t)n * cols, -1, 1);
    // Some x blocks far larger than the rest, as real activations have
    // outlier channels: the int16 rounding of x scales with each block's max.
    if (dtype_is_quantized(t))
        for (int i = 0; i < n; i++)
            if (cols >= 32 && rnd_int(2)) x[(size_t)i * cols + rnd_int(cols)] *= 50.0f;
    const int x16 = g_isa_avx2 && rounds_x(t);
    float *bias = with_bias ? rnd_vec(rows, -1, 1) : NULL;
    const int ldc = rows + 3;
    const float sentinel = 12345.0f;
    float *out = malloc((size_t)n * ldc * sizeof(float));
    for (size_t i = 0; i < (size_t)n * ldc; i++) out[i] = sentinel;
    weight_matrix w = {wdata, t, rows, cols};
    b->ops->matmul(b, out, ldc, x, &w, bias, n);
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < rows; j++) {
            double ref = bias ? bias[j] : 0.0, mag = bias ? fabs(bias[j]) : 0.0, xerr = 0.0;
            for (int k = 0; k < cols; k++) {
                const double wk = wref[(size_t)j * cols + k], xk = x[(size_t)i * cols + k];
                ref += wk * xk;
                mag += fabs(wk * xk);
                if (x16 && k % 32 == 0) {
                    // Rounding x to int16 blocks: x ~= dx * p with dx =
                    // max|x of the block| / 32767 and |x*32767/max - p| <=
                    // 1/2, so |x - dx p| <= dx/2 (+ 3 float roundings of x
                    // itself in dx, 1/dx and x/dx); the integer dot products
                    // are exact. Summed over the row: sum |w_k| * that.
                    double amax = 0;
                    for (int l = 0; l < 32; l++) amax = fmax(amax, fabs(x[(size_t)i * cols + k + l]));
                    for (int l = 0; l < 32; l++)
                        xerr += fabs(wref[(size_t)j * cols + k + l]) *
                                (0.5 * amax / 32767.0 * (1 + 1e-6) +
                                 3 * 0x1p-24 * fabs(x[(size_t)i * cols + k + l]));
                }
            }
            // F32 accumulation of `cols` products: rounding error grows like
            // sqrt(cols)*2^-24*sum|w*x| (worst case cols*2^-24*sum|w*x|, split
            // over 8 SIMD lanes); 1e-5 of sum|w*x| covers cols <= 1537 with
            // margin, while one wrong term moves the result by ~sum/cols.
            // Quantized weights are dequantized exactly (F32 paths) or used
            // as exact integers times their float scales (int16 path), so
            // the same bound holds, plus the rounding of x (xerr) on the
            // int16 path.
            const double tol = 1e-5 * mag + xerr + 1e-30;
            const float got = out[(size_t)i * ldc + j];
            if (!(fabs(got - ref) <= tol))
                FAIL("matmul %s %dx%d n=%d bias=%d out[%d,%d]=%.9g ref=%.9g tol=%.3g",
                     dtype_name(t), rows, cols, n, with_bias, i, j, got, ref, tol);
        }
        for (int j = rows; j < ldc; j++)
            if (out[(size_t)i * ldc + j] != sentinel)
                FAIL("matmul %s %dx%d n=%d wrote past w->rows at [%d,%d]", dtype_name(t), rows,
                     cols, n, i, j);
    }
    free(wdata);
    free(wref);
    free(x);
    free(bias);
    free(out);
}

static void test_matmul(backend *b) {
    static const int rows_[] = {1, 3, 65};
    static const int cols_[] = {1, 7, 37, 129, 577};
    static const int ns[] = {1, 2, 3, 4, 5, 9};
    for (int ti = 0; ti < 3; ti++)
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 5; c++)
                for (int ni = 0; ni < 6; ni++)
                    check_matmul(b, k_types[ti], rows_[r], cols_[c], ns[ni], (r + c + ni) & 1);
    // Larger: several x blocks, thread split, row and column remainders.
    for (int ti = 0; ti < 3; ti++) {
        check_matmul(b, k_types[ti], 67, 1537, 50, 1);
        check_matmul(b, k_types[ti], 131, 600, 130, 0);
        check_matmul(b, k_types[ti], 517, 64, 7, 1);
    }
    // Quantized: whole blocks per row (32 or 256 columns each), odd row
    // counts (thread split and row-tile remainders), decode and prefill n.
    for (int ti = 0; ti < N_QTYPES; ti++) {
        const dtype t = k_qtypes[ti];
        const int be = dtype_block_elems(t);
        const int cols_[] = {be, 2 * be, 3 * be, be == 32 ? 576 : 1536};
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 4; c++)
                for (int ni = 0; ni < 6; ni++)
                    if (!(be == 256 && c == 3 && r == 2 && ni > 2))  // keep the run short
                        check_matmul(b, t, rows_[r], cols_[c], ns[ni], (r + c + ni) & 1);
        check_matmul(b, t, 67, be == 32 ? 1536 : 1536, 50, 1);
        check_matmul(b, t, 131, be == 32 ? 576 : 768, 130, 0);
        check_matmul(b, t, 517, be, 7, 1);
    }
}

// ------------------------------------------------------------- embedding ----
static void check_embedding(backend *b, dtype t, int rows, int cols, int all_patterns) {
    g_case_fail = 0;
    double *ref;
    void *data = dtype_is_quantized(t) ? make_qweights(t, rows, cols, &ref) : make_weights(t, rows, cols, &ref);
    if (all_patterns) {  // every 16-bit pattern once: subnormals, +-0, inf, nan
        for (int i = 0; i < rows * cols; i++) {
            ((uint16_t *)data)[i] = (uint16_t)i;
            ref[i] = t == DTYPE_F16 ? ref_f16((uint16_t)i) : ref_bf16((uint16_t)i);
        }
    }
    const int n = rows + 5;
    int32_t *ids = malloc(n * sizeof(int32_t));
    for (int i = 0; i < n; i++) ids[i] = i < rows ? i : rnd_int(rows);
    shuffle_int(ids, n);
    float *out = malloc((size_t)n * cols * sizeof(float));
    weight_matrix w = {data, t, rows, cols};
    b->ops->embedding(b, out, &w, ids, n);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < cols; k++) {
            const double r = ref[(size_t)ids[i] * cols + k];
            const float g = out[(size_t)i * cols + k];
            // Conversion to F32 is exact for all three plain dtypes; quantized
            // rows must be dequantize_row's values bit for bit.
            const int ok = isnan(r) ? isnan(g) : (g == r && !signbit(g) == !signbit(r));
            if (!ok)
                FAIL("embedding %s [%dx%d] row %d col %d: got %.9g want %.9g", dtype_name(t),
                     rows, cols, ids[i], k, g, r);
        }
    free(data);
    free(ref);
    free(ids);
    free(out);
}

static void test_embedding(backend *b) {
    for (int ti = 0; ti < 3; ti++) {
        check_embedding(b, k_types[ti], 11, 37, 0);
        check_embedding(b, k_types[ti], 3, 1, 0);
        check_embedding(b, k_types[ti], 5, 577, 0);
    }
    check_embedding(b, DTYPE_F16, 256, 256, 1);
    check_embedding(b, DTYPE_BF16, 256, 256, 1);
    check_embedding(b, DTYPE_F16, 1771, 37, 1);  // odd row width: patterns 0..65526
    for (int ti = 0; ti < N_QTYPES; ti++) {
        const int be = dtype_block_elems(k_qtypes[ti]);
        check_embedding(b, k_qtypes[ti], 11, be, 0);
        check_embedding(b, k_qtypes[ti], 7, 3 * be, 0);
    }
}

// --------------------------------------------------------------- rmsnorm ----
static void test_rmsnorm(backend *b) {
    static const int ns[] = {1, 3, 65};
    static const int dims[] = {1, 7, 37, 577};
    for (int a = 0; a < 3; a++)
        for (int d = 0; d < 4; d++)
            for (int inplace = 0; inplace < 2; inplace++) {
                g_case_fail = 0;
                const int n = ns[a], dim = dims[d];
                const float eps = inplace ? 1e-6f : 1e-5f;
                float *x = malloc((size_t)n * dim * sizeof(float));
                for (int i = 0; i < n; i++) {
                    const float s = rnd_f(0.1f, 10.0f);
                    for (int j = 0; j < dim; j++) x[(size_t)i * dim + j] = s * rnd_f(-1, 1);
                }
                float *w = rnd_vec(dim, -2, 2);
                float *x0 = malloc((size_t)n * dim * sizeof(float));
                memcpy(x0, x, (size_t)n * dim * sizeof(float));
                float *out = inplace ? x : malloc((size_t)n * dim * sizeof(float));
                b->ops->rmsnorm(b, out, x, w, n, dim, eps);
                for (int i = 0; i < n; i++) {
                    double ss = 0;
                    for (int j = 0; j < dim; j++) ss += (double)x0[(size_t)i * dim + j] * x0[(size_t)i * dim + j];
                    const double inv = 1.0 / sqrt(ss / dim + eps);
                    for (int j = 0; j < dim; j++) {
                        const double ref = w[j] * (x0[(size_t)i * dim + j] * inv);
                        // Sum of dim positive squares in F32 (8 partial sums):
                        // relative error <= (dim/8+3)*2^-24 ~ 5e-6 at dim 577;
                        // sqrt halves it, plus ~3 roundings per element.
                        const double tol = 1e-5 * fabs(ref) + 1e-30;
                        const float g = out[(size_t)i * dim + j];
                        if (!(fabs(g - ref) <= tol))
                            FAIL("rmsnorm n=%d dim=%d inplace=%d [%d,%d] got %.9g want %.9g", n,
                                 dim, inplace, i, j, g, ref);
                    }
                }
                free(x);
                free(w);
                free(x0);
                if (!inplace) free(out);
            }
}

// ------------------------------------------------------------------ rope ----
static void test_rope(backend *b) {
    static const int hds[] = {8, 14, 64};
    for (int hi = 0; hi < 3; hi++)
        for (int rk = 0; rk < 3; rk++)
            for (int inter = 0; inter < 2; inter++) {
                g_case_fail = 0;
                const int hd = hds[hi];
                const int rot = rk == 0 ? hd : rk == 1 ? (hd / 2) & ~1 : 6;
                const int n_tok = 5, n_heads = 3, half = rot / 2;
                int32_t pos[5] = {0, 1, 17, 4095, 31999};
                float *inv = malloc(half * sizeof(float));
                for (int j = 0; j < half; j++) inv[j] = 1.0f / powf(10000.0f, (float)(2 * j) / (float)rot);
                const size_t cnt = (size_t)n_tok * n_heads * hd;
                float *x = rnd_vec(cnt, -2, 2), *x0 = malloc(cnt * sizeof(float));
                memcpy(x0, x, cnt * sizeof(float));
                b->ops->rope(b, x, pos, n_tok, n_heads, hd, rot, inter, inv);
                for (int t = 0; t < n_tok; t++)
                    for (int h = 0; h < n_heads; h++) {
                        const float *v0 = x0 + ((size_t)t * n_heads + h) * hd;
                        const float *v = x + ((size_t)t * n_heads + h) * hd;
                        for (int j = 0; j < half; j++) {
                            const int i0 = inter ? 2 * j : j, i1 = inter ? 2 * j + 1 : j + half;
                            // The angle is rounded to F32 exactly as transformers
                            // does (float position * float inv_freq); cos/sin and
                            // the rotation are then done in double here.
                            const float ang = (float)pos[t] * inv[j];
                            const double c = cos((double)ang), s = sin((double)ang);
                            const double r0 = v0[i0] * c - v0[i1] * s;
                            const double r1 = v0[i1] * c + v0[i0] * s;
                            // cosf/sinf are within ~1 ulp; 4 products/sums round.
                            const double tol = 2e-6 * (fabs(v0[i0]) + fabs(v0[i1])) + 1e-30;
                            if (!(fabs(v[i0] - r0) <= tol) || !(fabs(v[i1] - r1) <= tol))
                                FAIL("rope hd=%d rot=%d inter=%d t=%d h=%d j=%d got (%.9g,%.9g) "
                                     "want (%.9g,%.9g)", hd, rot, inter, t, h, j, v[i0], v[i1], r0, r1);
                        }
                        for (int d = rot; d < hd; d++)
                            if (v[d] != v0[d]) FAIL("rope touched dim %d >= rot_dim %d", d, rot);
                    }
                free(inv);
                free(x);
                free(x0);
            }
}

// ------------------------------------------------- silu_mul, add, softmax ----
static void test_elementwise(backend *b) {
    static const int ns[] = {1, 3, 65};
    static const int dims[] = {1, 7, 37, 577};
    for (int a = 0; a < 3; a++)
        for (int d = 0; d < 4; d++) {
            g_case_fail = 0;
            const int n = ns[a], dim = dims[d];
            float *gu = rnd_vec((size_t)n * 2 * dim, -20, 20);
            float *out = malloc((size_t)n * dim * sizeof(float));
            b->ops->silu_mul(b, out, gu, n, dim);
            for (int i = 0; i < n; i++)
                for (int j = 0; j < dim; j++) {
                    const double g = gu[(size_t)i * 2 * dim + j], u = gu[(size_t)i * 2 * dim + dim + j];
                    const double ref = g / (1.0 + exp(-g)) * u;
                    // expf within ~1 ulp, then 1 add, 1 divide, 1 multiply.
                    const double tol = 2e-6 * fabs(ref) + 1e-30;
                    if (!(fabs(out[(size_t)i * dim + j] - ref) <= tol))
                        FAIL("silu_mul n=%d dim=%d [%d,%d] got %.9g want %.9g", n, dim, i, j,
                             out[(size_t)i * dim + j], ref);
                }
            free(gu);
            free(out);

            // softmax: offsets of +-1000 would overflow expf without max-subtract.
            g_case_fail = 0;
            float *x = malloc((size_t)n * dim * sizeof(float));
            for (int i = 0; i < n; i++) {
                const float off = (i % 3 - 1) * 1000.0f;
                for (int j = 0; j < dim; j++) x[(size_t)i * dim + j] = off + rnd_f(-10, 10);
            }
            float *x0 = malloc((size_t)n * dim * sizeof(float));
            memcpy(x0, x, (size_t)n * dim * sizeof(float));
            b->ops->softmax(b, x, n, dim);
            for (int i = 0; i < n; i++) {
                const float *r0 = x0 + (size_t)i * dim;
                double m = r0[0], s = 0;
                for (int j = 1; j < dim; j++) m = r0[j] > m ? r0[j] : m;
                for (int j = 0; j < dim; j++) s += exp(r0[j] - m);
                for (int j = 0; j < dim; j++) {
                    const double ref = exp(r0[j] - m) / s;
                    // x - max rounds by <= |x-max|*2^-24, which exp turns into
                    // that much relative error; expf ~1 ulp; a sequential F32 sum
                    // of dim positive terms has relative error <= dim*2^-24.
                    const double tol = (dim + 4 + 2 * fabs(r0[j] - m)) * 6e-8 * ref + 1e-30;
                    const float g = x[(size_t)i * dim + j];
                    if (!(fabs(g - ref) <= tol))
                        FAIL("softmax n=%d dim=%d [%d,%d] got %.9g want %.9g", n, dim, i, j, g, ref);
                }
            }
            free(x0);

            // argmax with planted ties: the first index of the max wins.
            g_case_fail = 0;
            int32_t *am = malloc(n * sizeof(int32_t)), *want = malloc(n * sizeof(int32_t));
            for (int i = 0; i < n; i++) {
                float *r = x + (size_t)i * dim;
                for (int j = 0; j < dim; j++) r[j] = rnd_f(-5, 5);
                int p1 = rnd_int(dim), p2 = rnd_int(dim);
                r[p1] = r[p2] = 7.0f;
                want[i] = p1 < p2 ? p1 : p2;
            }
            b->ops->argmax(b, am, x, n, dim);
            for (int i = 0; i < n; i++)
                if (am[i] != want[i]) FAIL("argmax n=%d dim=%d row %d got %d want %d", n, dim, i, am[i], want[i]);
            free(am);
            free(want);
            free(x);
        }
    static const size_t counts[] = {1, 7, 37, 100003};
    for (int c = 0; c < 4; c++) {
        g_case_fail = 0;
        const size_t cnt = counts[c];
        float *x = rnd_vec(cnt, -1, 1), *y = rnd_vec(cnt, -1, 1), *x0 = malloc(cnt * sizeof(float));
        memcpy(x0, x, cnt * sizeof(float));
        b->ops->add(b, x, y, cnt);
        for (size_t i = 0; i < cnt; i++)
            if (x[i] != x0[i] + y[i]) FAIL("add count=%zu [%zu]", cnt, i);  // exact: one F32 add
        free(x);
        free(y);
        free(x0);
    }
}

// ------------------------------------------------------------- attention ----
typedef struct {
    int n_heads, n_kv, hd, bs;
} attn_cfg;

static void run_attention_step(backend *b, const attn_cfg *cfg, kv_layer *cache,
                               attention_batch *batch, float **kl, float **vl, int n_tok,
                               const int32_t *tseq, const int32_t *tpos) {
    const int nh = cfg->n_heads, nkv = cfg->n_kv, hd = cfg->hd;
    const size_t kvrow = (size_t)nkv * hd;
    float *k = malloc((n_tok ? n_tok : 1) * kvrow * sizeof(float));
    float *v = malloc((n_tok ? n_tok : 1) * kvrow * sizeof(float));
    for (int t = 0; t < n_tok; t++) {
        memcpy(k + t * kvrow, kl[tseq[t]] + tpos[t] * kvrow, kvrow * sizeof(float));
        memcpy(v + t * kvrow, vl[tseq[t]] + tpos[t] * kvrow, kvrow * sizeof(float));
    }
    batch->n_tokens = n_tok;
    batch->token_seq = tseq;
    batch->positions = tpos;
    b->ops->kv_store(b, cache, batch, k, v);
    // The cache layout is [n_blocks, block_size, n_kv_heads, head_dim].
    for (int t = 0; t < n_tok; t++) {
        const int blk = batch->block_tables[tseq[t] * batch->max_blocks_per_seq + tpos[t] / cfg->bs];
        const size_t off = ((size_t)blk * cfg->bs + tpos[t] % cfg->bs) * kvrow;
        if (memcmp(cache->k + off, k + t * kvrow, kvrow * 4) || memcmp(cache->v + off, v + t * kvrow, kvrow * 4))
            FAIL("kv_store token %d (seq %d pos %d) not at block %d slot %d", t, tseq[t], tpos[t],
                 blk, tpos[t] % cfg->bs);
    }
    float *q = rnd_vec((size_t)n_tok * nh * hd, -1, 1);
    float *out = malloc((size_t)n_tok * nh * hd * sizeof(float));
    const float scale = 1.0f / sqrtf((float)hd);
    b->ops->attention(b, out, q, cache, batch, nh, scale);
    const int group = nh / nkv;
    for (int t = 0; t < n_tok; t++)
        for (int h = 0; h < nh; h++) {
            const int kvh = h / group, P = tpos[t] + 1;
            const float *qh = q + ((size_t)t * nh + h) * hd;
            const float *K = kl[tseq[t]], *V = vl[tseq[t]];
            double *sc = malloc(P * sizeof(double)), m = -INFINITY, sum = 0, vmax = 0;
            for (int p = 0; p < P; p++) {
                double s = 0;
                for (int d = 0; d < hd; d++) s += (double)qh[d] * K[p * kvrow + kvh * hd + d];
                sc[p] = s * scale;
                m = sc[p] > m ? sc[p] : m;
            }
            for (int p = 0; p < P; p++) sum += (sc[p] = exp(sc[p] - m));
            for (int d = 0; d < hd; d++) {
                double r = 0;
                for (int p = 0; p < P; p++) {
                    r += sc[p] * V[p * kvrow + kvh * hd + d];
                    vmax = fmax(vmax, fabs(V[p * kvrow + kvh * hd + d]));
                }
                r /= sum;
                // Scores carry F32 dot-product error (~hd*2^-24*sum|q*k|*scale,
                // < 1e-5 here) that becomes relative error of the softmax
                // weights; the output is a convex combination of v, so the error
                // scales with max|v|. A wrong position/head/block moves it by
                // ~max|v|/P >= 1e-2.
                const double tol = 5e-5 * vmax + 1e-30;
                const float g = out[((size_t)t * nh + h) * hd + d];
                if (!(fabs(g - r) <= tol))
                    FAIL("attention nh=%d nkv=%d hd=%d bs=%d tok %d (seq %d pos %d) head %d dim %d: "
                         "got %.9g want %.9g", nh, nkv, hd, cfg->bs, t, tseq[t], tpos[t], h, d, g, r);
            }
            free(sc);
        }
    free(k);
    free(v);
    free(q);
    free(out);
}

static void test_attention(backend *b) {
    static const attn_cfg cfgs[] = {
        {4, 4, 16, 4},   // GQA ratio 1
        {4, 2, 13, 3},   // ratio 2, odd head_dim and block size
        {8, 2, 64, 16},  // ratio 4
        {12, 3, 37, 5},  // ratio 4, odd everything
    };
    static const int lens[] = {1, 11, 37, 6};
    const int n_seqs = 4;
    for (int ci = 0; ci < 4; ci++) {
        g_case_fail = 0;
        const attn_cfg *cfg = &cfgs[ci];
        const int bs = cfg->bs;
        const size_t kvrow = (size_t)cfg->n_kv * cfg->hd;
        int max_blocks = 0, need = 0;
        for (int s = 0; s < n_seqs; s++) {
            const int nb = (lens[s] + bs - 1) / bs;
            need += nb;
            if (nb > max_blocks) max_blocks = nb;
        }
        max_blocks += 1;  // unused trailing entries
        const int n_blocks = need + 3;  // spare blocks stay untouched
        kv_layer cache = {NULL, NULL, n_blocks, bs, cfg->n_kv, cfg->hd};
        const size_t csz = (size_t)n_blocks * bs * kvrow;
        cache.k = malloc(csz * sizeof(float));
        cache.v = malloc(csz * sizeof(float));
        for (size_t i = 0; i < csz; i++) cache.k[i] = cache.v[i] = NAN;  // unread slots poison

        // Shuffled, non-contiguous block tables.
        int *perm = malloc(n_blocks * sizeof(int));
        for (int i = 0; i < n_blocks; i++) perm[i] = i;
        shuffle_int(perm, n_blocks);
        int32_t *tables = malloc((size_t)n_seqs * max_blocks * sizeof(int32_t));
        int next = 0;
        for (int s = 0; s < n_seqs; s++)
            for (int j = 0; j < max_blocks; j++)
                tables[s * max_blocks + j] = j < (lens[s] + bs - 1) / bs ? perm[next++] : -1;

        float *kl[4], *vl[4];
        for (int s = 0; s < n_seqs; s++) {
            kl[s] = rnd_vec(lens[s] * kvrow, -1, 1);
            vl[s] = rnd_vec(lens[s] * kvrow, -2, 2);
        }
        attention_batch batch = {0, n_seqs, NULL, NULL, tables, max_blocks};

        // Step 1, prefill: positions 0..len-2 of every sequence, tokens mixed.
        int n_tok = 0;
        for (int s = 0; s < n_seqs; s++) n_tok += lens[s] - 1;
        int32_t *tseq = malloc((n_tok + n_seqs) * sizeof(int32_t)), *tpos = malloc((n_tok + n_seqs) * sizeof(int32_t));
        int *order = malloc((n_tok + 1) * sizeof(int));
        for (int i = 0; i < n_tok; i++) order[i] = i;
        shuffle_int(order, n_tok);
        for (int s = 0, i = 0; s < n_seqs; s++)
            for (int p = 0; p < lens[s] - 1; p++, i++) {
                tseq[order[i]] = s;
                tpos[order[i]] = p;
            }
        run_attention_step(b, cfg, &cache, &batch, kl, vl, n_tok, tseq, tpos);
        // Step 2, decode: the last position of each sequence.
        for (int s = 0; s < n_seqs; s++) {
            tseq[s] = n_seqs - 1 - s;
            tpos[s] = lens[n_seqs - 1 - s] - 1;
        }
        run_attention_step(b, cfg, &cache, &batch, kl, vl, n_seqs, tseq, tpos);
        // Spare blocks were never written.
        for (int i = need; i < n_blocks; i++)
            for (size_t e = 0; e < (size_t)bs * kvrow; e++)
                if (!isnan(cache.k[(size_t)perm[i] * bs * kvrow + e])) {
                    FAIL("kv_store wrote into unused block %d", perm[i]);
                    break;
                }
        for (int s = 0; s < n_seqs; s++) {
            free(kl[s]);
            free(vl[s]);
        }
        free(cache.k);
        free(cache.v);
        free(perm);
        free(tables);
        free(tseq);
        free(tpos);
        free(order);
    }
}

// ------------------------------------------------------------------ main ----
int main(void) {
    int have_avx2 = 0;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    have_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                __builtin_cpu_supports("f16c");
#endif
    static const char *isas[] = {"scalar", "auto"};
    for (int ii = 0; ii < 2; ii++)
        for (int nt = 1; nt <= 2; nt++) {
            setenv("ATOLL_CPU_ISA", isas[ii], 1);
            backend *b = backend_cpu_create(nt);
            const char *want = ii == 0 || !have_avx2 ? "scalar" : "avx2";
            snprintf(g_ctx, sizeof g_ctx, "isa=%s threads=%d", want, nt);
            g_case_fail = 0;
            if (!b) {
                FAIL("backend_cpu_create(%d) failed", nt);
                continue;
            }
            if (strcmp(backend_cpu_isa(b), want)) FAIL("backend chose isa %s", backend_cpu_isa(b));
            g_isa_avx2 = strcmp(backend_cpu_isa(b), "avx2") == 0;
            if (backend_cpu_threads(b) != nt) FAIL("backend has %d threads", backend_cpu_threads(b));
            const int before = g_failures;
            test_memory(b);
            test_matmul(b);
            test_embedding(b);
            test_rmsnorm(b);
            test_rope(b);
            test_elementwise(b);
            test_attention(b);
            printf("%-24s %s\n", g_ctx, g_failures == before ? "ok" : "FAILED");
            backend_destroy(b);
        }
    unsetenv("ATOLL_CPU_ISA");
    backend *b = backend_cpu_create(0);
    if (!b || backend_cpu_threads(b) < 1) {
        fprintf(stderr, "FAIL backend_cpu_create(0)\n");
        g_failures++;
    }
    backend_destroy(b);
    if (g_failures) {
        fprintf(stderr, "%d check(s) failed\n", g_failures);
        return 1;
    }
    printf("all kernel tests passed\n");
    return 0;
}
