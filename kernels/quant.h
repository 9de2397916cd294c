// kernels/quant.h — ggml's block-quantized weight formats: the block layouts
// (byte for byte as ggml-common.h defines them, so GGUF tensor data is used in
// place) and the reference dequantization every backend must reproduce.
//
// A quantized row of n elements is n / block_elems consecutive blocks; all
// multi-byte fields are little-endian and blocks need not be aligned (use
// the byte offsets below or memcpy, never a struct pointer into file data).
// f16 fields are IEEE half precision.
#ifndef ATOLL_KERNELS_QUANT_H
#define ATOLL_KERNELS_QUANT_H

#include <stdint.h>
#include <string.h>

#include "kernels/backend.h"

#define QK4_0 32
#define QK4_1 32
#define QK5_0 32
#define QK5_1 32
#define QK8_0 32
#define QK_K 256
#define K_SCALE_SIZE 12

// value = d * (q - 8), q = low nibble of qs[j] for element j < 16, high
// nibble of qs[j - 16] for element j >= 16.
typedef struct { uint16_t d; uint8_t qs[QK4_0 / 2]; } block_q4_0;
// value = d * q + m (nibbles as Q4_0)
typedef struct { uint16_t d, m; uint8_t qs[QK4_1 / 2]; } block_q4_1;
// value = d * (q - 16); q = nibble as Q4_0 | bit j of the u32 qh << 4
typedef struct { uint16_t d; uint8_t qh[4]; uint8_t qs[QK5_0 / 2]; } block_q5_0;
// value = d * q + m (5-bit q as Q5_0)
typedef struct { uint16_t d, m; uint8_t qh[4]; uint8_t qs[QK5_1 / 2]; } block_q5_1;
// value = d * q
typedef struct { uint16_t d; int8_t qs[QK8_0]; } block_q8_0;
// 8 sub-blocks of 32 with 6-bit scales and mins packed in `scales`:
// value = d * sc[s] * q - dmin * m[s], q a nibble.
typedef struct { uint16_t d, dmin; uint8_t scales[K_SCALE_SIZE]; uint8_t qs[QK_K / 2]; } block_q4_K;
// as Q4_K with a fifth bit from qh
typedef struct {
    uint16_t d, dmin;
    uint8_t scales[K_SCALE_SIZE];
    uint8_t qh[QK_K / 8];
    uint8_t qs[QK_K / 2];
} block_q5_K;
// 16 sub-blocks of 16 with int8 scales: value = d * scales[s] * (q - 32),
// q = 4 bits from ql | 2 bits from qh << 4.
typedef struct { uint8_t ql[QK_K / 2]; uint8_t qh[QK_K / 4]; int8_t scales[QK_K / 16]; uint16_t d; } block_q6_K;
// value = d * q (d is f32; bsums[i] = sum of qs[16i .. 16i+15])
typedef struct { float d; int8_t qs[QK_K]; int16_t bsums[QK_K / 16]; } block_q8_K;

_Static_assert(sizeof(block_q4_0) == 18, "block_q4_0 layout");
_Static_assert(sizeof(block_q4_1) == 20, "block_q4_1 layout");
_Static_assert(sizeof(block_q5_0) == 22, "block_q5_0 layout");
_Static_assert(sizeof(block_q5_1) == 24, "block_q5_1 layout");
_Static_assert(sizeof(block_q8_0) == 34, "block_q8_0 layout");
_Static_assert(sizeof(block_q4_K) == 144, "block_q4_K layout");
_Static_assert(sizeof(block_q5_K) == 176, "block_q5_K layout");
_Static_assert(sizeof(block_q6_K) == 210, "block_q6_K layout");
_Static_assert(sizeof(block_q8_K) == 292, "block_q8_K layout");

// IEEE half -> float, exact (subnormals, +-0, inf; nan keeps its payload,
// quieted).
static inline float quant_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    uint32_t u;
    if (exp == 0x1f) {
        u = sign | 0x7f800000u | (man << 13) | (man ? 0x00400000u : 0);
    } else if (exp != 0) {
        u = sign | ((exp + 112u) << 23) | (man << 13);
    } else if (man == 0) {
        u = sign;
    } else {  // subnormal: normalize
        int e = 113;
        while (!(man & 0x400u)) { man <<= 1; e--; }
        u = sign | ((uint32_t)e << 23) | ((man & 0x3ffu) << 13);
    }
    float f;
    memcpy(&f, &u, 4);
    return f;
}

// Unaligned little-endian f16 field at p, as float.
static inline float quant_load_f16(const void *p) {
    uint16_t h;
    memcpy(&h, p, 2);
    return quant_f16_to_f32(h);
}

// The 6-bit scale and min of sub-block j (0..7) of a Q4_K/Q5_K block
// (ggml's get_scale_min_k4).
static inline void quant_scale_min_k4(int j, const uint8_t *q, uint8_t *d, uint8_t *m) {
    if (j < 4) {
        *d = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *d = (uint8_t)((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
        *m = (uint8_t)((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

// Dequantizes n elements (a multiple of dtype_block_elems(t)) of the
// quantized type t at src into dst. The results are bit for bit those of
// ggml's dequantize_row_* and of the gguf Python package's
// gguf.quants.dequantize: each value is computed in float32 with the same
// operations in the same order (e.g. Q4_1: (d * q) + m, two roundings;
// Q6_K: (d * scale) * q). Plain types are not handled here.
void dequantize_row(dtype t, const void *src, float *dst, int64_t n);

#endif
