// tests/fuzz/fuzz_gguf.c — libFuzzer harness of the GGUF parser
// (runtime/model/gguf.c): parses each input from memory, then reads every
// key through every typed accessor, looks every tensor up by name, touches
// the first and last byte of its data and dequantizes its first row, so
// that a wrong bound anywhere is an AddressSanitizer report.
#include <stdint.h>
#include <stdlib.h>

#include "kernels/quant.h"
#include "runtime/model/gguf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    gguf_file f;
    atoll_error e;
    if (gguf_open_buffer(&f, "fuzz.gguf", data, size, &e)) return 0;
    volatile unsigned sink = 0;
    for (int64_t i = 0; i < f.n_kv; i++) {
        const char *key = f.kv[i].key;
        uint32_t u;
        int32_t s;
        float x;
        int b;
        const char *str;
        const char *const *strs;
        float *fa;
        int32_t *ia;
        size_t n;
        sink += gguf_find(&f, key) == &f.kv[i].value;
        sink += (unsigned)gguf_read_u32(&f, key, &u, &e) + (unsigned)gguf_read_i32(&f, key, &s, &e) +
                (unsigned)gguf_read_f32(&f, key, &x, &e) + (unsigned)gguf_read_bool(&f, key, &b, &e);
        if (gguf_read_string(&f, key, &str, &e) == 0) sink += (unsigned char)str[0];
        if (gguf_read_string_array(&f, key, &strs, &n, &e) == 0 && n) sink += (unsigned char)strs[n - 1][0];
        if (gguf_read_f32_array(&f, key, &fa, &n, &e) == 0) free(fa);
        if (gguf_read_i32_array(&f, key, &ia, &n, &e) == 0) free(ia);
        sink += gguf_get_string(&f, key) != NULL;
    }
    for (int64_t i = 0; i < f.n_tensors; i++) {
        const gguf_tensor *t = &f.tensors[i];
        sink += gguf_find_tensor(&f, t->name) == t;
        if (t->bytes) sink += ((const uint8_t *)t->data)[0] + ((const uint8_t *)t->data)[t->bytes - 1];
        // The first row, dequantized (rows are ne[0] elements).
        if (dtype_is_quantized(t->type) && t->ne[0] > 0 && t->ne[0] <= 4096 && t->bytes) {
            float row[4096];
            dequantize_row(t->type, t->data, row, t->ne[0]);
            sink += row[0] == 0.0f;
        }
    }
    (void)sink;
    gguf_close(&f);
    return 0;
}
