// runtime/util/npy.c — minimal .npy reader and writer (see npy.h).
#include "runtime/util/npy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int npy_write_f32(const char *path, const float *data, size_t rows, size_t cols, atoll_error *e) {
    FILE *f = fopen(path, "wb");
    if (!f) return error_set(e, "cannot write %s: %s", path, strerror(errno));
    char header[128];
    int n = snprintf(header, sizeof header,
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (%zu, %zu), }", rows, cols);
    // magic(6) + version(2) + length(2) + header, padded with spaces to a
    // multiple of 64 and ended by a newline.
    int total = 10 + n + 1;
    int pad = (64 - total % 64) % 64;
    unsigned short len = (unsigned short)(n + pad + 1);
    fwrite("\x93NUMPY\x01\x00", 1, 8, f);
    fwrite(&len, 2, 1, f);
    fwrite(header, 1, n, f);
    for (int i = 0; i < pad; i++) fputc(' ', f);
    fputc('\n', f);
    size_t written = fwrite(data, sizeof(float), rows * cols, f);
    if (fclose(f) != 0 || written != rows * cols)
        return error_set(e, "cannot write %s: disk full?", path);
    return 0;
}

int npy_read(const char *path, npy_array *a, atoll_error *e) {
    memset(a, 0, sizeof *a);
    FILE *f = fopen(path, "rb");
    if (!f) return error_set(e, "cannot open %s: %s", path, strerror(errno));
    unsigned char pre[10];
    char header[1024];
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0 || pre[6] != 1) {
        fclose(f);
        return error_set(e, "%s: not a version 1 .npy file", path);
    }
    size_t hlen = pre[8] | (pre[9] << 8);
    if (hlen >= sizeof header || fread(header, 1, hlen, f) != hlen) {
        fclose(f);
        return error_set(e, "%s: bad .npy header", path);
    }
    header[hlen] = 0;
    int width = strstr(header, "'<f4'") ? 4 : strstr(header, "'<i4'") ? -4 : strstr(header, "'<i8'") ? -8 : 0;
    const char *shape = strstr(header, "'shape': (");
    if (!width || !shape || strstr(header, "'fortran_order': True")) {
        fclose(f);
        return error_set(e, "%s: only C-order <f4, <i4 and <i8 arrays are supported", path);
    }
    a->count = 1;
    for (const char *s = shape + 10; *s && *s != ')' && a->n_dims < 4;) {
        char *end;
        unsigned long v = strtoul(s, &end, 10);
        if (end == s) break;
        a->shape[a->n_dims++] = v;
        a->count *= v;
        s = end;
        while (*s == ',' || *s == ' ') s++;
    }
    size_t esize = width < 0 ? (size_t)-width : (size_t)width;
    void *raw = malloc(a->count * esize + 1);
    int ok = raw && fread(raw, esize, a->count, f) == a->count;
    fclose(f);
    if (!ok) {
        free(raw);
        return error_set(e, "%s: data shorter than its shape", path);
    }
    if (width == 4) {
        a->f32 = raw;
        return 0;
    }
    a->i64 = malloc(a->count * sizeof *a->i64 + 1);
    for (size_t i = 0; a->i64 && i < a->count; i++)
        a->i64[i] = width == -4 ? ((int32_t *)raw)[i] : ((int64_t *)raw)[i];
    free(raw);
    return a->i64 ? 0 : error_set(e, "out of memory");
}

void npy_free(npy_array *a) {
    free(a->f32);
    free(a->i64);
    memset(a, 0, sizeof *a);
}
