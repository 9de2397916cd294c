// kernels/cpu/vec_avx2.c — AVX2/FMA/F16C vector helpers: dtype row conversion
// to F32, dot product and axpy. Compiled with -mavx2 -mfma -mf16c; called only
// when the CPU has them.
#include <immintrin.h>

#include "kernels/cpu/cpu_internal.h"

void cpu_convert_row_avx2(float *dst, const void *src, dtype type, int n) {
    int i = 0;
    switch (type) {
    case DTYPE_F32:
        if (n > 0) memcpy(dst, src, (size_t)n * sizeof(float));
        return;
    case DTYPE_F16: {
        const uint16_t *s = src;
        for (; i + 8 <= n; i += 8)
            _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(s + i))));
        for (; i < n; i++) dst[i] = cpu_f16_to_f32(s[i]);
        return;
    }
    case DTYPE_BF16: {
        const uint16_t *s = src;
        for (; i + 8 <= n; i += 8) {
            __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(s + i)));
            _mm256_storeu_ps(dst + i, _mm256_castsi256_ps(_mm256_slli_epi32(v, 16)));
        }
        for (; i < n; i++) dst[i] = cpu_bf16_to_f32(s[i]);
        return;
    }
    default:  // quantized: the reference values (dequant_avx2.c)
        cpu_dequantize_row_avx2(type, src, dst, n);
        return;
    }
}

static inline float hsum256(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

float cpu_dot_avx2(const float *a, const float *b, int n) {
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
    }
    for (; i + 8 <= n; i += 8)
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    float s = hsum256(_mm256_add_ps(s0, s1));
    for (; i < n; i++) s += a[i] * b[i];
    return s;
}

void cpu_axpy_avx2(float *y, float a, const float *x, int n) {
    const __m256 va = _mm256_set1_ps(a);
    int i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
    for (; i < n; i++) y[i] += a * x[i];
}
