// kernels/cpu/backend_cpu.c — the CPU backend object: its ops table, memory
// (64-byte aligned host malloc, memcpy copies), thread count and the choice
// of instruction set (runtime detection, ATOLL_CPU_ISA=scalar override).
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/backend_cpu.h"
#include "kernels/cpu/cpu_internal.h"

static void *cpu_alloc(backend *b, size_t bytes) {
    (void)b;
    size_t sz = (bytes + 63) & ~(size_t)63;
    if (sz == 0) sz = 64;
    if (sz < bytes) return NULL;  // overflow
    return aligned_alloc(64, sz);
}

static void cpu_free(backend *b, void *ptr) {
    (void)b;
    free(ptr);
}

static void cpu_copy(backend *b, void *dst, const void *src, size_t bytes) {
    (void)b;
    if (bytes) memcpy(dst, src, bytes);
}

static void cpu_synchronize(backend *b) { (void)b; }

static const void *cpu_view_host(backend *b, const void *host, size_t bytes) {
    (void)b;
    (void)bytes;
    return host;
}

static size_t cpu_free_memory(backend *b) {
    (void)b;
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return 0;
    char line[256];
    size_t kb = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long long v;
        if (sscanf(line, "MemAvailable: %llu kB", &v) == 1) {
            kb = (size_t)v;
            break;
        }
    }
    fclose(f);
    return kb * 1024;
}

static void cpu_destroy(backend *b);

static const backend_ops cpu_ops = {
    .name = "cpu",
    .alloc = cpu_alloc,
    .free = cpu_free,
    .copy_to_device = cpu_copy,
    .copy_to_host = cpu_copy,
    .synchronize = cpu_synchronize,
    .destroy = cpu_destroy,
    .view_host = cpu_view_host,
    .free_memory = cpu_free_memory,
    .embedding = cpu_embedding,
    .rmsnorm = cpu_rmsnorm,
    .rope = cpu_rope,
    .matmul = cpu_matmul,
    .silu_mul = cpu_silu_mul,
    .add = cpu_add,
    .kv_store = cpu_kv_store,
    .attention = cpu_attention,
    .softmax = cpu_softmax,
    .argmax = cpu_argmax,
};

static cpu_isa detect_isa(void) {
    const char *env = getenv("ATOLL_CPU_ISA");
    int have_avx2 = 0;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    have_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                __builtin_cpu_supports("f16c");
#endif
    if (env && *env) {
        if (strcmp(env, "scalar") == 0) return CPU_ISA_SCALAR;
        if (strcmp(env, "avx2") == 0) {
            if (!have_avx2)
                fprintf(stderr, "atoll: ATOLL_CPU_ISA=avx2 but this CPU lacks AVX2/FMA/F16C; "
                                "using scalar kernels\n");
            return have_avx2 ? CPU_ISA_AVX2 : CPU_ISA_SCALAR;
        }
        if (strcmp(env, "auto") != 0)
            fprintf(stderr, "atoll: unknown ATOLL_CPU_ISA=%s (expected scalar, avx2 or auto); "
                            "detecting\n", env);
    }
    return have_avx2 ? CPU_ISA_AVX2 : CPU_ISA_SCALAR;
}

backend *backend_cpu_create(int n_threads) {
    backend *b = calloc(1, sizeof *b);
    cpu_impl *impl = calloc(1, sizeof *impl);
    if (!b || !impl) {
        free(b);
        free(impl);
        return NULL;
    }
    impl->n_threads = n_threads > 0 ? n_threads : omp_get_num_procs();
    if (impl->n_threads < 1) impl->n_threads = 1;
    impl->isa = detect_isa();
    b->ops = &cpu_ops;
    b->impl = impl;
    return b;
}

static void cpu_destroy(backend *b) {
    free(((cpu_impl *)b->impl)->scratch);
    free(b->impl);
    free(b);
}

void *cpu_scratch(cpu_impl *c, size_t bytes) {
    if (bytes <= c->scratch_bytes) return c->scratch;
    size_t sz = (bytes + 63) & ~(size_t)63;
    void *p = sz >= bytes ? aligned_alloc(64, sz) : NULL;
    if (!p) {
        fprintf(stderr, "atoll: cpu backend: out of memory for %zu bytes of scratch\n", bytes);
        abort();
    }
    free(c->scratch);
    c->scratch = p;
    c->scratch_bytes = sz;
    return p;
}

const char *backend_cpu_isa(const backend *b) {
    if (!b || b->ops != &cpu_ops) return NULL;
    return ((const cpu_impl *)b->impl)->isa == CPU_ISA_AVX2 ? "avx2" : "scalar";
}

int backend_cpu_threads(const backend *b) {
    if (!b || b->ops != &cpu_ops) return 0;
    return ((const cpu_impl *)b->impl)->n_threads;
}
