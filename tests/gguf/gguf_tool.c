// tests/gguf/gguf_tool.c — command-line access to atoll's GGUF parser and
// dequantization for the Python tests in this folder (which hold the oracle,
// the gguf package):
//
//   gguf_tool dequant TYPE IN OUT    raw blocks of TYPE (q4_0 ... q8_k) in IN
//                                    -> float32 values in OUT (dequantize_row)
//   gguf_tool dump FILE              the parsed file as JSON on stdout: version,
//                                    alignment, data offset, every key with its
//                                    type and value, every tensor info
//   gguf_tool get FILE KEY KIND      one typed accessor (u32 i32 f32 bool string
//                                    strings f32s i32s): the value as JSON, or
//                                    "absent", or the error message (exit 1)
//
// Parse errors print the message on stderr and exit 1.
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/quant.h"
#include "runtime/model/gguf.h"

static int dequant(const char *type, const char *in, const char *out) {
    dtype t = DTYPE_COUNT;
    for (int i = 0; i < DTYPE_COUNT; i++)
        if (strcmp(dtype_name((dtype)i), type) == 0 && dtype_is_quantized((dtype)i)) t = (dtype)i;
    if (t == DTYPE_COUNT) {
        fprintf(stderr, "unknown quantized type %s\n", type);
        return 2;
    }
    FILE *f = fopen(in, "rb");
    if (!f) return perror(in), 1;
    fseek(f, 0, SEEK_END);
    const long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    const size_t bb = dtype_block_bytes(t);
    if (n < 0 || (size_t)n % bb) {
        fprintf(stderr, "%s: %ld bytes is not a whole number of %zu-byte blocks\n", in, n, bb);
        return 1;
    }
    const size_t nb = (size_t)n / bb, count = nb * (size_t)dtype_block_elems(t);
    uint8_t *blocks = malloc((size_t)n + 1);
    float *vals = malloc(count * sizeof(float) + 1);
    if (!blocks || !vals || fread(blocks, 1, (size_t)n, f) != (size_t)n) return perror(in), 1;
    fclose(f);
    dequantize_row(t, blocks, vals, (int64_t)count);
    FILE *o = fopen(out, "wb");
    if (!o || fwrite(vals, sizeof(float), count, o) != count || fclose(o)) return perror(out), 1;
    free(blocks);
    free(vals);
    return 0;
}

// A string as JSON; bytes that are not UTF-8 (corrupt files) are written as
// "\\xNN" escapes so the dump stays valid JSON.
static json_t *str_json(const char *p, size_t n) {
    json_t *j = json_stringn(p, n);
    if (j) return j;
    char *esc = malloc(4 * n + 1);
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        const unsigned char c = (unsigned char)p[i];
        if (c >= 0x20 && c < 0x7f) esc[used++] = (char)c;
        else used += (size_t)sprintf(esc + used, "\\x%02x", c);
    }
    j = json_stringn(esc, used);
    free(esc);
    return j;
}

// JSON has no nan/inf: those become strings.
static json_t *real_json(double v) {
    if (v != v) return json_string("nan");
    if (v > 1.7976931348623157e308 || v < -1.7976931348623157e308) return json_string(v > 0 ? "inf" : "-inf");
    return json_real(v);
}

