// kernels/cpu/vec.c — portable scalar vector helpers: dtype row conversion to
// F32 (quantized rows through kernels/quant.c), dot product and axpy.
#include "kernels/cpu/cpu_internal.h"

void cpu_convert_row_scalar(float *dst, const void *src, dtype type, int n) {
    switch (type) {
    case DTYPE_F32:
        if (n > 0) memcpy(dst, src, (size_t)n * sizeof(float));
        break;
    case DTYPE_F16: {
        const uint16_t *s = src;
        for (int i = 0; i < n; i++) dst[i] = cpu_f16_to_f32(s[i]);
        break;
    }
    case DTYPE_BF16: {
        const uint16_t *s = src;
        for (int i = 0; i < n; i++) dst[i] = cpu_bf16_to_f32(s[i]);
        break;
    }
    default:
        dequantize_row(type, src, dst, n);
        break;
    }
}

float cpu_dot_scalar(const float *a, const float *b, int n) {
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += a[i] * b[i];
        s1 += a[i + 1] * b[i + 1];
        s2 += a[i + 2] * b[i + 2];
        s3 += a[i + 3] * b[i + 3];
    }
    for (; i < n; i++) s0 += a[i] * b[i];
    return (s0 + s1) + (s2 + s3);
}

void cpu_axpy_scalar(float *y, float a, const float *x, int n) {
    for (int i = 0; i < n; i++) y[i] += a * x[i];
}
