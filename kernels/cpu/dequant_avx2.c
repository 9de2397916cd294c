// kernels/cpu/dequant_avx2.c — AVX2 dequantization of every block type to
// F32, bit for bit what kernels/quant.c's reference dequantize_row gives (the
// same float operations per element, 8 lanes at a time). Feeds the embedding
// op and the generic matmul path (tiles of rows dequantized, then the F32
// kernel). Compiled with -mavx2 -mfma -mf16c; called only when the CPU has
// them.
//
// Why fusing cannot change a value: every product here of an f16 scale (11
// significant bits, or a product of one with a 6-bit sub-block scale: 17
// bits) and a quantized integer of at most 6 bits is exact in float32, so
// d * q + m rounds once whether or not the compiler fuses it into an FMA; the
// products that may round (Q6_K's (d * scale) * q, Q8_K's and Q8_0's d * q)
// are single multiplications, as in the reference.
#include <immintrin.h>

#include "kernels/cpu/cpu_internal.h"

#define AI static inline __attribute__((always_inline))

// 8 consecutive bytes of v (at byte offset 0, 8, 16 or 24) as 8 int32.
AI __m256i u8x8(__m256i v, int part) {
    const __m128i h = part < 2 ? _mm256_castsi256_si128(v) : _mm256_extracti128_si256(v, 1);
    return _mm256_cvtepu8_epi32(part & 1 ? _mm_srli_si128(h, 8) : h);
}
AI __m256i s8x8(__m256i v, int part) {
    const __m128i h = part < 2 ? _mm256_castsi256_si128(v) : _mm256_extracti128_si256(v, 1);
    return _mm256_cvtepi8_epi32(part & 1 ? _mm_srli_si128(h, 8) : h);
}

// y[0..32) = d * q + m for 32 unsigned bytes q (m = NULL: d * q).
AI void store_dqm(float *y, __m256i q, float d, const float *m) {
    const __m256 vd = _mm256_set1_ps(d);
#pragma GCC unroll 4
    for (int p = 0; p < 4; p++) {
        __m256 v = _mm256_mul_ps(vd, _mm256_cvtepi32_ps(u8x8(q, p)));
        if (m) v = _mm256_add_ps(v, _mm256_set1_ps(*m));
        _mm256_storeu_ps(y + 8 * p, v);
    }
}

// y[0..32) = d * q - m for 32 unsigned bytes q.
AI void store_dq_minus(float *y, __m256i q, float d, float m) {
    const __m256 vd = _mm256_set1_ps(d), vm = _mm256_set1_ps(m);
#pragma GCC unroll 4
    for (int p = 0; p < 4; p++)
        _mm256_storeu_ps(y + 8 * p, _mm256_sub_ps(_mm256_mul_ps(vd, _mm256_cvtepi32_ps(u8x8(q, p))), vm));
}

// y[0..32) = d * q for 32 signed bytes q (d first, as the reference's
// `d * (float)q`; Q8_0's `q * d` is the same product).
AI void store_dq_signed(float *y, __m256i q, float d) {
    const __m256 vd = _mm256_set1_ps(d);
#pragma GCC unroll 4
    for (int p = 0; p < 4; p++) _mm256_storeu_ps(y + 8 * p, _mm256_mul_ps(vd, _mm256_cvtepi32_ps(s8x8(q, p))));
}

// The 32 nibbles of a 32-element block: element j < 16 the low nibble of
// qs[j], j >= 16 the high nibble of qs[j - 16].
AI __m256i nibbles32(const uint8_t *qs) {
    const __m128i t = _mm_loadu_si128((const __m128i *)qs);
    return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(t, 4), t), _mm256_set1_epi8(0x0F));
}

