// runtime/model/safetensors.c — safetensors header parsing and validation.
//
// Layout: u64 little-endian header length N, N bytes of JSON
// {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, ...,
// "__metadata__": {...}}, then the data area; offsets are relative to it.
#include "runtime/model/safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int safetensors_dtype(const char *s, dtype *out) {
    static const struct { const char *name; dtype type; } known[] = {
        {"F32", DTYPE_F32}, {"F16", DTYPE_F16}, {"BF16", DTYPE_BF16},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(s, known[i].name) == 0) { *out = known[i].type; return 0; }
    return -1;
}

static int safetensors_parse_tensor(safetensors_file *f, const char *name, json_t *info,
                                    const uint8_t *data, size_t data_bytes, atoll_error *e) {
    safetensors_tensor *t = &f->tensors[f->n_tensors];
    memset(t, 0, sizeof *t);
    json_t *jtype = json_object_get(info, "dtype");
    json_t *jshape = json_object_get(info, "shape");
    json_t *joffs = json_object_get(info, "data_offsets");
    if (!json_is_object(info) || !json_is_string(jtype) || !json_is_array(jshape) ||
        !json_is_array(joffs) || json_array_size(joffs) != 2)
        return error_set(e, "%s: tensor '%s' needs dtype, shape and data_offsets [begin, end]",
                         f->path, name);
    if (safetensors_dtype(json_string_value(jtype), &t->type))
        return error_set(e, "%s: tensor '%s' has unsupported dtype %s (supported: F32, F16, BF16)",
                         f->path, name, json_string_value(jtype));
    size_t n_dims = json_array_size(jshape);
    if (n_dims > SAFETENSORS_MAX_DIMS)
        return error_set(e, "%s: tensor '%s' has %zu dimensions (at most %d)", f->path, name,
                         n_dims, SAFETENSORS_MAX_DIMS);
    uint64_t numel = 1;
    for (size_t d = 0; d < n_dims; d++) {
        json_t *dim = json_array_get(jshape, d);
        if (!json_is_integer(dim) || json_integer_value(dim) < 0 ||
            json_integer_value(dim) > (json_int_t)1 << 40)
            return error_set(e, "%s: tensor '%s' has an invalid shape", f->path, name);
        t->shape[d] = json_integer_value(dim);
        if (t->shape[d] && numel > UINT64_MAX / (uint64_t)t->shape[d])
            return error_set(e, "%s: tensor '%s' shape overflows", f->path, name);
        numel *= (uint64_t)t->shape[d];
    }
    t->n_dims = (int)n_dims;
    json_t *jb = json_array_get(joffs, 0), *je = json_array_get(joffs, 1);
    if (!json_is_integer(jb) || !json_is_integer(je) || json_integer_value(jb) < 0 ||
        json_integer_value(je) < json_integer_value(jb))
        return error_set(e, "%s: tensor '%s' has invalid data_offsets", f->path, name);
    uint64_t begin = (uint64_t)json_integer_value(jb), end = (uint64_t)json_integer_value(je);
    if (end > data_bytes)
        return error_set(e, "%s: tensor '%s' data_offsets [%llu, %llu] run past the end of the "
                         "data (%zu bytes; file truncated?)", f->path, name,
                         (unsigned long long)begin, (unsigned long long)end, data_bytes);
    if (numel > UINT64_MAX / dtype_size(t->type) || end - begin != numel * dtype_size(t->type))
        return error_set(e, "%s: tensor '%s' spans %llu bytes but its shape and dtype need %llu",
                         f->path, name, (unsigned long long)(end - begin),
                         (unsigned long long)(numel * dtype_size(t->type)));
    t->name = strdup(name);
    if (!t->name) return error_set(e, "out of memory");
    t->data = data + begin;
    t->bytes = end - begin;
    f->n_tensors++;
    return 0;
}

int safetensors_open(safetensors_file *f, const char *path, atoll_error *e) {
    memset(f, 0, sizeof *f);
    f->path = strdup(path);
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        error_set(e, "cannot open %s: %s", path, strerror(errno));
        goto fail;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        error_set(e, "cannot stat %s: %s", path, strerror(errno));
        close(fd);
        goto fail;
    }
    size_t size = (size_t)st.st_size;
    if (size < 8) {
        error_set(e, "%s: file is %zu bytes, too short for a safetensors header", path, size);
        close(fd);
        goto fail;
    }
    f->map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (f->map == MAP_FAILED) {
        f->map = NULL;
        error_set(e, "cannot mmap %s: %s", path, strerror(errno));
        goto fail;
    }
    f->map_bytes = size;
    uint64_t header_len = 0;
    memcpy(&header_len, f->map, 8);  // little-endian hosts only (x86, arm64)
    if (header_len > size - 8) {
        error_set(e, "%s: header length %llu runs past the end of the file (%zu bytes)", path,
                  (unsigned long long)header_len, size);
        goto fail;
    }
    json_error_t jerr;
    json_t *root = json_loadb((const char *)f->map + 8, header_len, 0, &jerr);
    if (!root) {
        error_set(e, "%s: header is not valid JSON (line %d, column %d: %s)", path, jerr.line,
                  jerr.column, jerr.text);
        goto fail;
    }
    if (!json_is_object(root)) {
        json_decref(root);
        error_set(e, "%s: header is JSON but not an object of tensors", path);
        goto fail;
    }
    f->tensors = calloc(json_object_size(root) + 1, sizeof *f->tensors);
    const uint8_t *data = (const uint8_t *)f->map + 8 + header_len;
    size_t data_bytes = size - 8 - header_len;
    const char *name;
    json_t *info;
    json_object_foreach(root, name, info) {
        if (strcmp(name, "__metadata__") == 0) continue;
        if (safetensors_parse_tensor(f, name, info, data, data_bytes, e)) {
            json_decref(root);
            goto fail;
        }
    }
    json_decref(root);
    return 0;
fail:
    safetensors_close(f);
    return -1;
}

void safetensors_close(safetensors_file *f) {
    for (int i = 0; i < f->n_tensors; i++) free(f->tensors[i].name);
    free(f->tensors);
    if (f->map) munmap(f->map, f->map_bytes);
    free(f->path);
    memset(f, 0, sizeof *f);
}

const safetensors_tensor *safetensors_find(const safetensors_file *f, const char *name) {
    for (int i = 0; i < f->n_tensors; i++)
        if (strcmp(f->tensors[i].name, name) == 0) return &f->tensors[i];
    return NULL;
}
