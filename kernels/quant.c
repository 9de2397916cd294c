// kernels/quant.c — the reference dequantization of ggml's block formats (see
// quant.h): scalar, one function per type, the arithmetic of ggml's
// dequantize_row_* and of gguf.quants.dequantize in float32.
//
// Bit-exactness needs every multiply and add rounded as the reference rounds
// it. With today's formats a fused `d * q + m` would even give the same
// result (an f16 scale times a small integer is exact in float32), but this
// file is compiled with -ffp-contract=off (CMakeLists.txt) so that no formula
// is ever silently fused into an FMA.
#include "kernels/quant.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

static void deq_q4_0(const uint8_t *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, b += sizeof(block_q4_0), y += QK4_0) {
        const float d = quant_load_f16(b);
        const uint8_t *qs = b + 2;
        for (int j = 0; j < QK4_0 / 2; j++) {
            y[j] = d * (float)((qs[j] & 0x0F) - 8);
            y[j + QK4_0 / 2] = d * (float)((qs[j] >> 4) - 8);
        }
    }
}

static void deq_q4_1(const uint8_t *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, b += sizeof(block_q4_1), y += QK4_1) {
        const float d = quant_load_f16(b), m = quant_load_f16(b + 2);
        const uint8_t *qs = b + 4;
        for (int j = 0; j < QK4_1 / 2; j++) {
            const float v0 = d * (float)(qs[j] & 0x0F), v1 = d * (float)(qs[j] >> 4);
            y[j] = v0 + m;
            y[j + QK4_1 / 2] = v1 + m;
        }
    }
}

static void deq_q5_0(const uint8_t *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, b += sizeof(block_q5_0), y += QK5_0) {
        const float d = quant_load_f16(b);
        uint32_t qh;
        memcpy(&qh, b + 2, 4);
        const uint8_t *qs = b + 6;
        for (int j = 0; j < QK5_0 / 2; j++) {
            const int xh0 = (int)(((qh >> j) << 4) & 0x10);
            const int xh1 = (int)((qh >> (j + 12)) & 0x10);
            y[j] = d * (float)(((qs[j] & 0x0F) | xh0) - 16);
            y[j + QK5_0 / 2] = d * (float)(((qs[j] >> 4) | xh1) - 16);
        }
    }
}

static void deq_q5_1(const uint8_t *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, b += sizeof(block_q5_1), y += QK5_1) {
        const float d = quant_load_f16(b), m = quant_load_f16(b + 2);
        uint32_t qh;
        memcpy(&qh, b + 4, 4);
        const uint8_t *qs = b + 8;
        for (int j = 0; j < QK5_1 / 2; j++) {
            const int xh0 = (int)(((qh >> j) << 4) & 0x10);
            const int xh1 = (int)((qh >> (j + 12)) & 0x10);
            const float v0 = d * (float)((qs[j] & 0x0F) | xh0);
            const float v1 = d * (float)((qs[j] >> 4) | xh1);
            y[j] = v0 + m;
            y[j + QK5_1 / 2] = v1 + m;
        }
    }
}

static void deq_q8_0(const uint8_t *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, b += sizeof(block_q8_0), y += QK8_0) {
        const float d = quant_load_f16(b);
        const int8_t *qs = (const int8_t *)(b + 2);
        for (int j = 0; j < QK8_0; j++) y[j] = (float)qs[j] * d;
    }
}

static void deq_q4_K(const uint8_t *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, b += sizeof(block_q4_K)) {
        const float d = quant_load_f16(b), min = quant_load_f16(b + 2);
        const uint8_t *scales = b + 4, *q = b + 4 + K_SCALE_SIZE;
        for (int j = 0, is = 0; j < QK_K; j += 64, is += 2, q += 32) {
            uint8_t sc, m;
            quant_scale_min_k4(is, scales, &sc, &m);
            const float d1 = d * (float)sc, m1 = min * (float)m;
            quant_scale_min_k4(is + 1, scales, &sc, &m);
            const float d2 = d * (float)sc, m2 = min * (float)m;
            for (int l = 0; l < 32; l++) {
                const float v = d1 * (float)(q[l] & 0xF);
                *y++ = v - m1;
            }
            for (int l = 0; l < 32; l++) {
                const float v = d2 * (float)(q[l] >> 4);
                *y++ = v - m2;
            }
        }
    }
}

static void deq_q5_K(const uint8_t *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, b += sizeof(block_q5_K)) {
        const float d = quant_load_f16(b), min = quant_load_f16(b + 2);
        const uint8_t *scales = b + 4, *qh = b + 4 + K_SCALE_SIZE, *ql = qh + QK_K / 8;
        unsigned u1 = 1, u2 = 2;
        for (int j = 0, is = 0; j < QK_K; j += 64, is += 2, ql += 32, u1 <<= 2, u2 <<= 2) {
            uint8_t sc, m;
            quant_scale_min_k4(is, scales, &sc, &m);
            const float d1 = d * (float)sc, m1 = min * (float)m;
            quant_scale_min_k4(is + 1, scales, &sc, &m);
            const float d2 = d * (float)sc, m2 = min * (float)m;
            for (int l = 0; l < 32; l++) {
                const float v = d1 * (float)((ql[l] & 0xF) + (qh[l] & u1 ? 16 : 0));
                *y++ = v - m1;
            }
            for (int l = 0; l < 32; l++) {
                const float v = d2 * (float)((ql[l] >> 4) + (qh[l] & u2 ? 16 : 0));
                *y++ = v - m2;
            }
        }
    }
}

static void deq_q6_K(const uint8_t *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, b += sizeof(block_q6_K)) {
        const uint8_t *ql = b, *qh = b + QK_K / 2;
        const int8_t *sc = (const int8_t *)(b + QK_K / 2 + QK_K / 4);
        const float d = quant_load_f16(b + QK_K / 2 + QK_K / 4 + QK_K / 16);
        for (int n = 0; n < QK_K; n += 128, y += 128, ql += 64, qh += 32, sc += 8) {
            for (int l = 0; l < 32; l++) {
                const int is = l / 16;
                const int q1 = (int)((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
                const int q2 = (int)((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
                const int q3 = (int)((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
                const int q4 = (int)((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
                y[l] = (d * (float)sc[is]) * (float)q1;
                y[l + 32] = (d * (float)sc[is + 2]) * (float)q2;
                y[l + 64] = (d * (float)sc[is + 4]) * (float)q3;
                y[l + 96] = (d * (float)sc[is + 6]) * (float)q4;
            }
        }
    }
}

static void deq_q8_K(const uint8_t *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, b += sizeof(block_q8_K), y += QK_K) {
        float d;
        memcpy(&d, b, 4);
        const int8_t *qs = (const int8_t *)(b + 4);
        for (int j = 0; j < QK_K; j++) y[j] = d * (float)qs[j];
    }
}

void dequantize_row(dtype t, const void *src, float *dst, int64_t n) {
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
    case DTYPE_Q4_K: deq_q4_K(b, dst, nb); break;
    case DTYPE_Q5_K: deq_q5_K(b, dst, nb); break;
    case DTYPE_Q6_K: deq_q6_K(b, dst, nb); break;
    case DTYPE_Q8_K: deq_q8_K(b, dst, nb); break;
    default: break;
    }
}
