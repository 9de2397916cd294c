// kernels/backend.h — the one compute interface every device implements.
//
// A backend is a device with its own memory and an in-order stream of work:
// buffers are allocated on it, filled with host<->device copies, and the ops
// below are enqueued on its stream; backend_synchronize() waits for all of
// them. The CPU backend runs each op before returning, the CUDA backend will
// launch kernels on a cudaStream_t; callers write the same code for both.
//
// All pointers passed to ops are device pointers. Activations are F32; weight
// matrices may be F32, F16, BF16 or one of ggml's block-quantized types.
// Matrices are row-major; a weight matrix has the Hugging Face Linear layout
// [out_features, in_features]. A row of a quantized matrix is cols /
// dtype_block_elems(type) consecutive blocks (layouts in kernels/quant.h), so
// its cols must be a multiple of the block size.
#ifndef ATOLL_KERNELS_BACKEND_H
#define ATOLL_KERNELS_BACKEND_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    DTYPE_F32 = 0,
    DTYPE_F16 = 1,
    DTYPE_BF16 = 2,
    // Block-quantized (ggml's layouts, kernels/quant.h): 32 elements per block
    DTYPE_Q4_0,
    DTYPE_Q4_1,
    DTYPE_Q5_0,
    DTYPE_Q5_1,
    DTYPE_Q8_0,
    // ... and 256 per block (K-quants)
    DTYPE_Q4_K,
    DTYPE_Q5_K,
    DTYPE_Q6_K,
    DTYPE_Q8_K,
    DTYPE_COUNT
} dtype;

const char *dtype_name(dtype t);
// Bytes per element of the plain types (F32, F16, BF16); 0 for block types,
// which have no per-element size: use dtype_row_bytes.
size_t dtype_size(dtype t);
// 1 for the block-quantized types.
int dtype_is_quantized(dtype t);
// Elements per block: 1 for plain types, 32 or 256 for quantized ones.
int dtype_block_elems(dtype t);
// Bytes per block (dtype_size for plain types); 0 for an invalid dtype.
size_t dtype_block_bytes(dtype t);
// Bytes of a row of `cols` elements; cols must be a multiple of
// dtype_block_elems(t) (0 otherwise, and for an invalid dtype).
size_t dtype_row_bytes(dtype t, int64_t cols);

// A weight matrix on the device: [rows, cols] of `type`, rows = out features.
typedef struct {
    const void *data;  // [rows, cols]
    dtype type;
    int rows;
    int cols;
} weight_matrix;

// Paged KV cache of one layer: fixed-size blocks shared by all sequences.
// A sequence's position p lives in block block_table[p / block_size] at slot
// p % block_size.
typedef struct {
    float *k;  // [n_blocks, block_size, n_kv_heads, head_dim]
    float *v;  // [n_blocks, block_size, n_kv_heads, head_dim]
    int n_blocks;
    int block_size;
    int n_kv_heads;
    int head_dim;
} kv_layer;

// Where each token of a step belongs: its sequence and its position in it.
// Device-resident copy of the parts of a step plan that kernels read.
typedef struct {
    int n_tokens;
    int n_seqs;
    const int32_t *token_seq;       // [n_tokens] index of the token's sequence
    const int32_t *positions;       // [n_tokens] position within that sequence
    const int32_t *block_tables;    // [n_seqs, max_blocks_per_seq]
    int max_blocks_per_seq;
} attention_batch;

typedef struct backend backend;

typedef struct {
    const char *name;

    // Memory and stream.
    void *(*alloc)(backend *b, size_t bytes);  // NULL when out of memory
    void (*free)(backend *b, void *ptr);
    void (*copy_to_device)(backend *b, void *dst, const void *src, size_t bytes);
    void (*copy_to_host)(backend *b, void *dst, const void *src, size_t bytes);
    void (*synchronize)(backend *b);
    // Optional (NULL if absent): a device view of host memory that stays
    // valid while the host memory does, without copying (weights mmapped
    // from a file on a device that can read host memory).
    const void *(*view_host)(backend *b, const void *host, size_t bytes);
    // Bytes the device can still allocate.
    size_t (*free_memory)(backend *b);
    // Releases the device and the backend itself (backend_destroy calls it).
    void (*destroy)(backend *b);

    // out[i, :] = table[ids[i], :] converted to F32 (quantized tables are
    // dequantized exactly as kernels/quant.c defines).  table: [vocab, dim]
    void (*embedding)(backend *b, float *out, const weight_matrix *table,
                      const int32_t *ids, int n);
    // out[i, :] = x[i, :] / rms(x[i, :]) * weight.  x, out: [n, dim]; weight: [dim]
    // out may equal x.
    void (*rmsnorm)(backend *b, float *out, const float *x, const float *weight,
                    int n, int dim, float eps);
    // Rotary embedding in place on x: [n_tokens, n_heads, head_dim]. The first
    // rot_dim dims of each head rotate, the rest pass through. Pair j uses
    // frequency inv_freq[j] (j < rot_dim/2); pairs are (j, j + rot_dim/2)
    // when !interleaved (Llama "rotate_half") and (2j, 2j+1) when interleaved
    // (GLM, GPT-J).
    void (*rope)(backend *b, float *x, const int32_t *positions, int n_tokens,
                 int n_heads, int head_dim, int rot_dim, int interleaved,
                 const float *inv_freq);
    // out[i, j] = sum_k x[i, k] * w[j, k] (+ bias[j]).
    // x: [n, w->cols] with row stride w->cols; out: [n, w->rows] with row
    // stride ldc (>= w->rows); bias: [w->rows] or NULL. For quantized w a
    // backend may also round x (the CPU's AVX2 kernels for Q4_0/Q4_1/Q8_0
    // round each block of 32 x values to int16 with a float scale: a
    // relative error of at most 2^-16 of the block's largest |x|).
    void (*matmul)(backend *b, float *out, int ldc, const float *x,
                   const weight_matrix *w, const float *bias, int n);
    // out[i, j] = silu(gate_up[i, j]) * gate_up[i, dim + j].
    // gate_up: [n, 2*dim]; out: [n, dim]
    void (*silu_mul)(backend *b, float *out, const float *gate_up, int n, int dim);
    // x[i] += y[i] for i < count
    void (*add)(backend *b, float *x, const float *y, size_t count);
    // Write k, v ([n_tokens, n_kv_heads, head_dim]) of each token into the
    // cache slot of its (sequence, position).
    void (*kv_store)(backend *b, const kv_layer *cache, const attention_batch *batch,
                     const float *k, const float *v);
    // Causal attention over the paged cache: the token at position p of a
    // sequence attends to positions 0..p of that sequence. GQA: query head h
    // reads KV head h / (n_heads / n_kv_heads).
    // q, out: [n_tokens, n_heads, head_dim]
    void (*attention)(backend *b, float *out, const float *q, const kv_layer *cache,
                      const attention_batch *batch, int n_heads, float scale);
    // Softmax in place over each row of x: [n, dim]
    void (*softmax)(backend *b, float *x, int n, int dim);
    // out[i] = index of the largest x[i, :] (the first on ties). x: [n, dim]
    void (*argmax)(backend *b, int32_t *out, const float *x, int n, int dim);
} backend_ops;

struct backend {
    const backend_ops *ops;
    void *impl;
};

// Creates the CPU backend with n_threads worker threads (0: all cores).
backend *backend_cpu_create(int n_threads);
// Destroys any backend through its own destroy slot; NULL is ignored.
void backend_destroy(backend *b);

#endif
