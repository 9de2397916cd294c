// kernels/cpu/matmul_avx2.c — AVX2/FMA/F16C matmul kernels for F32, F16 and
// BF16 weights over a range of output rows. Compiled with -mavx2 -mfma
// -mf16c; called only when the CPU has them.
//
// Shape of the work: a tile of R consecutive weight rows is converted to F32
// on the fly (BF16: zero-extend + shift left 16; F16: vcvtph2ps) 8 columns at
// a time and multiplied against NX x rows at once, R*NX accumulators in
// registers, so each converted weight vector is reused NX times (prefill)
// and each x vector R times. x rows are processed in blocks that stay in L2
// while the thread's weight rows stream past; for decode (n < PREFILL_NX) the
// weights are read from memory exactly once.
#include <immintrin.h>

#include "kernels/cpu/cpu_internal.h"

#define AI static inline __attribute__((always_inline))

// Tiles (weight rows x x rows): prefill reuses each converted weight vector
// over PREFILL_NX x rows; decode keeps DECODE_R weight rows in flight.
#define PREFILL_R 3
#define PREFILL_NX 4
#define PREFILL_PF 1
#define DECODE_R 4
#define DECODE_NX 2
#define DECODE_PF 1
// Software prefetch distance: with the hardware prefetcher alone decode got
// ~45% of the read bandwidth on short rows (K = 576: each tile is a fresh set
// of 4 streams of 18 lines); prefetching >= 8 KiB ahead brings it to ~75%.
#define PF_BYTES 8192
#define PF_HINT _MM_HINT_T0
#define TILE_R 4   // largest R used
#define TILE_NX 4  // largest NX used
// Bytes of x kept hot per block (L2 is >= 512 KiB on the targets).
#define XBLOCK_BYTES (256 * 1024)

AI __m256 load_w8(const dtype T, const void *row, int k) {
    if (T == DTYPE_F32) return _mm256_loadu_ps((const float *)row + k);
    if (T == DTYPE_F16)
        return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const uint16_t *)row + k)));
    __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)((const uint16_t *)row + k)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
}

AI float load_w1(const dtype T, const void *row, int k) {
    if (T == DTYPE_F32) return ((const float *)row)[k];
    if (T == DTYPE_F16) return cpu_f16_to_f32(((const uint16_t *)row)[k]);
    return cpu_bf16_to_f32(((const uint16_t *)row)[k]);
}

AI float hsum256(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// out[i, j0 + r] = dot(w row j0 + r, x row i) (+ bias) for r < R, i < NX.
AI void tile(const dtype T, const int R, const int NX, const int PF, const char *w0,
             size_t wstride, int K, const float *x, float *out, int ldc, const float *bias,
             int j0) {
    __m256 acc[TILE_R][TILE_NX];
    const void *wr[TILE_R];
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) {
        wr[r] = w0 + (size_t)r * wstride;
#pragma GCC unroll 8
        for (int i = 0; i < NX; i++) acc[r][i] = _mm256_setzero_ps();
    }
    // Software prefetch of the weight tile >= PF_BYTES ahead: the R rows of a
    // tile are contiguous, so a cursor advancing by the bytes consumed per
    // step sweeps exactly that future tile. (Integer arithmetic: the address
    // may lie past the matrix; prefetches never fault.)
    const size_t step_bytes = (size_t)8 * (T == DTYPE_F32 ? 4 : 2) * R;
    const size_t tile_bytes = (size_t)R * wstride;
    const size_t pf_tiles = tile_bytes >= PF_BYTES ? 1 : (PF_BYTES + tile_bytes - 1) / tile_bytes;
    uintptr_t pf = (uintptr_t)w0 + (uintptr_t)(pf_tiles * tile_bytes);
    int k = 0;
    for (; k + 8 <= K; k += 8) {
        if (PF) {
            _mm_prefetch((const char *)pf, PF_HINT);
            if (step_bytes > 64) _mm_prefetch((const char *)(pf + 64), PF_HINT);
            pf += step_bytes;
        }
        __m256 wv[TILE_R];
#pragma GCC unroll 8
        for (int r = 0; r < R; r++) wv[r] = load_w8(T, wr[r], k);
#pragma GCC unroll 8
        for (int i = 0; i < NX; i++) {
            const __m256 xv = _mm256_loadu_ps(x + (size_t)i * K + k);
#pragma GCC unroll 8
            for (int r = 0; r < R; r++) acc[r][i] = _mm256_fmadd_ps(wv[r], xv, acc[r][i]);
        }
    }
    float s[TILE_R][TILE_NX];
#pragma GCC unroll 8
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int i = 0; i < NX; i++) s[r][i] = hsum256(acc[r][i]);
    for (; k < K; k++) {
#pragma GCC unroll 8
        for (int r = 0; r < R; r++) {
            const float wk = load_w1(T, wr[r], k);
#pragma GCC unroll 8
            for (int i = 0; i < NX; i++) s[r][i] += wk * x[(size_t)i * K + k];
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) {
        const float bj = bias ? bias[j0 + r] : 0.0f;
#pragma GCC unroll 8
        for (int i = 0; i < NX; i++) out[(size_t)i * ldc + j0 + r] = s[r][i] + bj;
    }
}

