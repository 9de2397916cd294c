// kernels/backend.c — the backend-independent parts of backend.h: dtype names
// and sizes, and backend_destroy.
#include "kernels/backend.h"

const char *dtype_name(dtype t) {
    switch (t) {
    case DTYPE_F32: return "f32";
    case DTYPE_F16: return "f16";
    case DTYPE_BF16: return "bf16";
    default: return "unknown";
    }
}

size_t dtype_size(dtype t) {
    switch (t) {
    case DTYPE_F32: return 4;
    case DTYPE_F16: return 2;
    case DTYPE_BF16: return 2;
    default: return 0;
    }
}

void backend_destroy(backend *b) {
    if (b) b->ops->destroy(b);
}
