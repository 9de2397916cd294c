// kernels/cpu/cpu_internal.h — private state of the CPU backend shared by its
// files: the impl struct, the ISA switch, half-precision conversions and the
// prototypes of the per-file op implementations.
#ifndef ATOLL_KERNELS_CPU_INTERNAL_H
#define ATOLL_KERNELS_CPU_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/quant.h"

typedef enum { CPU_ISA_SCALAR = 0, CPU_ISA_AVX2 = 1 } cpu_isa;

typedef struct {
    int n_threads;  // >= 1
    cpu_isa isa;
    void *scratch;          // grown on demand by cpu_scratch, 64-byte aligned
    size_t scratch_bytes;
} cpu_impl;

static inline cpu_impl *cpu_of(backend *b) { return (cpu_impl *)b->impl; }

// The backend's scratch buffer with at least `bytes` bytes (contents not
// kept when it grows). Called outside parallel regions; aborts when out of
// memory, as a device fault would.
void *cpu_scratch(cpu_impl *c, size_t bytes);

// ---- scalar half conversions (exact, incl. subnormals, inf, nan) ----------
static inline float cpu_bf16_to_f32(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline float cpu_f16_to_f32(uint16_t h) { return quant_f16_to_f32(h); }

// Converts n elements of `type` starting at src to F32.
void cpu_convert_row_scalar(float *dst, const void *src, dtype type, int n);
void cpu_convert_row_avx2(float *dst, const void *src, dtype type, int n);
// dequantize_row (kernels/quant.c) with AVX2, bit for bit the same values.
void cpu_dequantize_row_avx2(dtype t, const void *src, float *dst, int64_t n);

// ---- matmul kernels over a range of output rows [r0, r1) ------------------
void cpu_matmul_rows_scalar(float *out, int ldc, const float *x, const weight_matrix *w,
                            const float *bias, int n, int r0, int r1);
void cpu_matmul_rows_avx2(float *out, int ldc, const float *x, const weight_matrix *w,
                          const float *bias, int n, int r0, int r1);

// ---- quantized weights (Q4_0, Q4_1, Q8_0) against x rounded to int16 ------
// x rows as blocks of 32: q = round(x / d) in int16, d = max|x| / 32767 and
// s = d * sum(q) per block (matmul_quant_avx2.c).
typedef struct {
    int16_t *q;  // [n, K]
    float *d;    // [n, nb]
    float *s;    // [n, nb]
    int K, nb;   // nb = K / 32
} cpu_x16;

// 1 if cpu_matmul_rows_x16_avx2 handles weights of type t.
int cpu_x16_kernel_supported(dtype t);
void cpu_quantize_x16_avx2(const float *x, const cpu_x16 *a, int i0, int i1);
void cpu_matmul_rows_x16_avx2(float *out, int ldc, const cpu_x16 *a, const weight_matrix *w,
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