static json_t *scalar_json(gguf_type t, const uint8_t *p) {
    switch (t) {
    case GGUF_TYPE_UINT8: return json_integer(p[0]);
    case GGUF_TYPE_INT8: return json_integer((int8_t)p[0]);
    case GGUF_TYPE_BOOL: return json_boolean(p[0]);
    case GGUF_TYPE_UINT16: { uint16_t v; memcpy(&v, p, 2); return json_integer(v); }
    case GGUF_TYPE_INT16: { int16_t v; memcpy(&v, p, 2); return json_integer(v); }
    case GGUF_TYPE_UINT32: { uint32_t v; memcpy(&v, p, 4); return json_integer(v); }
    case GGUF_TYPE_INT32: { int32_t v; memcpy(&v, p, 4); return json_integer(v); }
    case GGUF_TYPE_FLOAT32: { float v; memcpy(&v, p, 4); return real_json(v); }
    case GGUF_TYPE_UINT64: {
        uint64_t v;
        memcpy(&v, p, 8);
        if (v > (uint64_t)INT64_MAX) {
            char s[32];
            snprintf(s, sizeof s, "%llu", (unsigned long long)v);
            return json_string(s);
        }
        return json_integer((json_int_t)v);
    }
    case GGUF_TYPE_INT64: { int64_t v; memcpy(&v, p, 8); return json_integer(v); }
    case GGUF_TYPE_FLOAT64: { double v; memcpy(&v, p, 8); return real_json(v); }
    default: return json_null();
    }
}

