// kernels/cpu/cpu_internal.h — private state of the CPU backend shared by its
// files: the impl struct, the ISA switch, half-precision conversions and the
// prototypes of the per-file op implementations.
#ifndef ATOLL_KERNELS_CPU_INTERNAL_H
#define ATOLL_KERNELS_CPU_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "kernels/backend.h"

typedef enum { CPU_ISA_SCALAR = 0, CPU_ISA_AVX2 = 1 } cpu_isa;

typedef struct {
    int n_threads;  // >= 1
    cpu_isa isa;
} cpu_impl;

static inline cpu_impl *cpu_of(backend *b) { return (cpu_impl *)b->impl; }

// ---- scalar half conversions (exact, incl. subnormals, inf, nan) ----------
static inline float cpu_bf16_to_f32(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline float cpu_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    uint32_t u;
    if (exp == 0x1f) {             // inf / nan (nan keeps its payload, quieted)
        u = sign | 0x7f800000u | (man << 13) | (man ? 0x00400000u : 0);
    } else if (exp != 0) {         // normal
        u = sign | ((exp + 112u) << 23) | (man << 13);
    } else if (man == 0) {         // +-0
        u = sign;
    } else {                       // subnormal: normalize
        int e = 113;               // exponent of 2^-14 in f32 bias is 113
        while (!(man & 0x400u)) { man <<= 1; e--; }
        u = sign | ((uint32_t)e << 23) | ((man & 0x3ffu) << 13);
    }
    float f;
    memcpy(&f, &u, 4);
    return f;
}

// Converts n elements of `type` starting at src to F32.
void cpu_convert_row_scalar(float *dst, const void *src, dtype type, int n);
void cpu_convert_row_avx2(float *dst, const void *src, dtype type, int n);

// ---- matmul kernels over a range of output rows [r0, r1) ------------------
void cpu_matmul_rows_scalar(float *out, int ldc, const float *x, const weight_matrix *w,
                            const float *bias, int n, int r0, int r1);
void cpu_matmul_rows_avx2(float *out, int ldc, const float *x, const weight_matrix *w,
                          const float *bias, int n, int r0, int r1);

// ---- small vector helpers used by attention ---------------------------------
float cpu_dot_scalar(const float *a, const float *b, int n);
void cpu_axpy_scalar(float *y, float a, const float *x, int n);  // y += a*x
float cpu_dot_avx2(const float *a, const float *b, int n);
void cpu_axpy_avx2(float *y, float a, const float *x, int n);

// ---- op entry points (backend_ops members) ----------------------------------
void cpu_matmul(backend *b, float *out, int ldc, const float *x, const weight_matrix *w,
                const float *bias, int n);
void cpu_embedding(backend *b, float *out, const weight_matrix *table, const int32_t *ids,
                   int n);
void cpu_rmsnorm(backend *b, float *out, const float *x, const float *weight, int n, int dim,
                 float eps);
void cpu_rope(backend *b, float *x, const int32_t *positions, int n_tokens, int n_heads,
              int head_dim, int rot_dim, int interleaved, const float *inv_freq);
void cpu_silu_mul(backend *b, float *out, const float *gate_up, int n, int dim);
void cpu_add(backend *b, float *x, const float *y, size_t count);
void cpu_softmax(backend *b, float *x, int n, int dim);
void cpu_argmax(backend *b, int32_t *out, const float *x, int n, int dim);
void cpu_kv_store(backend *b, const kv_layer *cache, const attention_batch *batch,
                  const float *k, const float *v);
void cpu_attention(backend *b, float *out, const float *q, const kv_layer *cache,
                   const attention_batch *batch, int n_heads, float scale);

// Work below this many elements runs on one thread (fork/join costs more).
#define CPU_PAR_MIN_ELEMS 16384

#endif
