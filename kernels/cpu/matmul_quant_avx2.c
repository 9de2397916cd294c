// kernels/cpu/matmul_quant_avx2.c — AVX2 matmul of Q4_0, Q4_1 and Q8_0
// weights with integer dot products. Compiled with -mavx2 -mfma -mf16c;
// called only when the CPU has them.
//
// As llama.cpp does, x is first rounded to blocks of 32 integers with one
// float scale per block (cpu_quantize_x16_avx2), so each (weight block,
// x block) pair is an exact integer dot product followed by one FMA with the
// product of the two scales. Unlike llama.cpp, x is rounded to int16, not
// int8: _mm256_madd_epi16 on 16 pairs costs about what
// _mm256_maddubs_epi16 + _mm256_madd_epi16 on 32 do once the weights are
// unpacked, and the rounding error of x drops from max|x|/254 to
// max|x|/65534 per element (the block's largest |x|), about the error of
// F32 accumulation itself.
//
// Per 32-element block, with x ~= dx * p (p int16) and sx = dx * sum(p):
//   Q8_0: d * q             -> d*dx * sum(q p)
//   Q4_0: d * (q - 8)       -> d*dx * sum(q p) - 8d * sx
//   Q4_1: d * q + m         -> d*dx * sum(q p) + m * sx
// (q the unsigned nibbles for Q4_*). The integer sums are exact (and exact in
// float: |sum| < 2^24); the m/-8d terms are summed after the main loop.
//
// Tiles of R weight rows x NX x rows keep R*NX accumulators in registers; x
// is read from L1 inside the tile. The weight stream is prefetched ahead as
// in matmul_avx2.c.
#include <immintrin.h>

#include "kernels/cpu/cpu_internal.h"

#define AI static inline __attribute__((always_inline))

// decode: 4 weight rows in flight; prefill: each unpacked weight block is
// reused for 3 x rows (9 accumulators + 3 unpacked rows: no spills).
#define DECODE_R 4
#define DECODE_NX 1
#define PREFILL_R 3
#define PREFILL_NX 3
#define TILE_R 4
#define TILE_NX 3
#define PF_BYTES 4096
#define XBLOCK_BYTES (256 * 1024)
#define ROUND_NEAREST (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)

int cpu_x16_kernel_supported(dtype t) {
    return t == DTYPE_Q4_0 || t == DTYPE_Q4_1 || t == DTYPE_Q8_0;
}

static inline float hsum256(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

static inline int hsum256_epi32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 1));
    return _mm_cvtsi128_si32(s);
}

// Rows [i0, i1) of x [n, K] -> a: per block of 32, dx = max|x| / 32767 and
// p = round-to-nearest-even(x * 32767 / max|x|) in [-32767, 32767];
// sx = dx * sum(p).
void cpu_quantize_x16_avx2(const float *x, const cpu_x16 *a, int i0, int i1) {
    const int K = a->K, nb = a->nb;
    const __m256 sign = _mm256_set1_ps(-0.0f);
    for (int i = i0; i < i1; i++) {
        const float *xr = x + (size_t)i * K;
        int16_t *q = a->q + (size_t)i * K;
        for (int b = 0; b < nb; b++) {
            const float *xb = xr + 32 * b;
            const __m256 v0 = _mm256_loadu_ps(xb), v1 = _mm256_loadu_ps(xb + 8);
            const __m256 v2 = _mm256_loadu_ps(xb + 16), v3 = _mm256_loadu_ps(xb + 24);
            const __m256 m = _mm256_max_ps(_mm256_max_ps(_mm256_andnot_ps(sign, v0), _mm256_andnot_ps(sign, v1)),
                                           _mm256_max_ps(_mm256_andnot_ps(sign, v2), _mm256_andnot_ps(sign, v3)));
            __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
            m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
            m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
            const float amax = _mm_cvtss_f32(m4);
            const float d = amax / 32767.0f, id = amax > 0.0f ? 32767.0f / amax : 0.0f;
            const __m256 vid = _mm256_set1_ps(id);
            const __m256i q0 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v0, vid), ROUND_NEAREST));
            const __m256i q1 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v1, vid), ROUND_NEAREST));
            const __m256i q2 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v2, vid), ROUND_NEAREST));
            const __m256i q3 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v3, vid), ROUND_NEAREST));
            const int sum = hsum256_epi32(
                _mm256_add_epi32(_mm256_add_epi32(q0, q1), _mm256_add_epi32(q2, q3)));
            // packs interleaves the 128-bit lanes: (0-3, 8-11, 4-7, 12-15)
            _mm256_storeu_si256((__m256i *)(q + 32 * b),
                                _mm256_permute4x64_epi64(_mm256_packs_epi32(q0, q1), 0xD8));
            _mm256_storeu_si256((__m256i *)(q + 32 * b + 16),
                                _mm256_permute4x64_epi64(_mm256_packs_epi32(q2, q3), 0xD8));
            a->d[(size_t)i * nb + b] = d;
            a->s[(size_t)i * nb + b] = d * (float)sum;
        }
    }
}