// One call of tile() per case, so R and NX are compile-time constants.
#define TILE_CASE(R_, NX_) \
    tile(T, R_, NX_, PF, w0, wstride, K, x + (size_t)i * K, out + (size_t)i * ldc, ldc, bias, j)

// x rows [0, nx) against weight rows [r0, r1) in tiles of R weight rows x NX
// x rows (R * NX <= 12 accumulators + R + 1 registers: no spills).
AI void rows_block(const dtype T, const int R, const int NX, const int PF, float *out, int ldc,
                   const float *x, const weight_matrix *w, const float *bias, int nx, int r0,
                   int r1) {
    const int K = w->cols;
    const size_t wstride = (size_t)K * (T == DTYPE_F32 ? 4 : 2);
    const char *wbase = (const char *)w->data;
    int j = r0;
    for (; j + R <= r1; j += R) {
        const char *w0 = wbase + (size_t)j * wstride;
        int i = 0;
        for (; i + NX <= nx; i += NX) TILE_CASE(R, NX);
        const int rem = nx - i;  // < NX; the dead cases fold away
        if (NX > 3 && rem == 3) TILE_CASE(R, 3);
        else if (NX > 2 && rem == 2) TILE_CASE(R, 2);
        else if (NX > 1 && rem == 1) TILE_CASE(R, 1);
    }
    for (; j < r1; j++) {
        const char *w0 = wbase + (size_t)j * wstride;
        int i = 0;
        for (; i + 4 <= nx; i += 4) TILE_CASE(1, 4);
        for (; i < nx; i++) TILE_CASE(1, 1);
    }
}

AI void rows_typed(const dtype T, float *out, int ldc, const float *x, const weight_matrix *w,
                   const float *bias, int n, int r0, int r1) {
    if (n < PREFILL_NX) {  // decode: weights stream once, R rows in flight
        rows_block(T, DECODE_R, DECODE_NX, DECODE_PF, out, ldc, x, w, bias, n, r0, r1);
        return;
    }
    const int K = w->cols > 0 ? w->cols : 1;
    int xb = (int)(XBLOCK_BYTES / ((size_t)K * sizeof(float)));
    xb -= xb % PREFILL_NX;
    if (xb < PREFILL_NX) xb = PREFILL_NX;
    for (int i0 = 0; i0 < n; i0 += xb) {
        const int nx = n - i0 < xb ? n - i0 : xb;
        rows_block(T, PREFILL_R, PREFILL_NX, PREFILL_PF, out + (size_t)i0 * ldc, ldc,
                   x + (size_t)i0 * w->cols, w, bias, nx, r0, r1);
    }
}

static void rows_f32(float *out, int ldc, const float *x, const weight_matrix *w,
                     const float *bias, int n, int r0, int r1) {
    rows_typed(DTYPE_F32, out, ldc, x, w, bias, n, r0, r1);
}
static void rows_f16(float *out, int ldc, const float *x, const weight_matrix *w,
                     const float *bias, int n, int r0, int r1) {
    rows_typed(DTYPE_F16, out, ldc, x, w, bias, n, r0, r1);
}
static void rows_bf16(float *out, int ldc, const float *x, const weight_matrix *w,
                      const float *bias, int n, int r0, int r1) {
    rows_typed(DTYPE_BF16, out, ldc, x, w, bias, n, r0, r1);
}

void cpu_matmul_rows_avx2(float *out, int ldc, const float *x, const weight_matrix *w,
                          const float *bias, int n, int r0, int r1) {
    switch (w->type) {
    case DTYPE_F32: rows_f32(out, ldc, x, w, bias, n, r0, r1); break;
    case DTYPE_F16: rows_f16(out, ldc, x, w, bias, n, r0, r1); break;
    case DTYPE_BF16: rows_bf16(out, ldc, x, w, bias, n, r0, r1); break;
    default: break;
    }
}