// Bit j of the little-endian u32 at p as byte j: 0x10 if set, else 0.
AI __m256i bits32_x16(const uint8_t *p) {
    uint32_t x;
    memcpy(&x, p, 4);
    const __m256i shuf = _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0);
    __m256i b = _mm256_shuffle_epi8(_mm256_set1_epi32((int)x), shuf);
    b = _mm256_or_si256(b, _mm256_set1_epi64x(0x7fbfdfeff7fbfdfe));
    return _mm256_and_si256(_mm256_cmpeq_epi8(b, _mm256_set1_epi64x(-1)), _mm256_set1_epi8(0x10));
}

static void deq_q4_0(const uint8_t *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, b += sizeof(block_q4_0), y += QK4_0)
        store_dq_signed(y, _mm256_sub_epi8(nibbles32(b + 2), _mm256_set1_epi8(8)), quant_load_f16(b));
}

static void deq_q4_1(const uint8_t *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, b += sizeof(block_q4_1), y += QK4_1) {
        const float m = quant_load_f16(b + 2);
        store_dqm(y, nibbles32(b + 4), quant_load_f16(b), &m);
    }
}

static void deq_q5_0(const uint8_t *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, b += sizeof(block_q5_0), y += QK5_0) {
        const __m256i q = _mm256_or_si256(nibbles32(b + 6), bits32_x16(b + 2));
        store_dq_signed(y, _mm256_sub_epi8(q, _mm256_set1_epi8(16)), quant_load_f16(b));
    }
}

static void deq_q5_1(const uint8_t *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, b += sizeof(block_q5_1), y += QK5_1) {
        const float m = quant_load_f16(b + 2);
        store_dqm(y, _mm256_or_si256(nibbles32(b + 8), bits32_x16(b + 4)), quant_load_f16(b), &m);
    }
}

static void deq_q8_0(const uint8_t *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, b += sizeof(block_q8_0), y += QK8_0)
        store_dq_signed(y, _mm256_loadu_si256((const __m256i *)(b + 2)), quant_load_f16(b));
}

// Q4_K and Q5_K: 4 pairs of 32-element sub-blocks; (qh: Q5_K's fifth bits).
AI void deq_k4(const uint8_t *b, float *y, int64_t nb, const int q5) {
    const size_t bb = q5 ? sizeof(block_q5_K) : sizeof(block_q4_K);
    const __m256i low4 = _mm256_set1_epi8(0x0F), one = _mm256_set1_epi8(1);
    for (int64_t i = 0; i < nb; i++, b += bb) {
        const float d = quant_load_f16(b), min = quant_load_f16(b + 2);
        const uint8_t *scales = b + 4, *qh = b + 4 + K_SCALE_SIZE;
        const uint8_t *q = q5 ? qh + QK_K / 8 : qh;
        const __m256i hv = q5 ? _mm256_loadu_si256((const __m256i *)qh) : _mm256_setzero_si256();
        for (int j = 0; j < 4; j++, q += 32, y += 64) {
            uint8_t sc, m;
            quant_scale_min_k4(2 * j, scales, &sc, &m);
            const float d1 = d * (float)sc, m1 = min * (float)m;
            quant_scale_min_k4(2 * j + 1, scales, &sc, &m);
            const float d2 = d * (float)sc, m2 = min * (float)m;
            const __m256i v = _mm256_loadu_si256((const __m256i *)q);
            __m256i lo = _mm256_and_si256(v, low4), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low4);
            if (q5) {  // + 16 where bit 2j (low) / 2j+1 (high) of qh[l] is set
                const __m256i b0 = _mm256_and_si256(_mm256_srli_epi16(hv, 2 * j), one);
                const __m256i b1 = _mm256_and_si256(_mm256_srli_epi16(hv, 2 * j + 1), one);
                lo = _mm256_or_si256(lo, _mm256_slli_epi16(b0, 4));
                hi = _mm256_or_si256(hi, _mm256_slli_epi16(b1, 4));
            }
            store_dq_minus(y, lo, d1, m1);
            store_dq_minus(y + 32, hi, d2, m2);
        }
    }
}