AI uint16_t ld16(const uint8_t *p) {
    uint16_t h;
    memcpy(&h, p, 2);
    return h;
}

AI size_t block_bytes(const dtype T) {
    return T == DTYPE_Q4_0 ? sizeof(block_q4_0) : T == DTYPE_Q4_1 ? sizeof(block_q4_1) : sizeof(block_q8_0);
}

// out[i, j0 + r] = w row (j0 + r) . x row (i0 + i) (+ bias) for r < R, i < NX.
AI void tile(const dtype T, const int R, const int NX, const uint8_t *w0, size_t wstride,
             const cpu_x16 *a, int i0, float *out, int ldc, const float *bias, int j0) {
    const int nb = a->nb, K = a->K;
    const size_t BB = block_bytes(T);
    const int16_t *xq = a->q + (size_t)i0 * K;
    const float *xd = a->d + (size_t)i0 * nb;
    __m256 acc[TILE_R][TILE_NX];
#pragma GCC unroll 8
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int i = 0; i < NX; i++) acc[r][i] = _mm256_setzero_ps();
    // Prefetch the weight tile PF_BYTES ahead: the thread's rows are one
    // contiguous stream, swept by a cursor advancing R blocks per step.
    const size_t step_bytes = BB * R;
    const size_t tile_bytes = (size_t)R * wstride;
    const size_t pf_tiles = tile_bytes >= PF_BYTES ? 1 : (PF_BYTES + tile_bytes - 1) / tile_bytes;
    uintptr_t pf = (uintptr_t)w0 + (uintptr_t)(pf_tiles * tile_bytes);
    const __m256i low4 = _mm256_set1_epi16(0x0F);
    for (int b = 0; b < nb; b++) {
#pragma GCC unroll 4
        for (size_t o = 0; o < step_bytes; o += 64) _mm_prefetch((const char *)(pf + o), _MM_HINT_T0);
        pf += step_bytes;
#pragma GCC unroll 8
        for (int r = 0; r < R; r++) {
            const uint8_t *blk = w0 + (size_t)r * wstride + (size_t)b * BB;
            const __m256 dw = _mm256_cvtph_ps(_mm_set1_epi16((short)ld16(blk)));
            __m256i wl, wh;  // weights of elements 0..15 and 16..31 as int16
            if (T == DTYPE_Q8_0) {
                wl = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(blk + 2)));
                wh = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(blk + 18)));
            } else {
                const __m256i raw = _mm256_cvtepu8_epi16(
                    _mm_loadu_si128((const __m128i *)(blk + (T == DTYPE_Q4_1 ? 4 : 2))));
                wl = _mm256_and_si256(raw, low4);
                wh = _mm256_srli_epi16(raw, 4);
            }
#pragma GCC unroll 8
            for (int i = 0; i < NX; i++) {
                const int16_t *xb = xq + (size_t)i * K + (size_t)b * 32;
                const __m256i s = _mm256_add_epi32(
                    _mm256_madd_epi16(wl, _mm256_loadu_si256((const __m256i *)xb)),
                    _mm256_madd_epi16(wh, _mm256_loadu_si256((const __m256i *)(xb + 16))));
                const __m256 dd = _mm256_mul_ps(dw, _mm256_broadcast_ss(xd + (size_t)i * nb + b));
                acc[r][i] = _mm256_fmadd_ps(dd, _mm256_cvtepi32_ps(s), acc[r][i]);
            }
        }
    }
    float macc[TILE_R][TILE_NX] = {{0}};
    if (T != DTYPE_Q8_0) {  // m * sx (Q4_1), -8d * sx (Q4_0)
        const float *xs = a->s + (size_t)i0 * nb;
        for (int b = 0; b < nb; b++)
#pragma GCC unroll 8
            for (int r = 0; r < R; r++) {
                const uint8_t *blk = w0 + (size_t)r * wstride + (size_t)b * BB;
                const float m = T == DTYPE_Q4_1 ? _cvtsh_ss(ld16(blk + 2)) : -8.0f * _cvtsh_ss(ld16(blk));
#pragma GCC unroll 8
                for (int i = 0; i < NX; i++) macc[r][i] += m * xs[(size_t)i * nb + b];
            }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) {
        const float bj = bias ? bias[j0 + r] : 0.0f;
#pragma GCC unroll 8
        for (int i = 0; i < NX; i++)
            out[(size_t)i * ldc + j0 + r] = (hsum256(acc[r][i]) + macc[r][i]) + bj;
    }
}

