// kernels/backend.c — the backend-independent parts of backend.h: dtype names,
// sizes and block geometry, and backend_destroy.
#include "kernels/backend.h"

static const struct {
    const char *name;
    int block_elems;
    size_t block_bytes;
} dtype_table[DTYPE_COUNT] = {
    // Block byte sizes as ggml-common.h's block_* structs (kernels/quant.h).
    [DTYPE_F32] = {"f32", 1, 4},      [DTYPE_F16] = {"f16", 1, 2},
    [DTYPE_BF16] = {"bf16", 1, 2},    [DTYPE_Q4_0] = {"q4_0", 32, 18},
    [DTYPE_Q4_1] = {"q4_1", 32, 20},  [DTYPE_Q5_0] = {"q5_0", 32, 22},
    [DTYPE_Q5_1] = {"q5_1", 32, 24},  [DTYPE_Q8_0] = {"q8_0", 32, 34},
    [DTYPE_Q4_K] = {"q4_k", 256, 144}, [DTYPE_Q5_K] = {"q5_k", 256, 176},
    [DTYPE_Q6_K] = {"q6_k", 256, 210}, [DTYPE_Q8_K] = {"q8_k", 256, 292},
};

static int dtype_valid(dtype t) { return (int)t >= 0 && t < DTYPE_COUNT; }

const char *dtype_name(dtype t) { return dtype_valid(t) ? dtype_table[t].name : "unknown"; }

size_t dtype_size(dtype t) {
    return dtype_valid(t) && dtype_table[t].block_elems == 1 ? dtype_table[t].block_bytes : 0;
}

int dtype_is_quantized(dtype t) { return dtype_valid(t) && dtype_table[t].block_elems > 1; }

int dtype_block_elems(dtype t) { return dtype_valid(t) ? dtype_table[t].block_elems : 0; }

size_t dtype_block_bytes(dtype t) { return dtype_valid(t) ? dtype_table[t].block_bytes : 0; }

size_t dtype_row_bytes(dtype t, int64_t cols) {
    if (!dtype_valid(t) || cols < 0 || cols % dtype_table[t].block_elems) return 0;
    return (size_t)(cols / dtype_table[t].block_elems) * dtype_table[t].block_bytes;
}

void backend_destroy(backend *b) {
    if (b) b->ops->destroy(b);
}