static json_t *value_json(const gguf_value *v) {
    switch (v->type) {
    case GGUF_TYPE_STRING: return str_json(v->s.str, v->s.len);
    case GGUF_TYPE_BOOL: return json_boolean(v->u);
    case GGUF_TYPE_UINT8: case GGUF_TYPE_UINT16: case GGUF_TYPE_UINT32: case GGUF_TYPE_UINT64:
        if (v->u > (uint64_t)INT64_MAX) {
            char s[32];
            snprintf(s, sizeof s, "%llu", (unsigned long long)v->u);
            return json_string(s);
        }
        return json_integer((json_int_t)v->u);
    case GGUF_TYPE_INT8: case GGUF_TYPE_INT16: case GGUF_TYPE_INT32: case GGUF_TYPE_INT64:
        return json_integer(v->i);
    case GGUF_TYPE_FLOAT32: case GGUF_TYPE_FLOAT64: return real_json(v->f);
    case GGUF_TYPE_ARRAY: {
        json_t *a = json_array();
        static const int sizes[GGUF_TYPE_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
        for (uint64_t k = 0; k < v->arr.n; k++) {
            json_t *item;
            if (v->arr.type == GGUF_TYPE_STRING) item = str_json(v->arr.strs[k], v->arr.lens[k]);
            else if (v->arr.type == GGUF_TYPE_ARRAY) item = value_json(&v->arr.items[k]);
            else item = scalar_json(v->arr.type, v->arr.raw + k * sizes[v->arr.type]);
            json_array_append_new(a, item);
        }
        return json_pack("{s:s, s:o}", "array_of", gguf_type_name(v->arr.type), "items", a);
    }
    default: return json_null();
    }
}

static int dump(const char *path) {
    gguf_file f;
    atoll_error e = {{0}};
    if (gguf_open(&f, path, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    json_t *kv = json_object(), *tensors = json_array();
    for (int64_t i = 0; i < f.n_kv; i++) {
        json_t *key = str_json(f.kv[i].key, strlen(f.kv[i].key));
        json_object_set_new(kv, json_string_value(key),
                            json_pack("{s:s, s:o}", "type", gguf_type_name(f.kv[i].value.type), "value",
                                      value_json(&f.kv[i].value)));
        json_decref(key);
    }
    for (int64_t i = 0; i < f.n_tensors; i++) {
        const gguf_tensor *t = &f.tensors[i];
        json_t *ne = json_array();
        for (int d = 0; d < t->n_dims; d++) json_array_append_new(ne, json_integer(t->ne[d]));
        json_array_append_new(tensors, json_pack("{s:o, s:s, s:i, s:o, s:I, s:I, s:I, s:s}", "name",
                                                 str_json(t->name, strlen(t->name)), "type", gguf_ggml_type_name(t->ggml_type), "ggml_type",
                                                 (int)t->ggml_type, "ne", ne, "offset", (json_int_t)t->offset,
                                                 "bytes", (json_int_t)t->bytes, "file_offset",
                                                 (json_int_t)((const uint8_t *)t->data - f.base),
                                                 "dtype", t->type == DTYPE_COUNT ? "none" : dtype_name(t->type)));
        if (gguf_find_tensor(&f, t->name) != t) fprintf(stderr, "gguf_find_tensor(%s) is wrong\n", t->name);
    }
    json_t *root = json_pack("{s:i, s:i, s:I, s:o, s:o}", "version", (int)f.version, "alignment",
                             (int)f.alignment, "data_offset", (json_int_t)f.data_offset, "kv", kv,
                             "tensors", tensors);
    char *text = root ? json_dumps(root, JSON_SORT_KEYS | JSON_REAL_PRECISION(17)) : NULL;
    if (!text) {
        fprintf(stderr, "%s: parsed, but could not be written as JSON\n", path);
        gguf_close(&f);
        return 3;
    }
    printf("%s\n", text);
    free(text);
    json_decref(root);
    gguf_close(&f);
    return 0;
}

static int get(const char *path, const char *key, const char *kind) {
    gguf_file f;
    atoll_error e = {{0}};
    if (gguf_open(&f, path, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    json_t *out = NULL;
    int rc = 0;
    if (!strcmp(kind, "u32")) {
        uint32_t v;
        if (!(rc = gguf_read_u32(&f, key, &v, &e))) out = json_integer(v);
    } else if (!strcmp(kind, "i32")) {
        int32_t v;
        if (!(rc = gguf_read_i32(&f, key, &v, &e))) out = json_integer(v);
    } else if (!strcmp(kind, "f32")) {
        float v;
        if (!(rc = gguf_read_f32(&f, key, &v, &e))) out = real_json(v);
    } else if (!strcmp(kind, "bool")) {
        int v;
        if (!(rc = gguf_read_bool(&f, key, &v, &e))) out = json_boolean(v);
    } else if (!strcmp(kind, "string")) {
        const char *v;
        if (!(rc = gguf_read_string(&f, key, &v, &e))) out = str_json(v, strlen(v));
        if ((gguf_get_string(&f, key) != NULL) != (rc == 0)) fprintf(stderr, "gguf_get_string disagrees\n");
    } else if (!strcmp(kind, "strings")) {
        const char *const *v;
        size_t n;
        if (!(rc = gguf_read_string_array(&f, key, &v, &n, &e))) {
            out = json_array();
            for (size_t i = 0; i < n; i++) json_array_append_new(out, str_json(v[i], strlen(v[i])));
        }
    } else if (!strcmp(kind, "f32s")) {
        float *v;
        size_t n;
        if (!(rc = gguf_read_f32_array(&f, key, &v, &n, &e))) {
            out = json_array();
            for (size_t i = 0; i < n; i++) json_array_append_new(out, real_json(v[i]));
            free(v);
        }
    } else if (!strcmp(kind, "i32s")) {
        int32_t *v;
        size_t n;
        if (!(rc = gguf_read_i32_array(&f, key, &v, &n, &e))) {
            out = json_array();
            for (size_t i = 0; i < n; i++) json_array_append_new(out, json_integer(v[i]));
            free(v);
        }
    } else {
        fprintf(stderr, "unknown kind %s\n", kind);
        gguf_close(&f);
        return 2;
    }
    if (rc == GGUF_ABSENT) printf("absent\n");
    else if (rc < 0) printf("error: %s\n", e.msg);
    else {
        char *text = json_dumps(out, JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
        printf("%s\n", text);
        free(text);
        json_decref(out);
    }
    gguf_close(&f);
    return rc < 0 ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc == 5 && !strcmp(argv[1], "dequant")) return dequant(argv[2], argv[3], argv[4]);
    if (argc == 3 && !strcmp(argv[1], "dump")) return dump(argv[2]);
    if (argc == 5 && !strcmp(argv[1], "get")) return get(argv[2], argv[3], argv[4]);
    fprintf(stderr, "usage: gguf_tool dequant TYPE IN OUT | dump FILE | get FILE KEY KIND\n");
    return 2;
}