#define TILE_CASE(R_, NX_) \
    tile(T, R_, NX_, w0, wstride, a, i0 + i, out + (size_t)i * ldc, ldc, bias, j)

// x rows [i0, i0 + nx) against weight rows [r0, r1); out points at row i0.
AI void rows_block(const dtype T, const int R, const int NX, float *out, int ldc, const cpu_x16 *a,
                   const weight_matrix *w, const float *bias, int i0, int nx, int r0, int r1) {
    const size_t wstride = dtype_row_bytes(T, w->cols);
    const uint8_t *wbase = (const uint8_t *)w->data;
    int j = r0;
    for (; j + R <= r1; j += R) {
        const uint8_t *w0 = wbase + (size_t)j * wstride;
        int i = 0;
        for (; i + NX <= nx; i += NX) TILE_CASE(R, NX);
        const int rem = nx - i;  // < NX; the dead cases fold away
        if (NX > 2 && rem == 2) TILE_CASE(R, 2);
        else if (NX > 1 && rem == 1) TILE_CASE(R, 1);
    }
    for (; j < r1; j++) {
        const uint8_t *w0 = wbase + (size_t)j * wstride;
        int i = 0;
        for (; i + 3 <= nx; i += 3) TILE_CASE(1, 3);
        for (; i < nx; i++) TILE_CASE(1, 1);
    }
}

AI void rows_typed(const dtype T, float *out, int ldc, const cpu_x16 *a, const weight_matrix *w,
                   const float *bias, int n, int r0, int r1) {
    if (n < PREFILL_NX) {  // decode: the weights stream once per x row
        for (int i = 0; i < n; i++)
            rows_block(T, DECODE_R, DECODE_NX, out + (size_t)i * ldc, ldc, a, w, bias, i, 1, r0, r1);
        return;
    }
    // Prefill: x in blocks that stay in L2 while the weight rows stream past.
    const size_t xrow = (size_t)a->K * sizeof(int16_t) + 2 * sizeof(float) * (size_t)a->nb;
    int xb = (int)(XBLOCK_BYTES / xrow);
    xb -= xb % PREFILL_NX;
    if (xb < PREFILL_NX) xb = PREFILL_NX;
    for (int i0 = 0; i0 < n; i0 += xb) {
        const int nx = n - i0 < xb ? n - i0 : xb;
        rows_block(T, PREFILL_R, PREFILL_NX, out + (size_t)i0 * ldc, ldc, a, w, bias, i0, nx, r0, r1);
    }
}

static void rows_q4_0(float *out, int ldc, const cpu_x16 *a, const weight_matrix *w,
                      const float *bias, int n, int r0, int r1) {
    rows_typed(DTYPE_Q4_0, out, ldc, a, w, bias, n, r0, r1);
}
static void rows_q4_1(float *out, int ldc, const cpu_x16 *a, const weight_matrix *w,
                      const float *bias, int n, int r0, int r1) {
    rows_typed(DTYPE_Q4_1, out, ldc, a, w, bias, n, r0, r1);
}
static void rows_q8_0(float *out, int ldc, const cpu_x16 *a, const weight_matrix *w,
                      const float *bias, int n, int r0, int r1) {
    rows_typed(DTYPE_Q8_0, out, ldc, a, w, bias, n, r0, r1);
}

void cpu_matmul_rows_x16_avx2(float *out, int ldc, const cpu_x16 *a, const weight_matrix *w,
                              const float *bias, int n, int r0, int r1) {
    switch (w->type) {
    case DTYPE_Q4_0: rows_q4_0(out, ldc, a, w, bias, n, r0, r1); break;
    case DTYPE_Q4_1: rows_q4_1(out, ldc, a, w, bias, n, r0, r1); break;
    case DTYPE_Q8_0: rows_q8_0(out, ldc, a, w, bias, n, r0, r1); break;
    default: break;
    }
}