static void deq_q6_K(const uint8_t *b, float *y, int64_t nb) {
    const __m256i low4 = _mm256_set1_epi8(0x0F), three = _mm256_set1_epi8(3), k32 = _mm256_set1_epi8(32);
    for (int64_t i = 0; i < nb; i++, b += sizeof(block_q6_K)) {
        const uint8_t *ql = b, *qh = b + QK_K / 2;
        const int8_t *sc = (const int8_t *)(b + QK_K / 2 + QK_K / 4);
        const float d = quant_load_f16(b + QK_K / 2 + QK_K / 4 + QK_K / 16);
        for (int n = 0; n < QK_K; n += 128, y += 128, ql += 64, qh += 32, sc += 8) {
            const __m256i l0 = _mm256_loadu_si256((const __m256i *)ql);
            const __m256i l1 = _mm256_loadu_si256((const __m256i *)(ql + 32));
            const __m256i h = _mm256_loadu_si256((const __m256i *)qh);
            __m256i q[4];  // elements [32k, 32k + 32) of this half
            q[0] = _mm256_or_si256(_mm256_and_si256(l0, low4), _mm256_slli_epi16(_mm256_and_si256(h, three), 4));
            q[1] = _mm256_or_si256(_mm256_and_si256(l1, low4),
                                   _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 2), three), 4));
            q[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), low4),
                                   _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 4), three), 4));
            q[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), low4),
                                   _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 6), three), 4));
            for (int k = 0; k < 4; k++) {
                const __m256i qs = _mm256_sub_epi8(q[k], k32);  // -32..31
                // elements l < 16 use scale 2k, l >= 16 scale 2k + 1
                const __m256 s0 = _mm256_set1_ps(d * (float)sc[2 * k]);
                const __m256 s1 = _mm256_set1_ps(d * (float)sc[2 * k + 1]);
                _mm256_storeu_ps(y + 32 * k, _mm256_mul_ps(s0, _mm256_cvtepi32_ps(s8x8(qs, 0))));
                _mm256_storeu_ps(y + 32 * k + 8, _mm256_mul_ps(s0, _mm256_cvtepi32_ps(s8x8(qs, 1))));
                _mm256_storeu_ps(y + 32 * k + 16, _mm256_mul_ps(s1, _mm256_cvtepi32_ps(s8x8(qs, 2))));
                _mm256_storeu_ps(y + 32 * k + 24, _mm256_mul_ps(s1, _mm256_cvtepi32_ps(s8x8(qs, 3))));
            }
        }
    }
}

static void deq_q8_K(const uint8_t *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, b += sizeof(block_q8_K)) {
        float d;
        memcpy(&d, b, 4);
        for (int j = 0; j < QK_K; j += 32, y += 32)
            store_dq_signed(y, _mm256_loadu_si256((const __m256i *)(b + 4 + j)), d);
    }
}

void cpu_dequantize_row_avx2(dtype t, const void *src, float *dst, int64_t n) {
    const int be = dtype_block_elems(t);
    if (be <= 1 || n <= 0) return;
    const int64_t nb = n / be;
    const uint8_t *b = src;
    switch (t) {
    case DTYPE_Q4_0: deq_q4_0(b, dst, nb); break;
    case DTYPE_Q4_1: deq_q4_1(b, dst, nb); break;
    case DTYPE_Q5_0: deq_q5_0(b, dst, nb); break;
    case DTYPE_Q5_1: deq_q5_1(b, dst, nb); break;
    case DTYPE_Q8_0: deq_q8_0(b, dst, nb); break;
    case DTYPE_Q4_K: deq_k4(b, dst, nb, 0); break;
    case DTYPE_Q5_K: deq_k4(b, dst, nb, 1); break;
    case DTYPE_Q6_K: deq_q6_K(b, dst, nb); break;
    case DTYPE_Q8_K: deq_q8_K(b, dst, nb); break;
    default: dequantize_row(t, src, dst, n); break;
    }
}
