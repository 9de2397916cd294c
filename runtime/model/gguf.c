// runtime/model/gguf.c — GGUF parsing and validation (see gguf.h for the
// layout) and the typed metadata accessors.
//
// Nothing in the file is trusted: every length and count is checked against
// the bytes that remain before anything is read or allocated, so a damaged
// or hostile file gives an error naming the file and the problem, never an
// out-of-bounds read or an allocation larger than a few times the file.
// Tables grow as entries are actually parsed, not from the declared counts.
#include "runtime/model/gguf.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define GGUF_MAX_DEPTH 8          // arrays of arrays nest at most this deep
#define GGUF_MAX_NAME 256         // bytes of a tensor name
#define GGUF_MAX_KEY 65535        // bytes of a key
#define GGUF_MAX_ALIGNMENT (1u << 30)
#define ARENA_CHUNK ((size_t)1 << 20)

// ---------------------------------------------------------------- tables ----

// ggml's type ids, block geometry as gguf-py's GGML_QUANT_SIZES. Ids not
// listed (4, 5, 31-33, 36-38: removed from ggml) are unknown.
static const struct {
    const char *name;
    int block_elems;   // 0: unknown id
    int block_bytes;
} ggml_types[] = {
    [0] = {"f32", 1, 4},          [1] = {"f16", 1, 2},          [2] = {"q4_0", 32, 18},
    [3] = {"q4_1", 32, 20},       [6] = {"q5_0", 32, 22},       [7] = {"q5_1", 32, 24},
    [8] = {"q8_0", 32, 34},       [9] = {"q8_1", 32, 36},       [10] = {"q2_k", 256, 84},
    [11] = {"q3_k", 256, 110},    [12] = {"q4_k", 256, 144},    [13] = {"q5_k", 256, 176},
    [14] = {"q6_k", 256, 210},    [15] = {"q8_k", 256, 292},    [16] = {"iq2_xxs", 256, 66},
    [17] = {"iq2_xs", 256, 74},   [18] = {"iq3_xxs", 256, 98},  [19] = {"iq1_s", 256, 50},
    [20] = {"iq4_nl", 32, 18},    [21] = {"iq3_s", 256, 110},   [22] = {"iq2_s", 256, 82},
    [23] = {"iq4_xs", 256, 136},  [24] = {"i8", 1, 1},          [25] = {"i16", 1, 2},
    [26] = {"i32", 1, 4},         [27] = {"i64", 1, 8},         [28] = {"f64", 1, 8},
    [29] = {"iq1_m", 256, 56},    [30] = {"bf16", 1, 2},        [34] = {"tq1_0", 256, 54},
    [35] = {"tq2_0", 256, 66},    [39] = {"mxfp4", 32, 17},     [40] = {"nvfp4", 64, 36},
    [41] = {"q1_0", 128, 18},
};
#define N_GGML_TYPES (sizeof ggml_types / sizeof ggml_types[0])

static int ggml_known(uint32_t t) { return t < N_GGML_TYPES && ggml_types[t].block_elems > 0; }

const char *gguf_ggml_type_name(uint32_t t) { return ggml_known(t) ? ggml_types[t].name : "unknown"; }

// The dtype atoll computes with for a ggml type, DTYPE_COUNT if none.
static dtype ggml_dtype(uint32_t t) {
    switch (t) {
    case 0: return DTYPE_F32;
    case 1: return DTYPE_F16;
    case 2: return DTYPE_Q4_0;
    case 3: return DTYPE_Q4_1;
    case 6: return DTYPE_Q5_0;
    case 7: return DTYPE_Q5_1;
    case 8: return DTYPE_Q8_0;
    case 12: return DTYPE_Q4_K;
    case 13: return DTYPE_Q5_K;
    case 14: return DTYPE_Q6_K;
    case 15: return DTYPE_Q8_K;
    case 30: return DTYPE_BF16;
    default: return DTYPE_COUNT;
    }
}

static const char *const type_names[GGUF_TYPE_COUNT] = {
    "uint8", "int8", "uint16", "int16", "uint32", "int32", "float32",
    "bool", "string", "array", "uint64", "int64", "float64",
};
static const uint8_t type_sizes[GGUF_TYPE_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

const char *gguf_type_name(gguf_type t) {
    return (int)t >= 0 && t < GGUF_TYPE_COUNT ? type_names[t] : "unknown";
}

// ----------------------------------------------------------------- arena ----

struct gguf_arena {
    gguf_arena *next;
    size_t used, cap;
};

static void *arena_alloc(gguf_file *f, size_t n) {
    n = (n + 15) & ~(size_t)15;
    gguf_arena *a = f->arena;
    if (!a || a->cap - a->used < n) {
        const size_t cap = n > ARENA_CHUNK ? n : ARENA_CHUNK;
        a = malloc(sizeof(gguf_arena) + 16 + cap);
        if (!a) return NULL;
        a->next = f->arena;
        a->used = 0;
        a->cap = cap;
        f->arena = a;
    }
    char *base = (char *)(((uintptr_t)(a + 1) + 15) & ~(uintptr_t)15);
    void *p = base + a->used;
    a->used += n;
    return p;
}

// ----------------------------------------------------------------- reader ---

typedef struct {
    gguf_file *f;
    size_t off;
    atoll_error *e;
    char what[200];  // what is being read, for messages
} reader;

static int truncated(reader *r, uint64_t need) {
    return error_set(r->e, "%s: truncated: %s at byte %zu needs %" PRIu64 " bytes but the file ends "
                     "%zu bytes later (file size %zu)", r->f->path, r->what, r->off, need,
                     r->f->size - r->off, r->f->size);
}

static int rd(reader *r, void *dst, size_t n) {
    if (n > r->f->size - r->off) return truncated(r, n);
    memcpy(dst, r->f->base + r->off, n);
    r->off += n;
    return 0;
}

static int rd_u32(reader *r, uint32_t *v) { return rd(r, v, 4); }
static int rd_u64(reader *r, uint64_t *v) { return rd(r, v, 8); }

// A string: u64 length + bytes, copied NUL-terminated into the arena.
static int rd_string(reader *r, uint64_t max_len, const char **out, uint64_t *len_out) {
    uint64_t len;
    if (rd_u64(r, &len)) return -1;
    const size_t left = r->f->size - r->off;
    if (len > left)
        return error_set(r->e, "%s: %s at byte %zu has length %" PRIu64 ", larger than the %zu bytes "
                         "left in the file (corrupt or truncated)", r->f->path, r->what, r->off - 8,
                         len, left);
    if (len > max_len)
        return error_set(r->e, "%s: %s at byte %zu has length %" PRIu64 " (at most %" PRIu64 ")",
                         r->f->path, r->what, r->off - 8, len, max_len);
    char *s = arena_alloc(r->f, (size_t)len + 1);
    if (!s) return error_set(r->e, "%s: out of memory reading %s", r->f->path, r->what);
    memcpy(s, r->f->base + r->off, (size_t)len);
    s[len] = 0;
    r->off += (size_t)len;
    *out = s;
    if (len_out) *len_out = len;
    return 0;
}

static int parse_value(reader *r, gguf_type t, gguf_value *v, int depth);

static int parse_array(reader *r, gguf_value *v, int depth) {
    uint32_t et;
    uint64_t n;
    if (rd_u32(r, &et)) return -1;
    if (et >= GGUF_TYPE_COUNT)
        return error_set(r->e, "%s: %s is an array of unknown value type %u", r->f->path, r->what, et);
    if (rd_u64(r, &n)) return -1;
    if (et == GGUF_TYPE_ARRAY && depth + 1 >= GGUF_MAX_DEPTH)
        return error_set(r->e, "%s: %s nests arrays more than %d deep", r->f->path, r->what,
                         GGUF_MAX_DEPTH);
    // Smallest encoding of one element: its value, a string's length, an
    // array's type and count.
    const uint64_t min_bytes = et == GGUF_TYPE_STRING ? 8 : et == GGUF_TYPE_ARRAY ? 12 : type_sizes[et];
    const size_t left = r->f->size - r->off;
    if (n > left / min_bytes)
        return error_set(r->e, "%s: %s is an array of %" PRIu64 " %s values, more than the %zu bytes "
                         "left in the file can hold (corrupt or truncated)", r->f->path, r->what, n,
                         type_names[et], left);
    v->arr.type = (gguf_type)et;
    v->arr.n = n;
    if (et != GGUF_TYPE_STRING && et != GGUF_TYPE_ARRAY) {
        v->arr.raw = r->f->base + r->off;
        r->off += (size_t)(n * min_bytes);
        return 0;
    }
    if (et == GGUF_TYPE_STRING) {
        const char **strs = arena_alloc(r->f, (size_t)n * sizeof *strs + 1);
        uint64_t *lens = arena_alloc(r->f, (size_t)n * sizeof *lens + 1);
        if (!strs || !lens) return error_set(r->e, "%s: out of memory reading %s", r->f->path, r->what);
        for (uint64_t k = 0; k < n; k++)
            if (rd_string(r, UINT64_MAX, &strs[k], &lens[k])) return -1;
        v->arr.strs = strs;
        v->arr.lens = lens;
        return 0;
    }
    gguf_value *items = arena_alloc(r->f, (size_t)n * sizeof *items + 1);
    if (!items) return error_set(r->e, "%s: out of memory reading %s", r->f->path, r->what);
    memset(items, 0, (size_t)n * sizeof *items);
    v->arr.items = items;
    for (uint64_t k = 0; k < n; k++)
        if (parse_value(r, GGUF_TYPE_ARRAY, &items[k], depth + 1)) return -1;
    return 0;
}

static int parse_value(reader *r, gguf_type t, gguf_value *v, int depth) {
    v->type = t;
    uint8_t b[8];
    switch (t) {
    case GGUF_TYPE_STRING: return rd_string(r, UINT64_MAX, &v->s.str, &v->s.len);
    case GGUF_TYPE_ARRAY: return parse_array(r, v, depth);
    default: break;
    }
    if (rd(r, b, type_sizes[t])) return -1;
    switch (t) {
    case GGUF_TYPE_UINT8: v->u = b[0]; break;
    case GGUF_TYPE_BOOL: v->u = b[0] != 0; break;
    case GGUF_TYPE_INT8: v->i = (int8_t)b[0]; break;
    case GGUF_TYPE_UINT16: { uint16_t x; memcpy(&x, b, 2); v->u = x; break; }
    case GGUF_TYPE_INT16: { int16_t x; memcpy(&x, b, 2); v->i = x; break; }
    case GGUF_TYPE_UINT32: { uint32_t x; memcpy(&x, b, 4); v->u = x; break; }
    case GGUF_TYPE_INT32: { int32_t x; memcpy(&x, b, 4); v->i = x; break; }
    case GGUF_TYPE_FLOAT32: { float x; memcpy(&x, b, 4); v->f = x; break; }
    case GGUF_TYPE_UINT64: memcpy(&v->u, b, 8); break;
    case GGUF_TYPE_INT64: memcpy(&v->i, b, 8); break;
    case GGUF_TYPE_FLOAT64: memcpy(&v->f, b, 8); break;
    default: break;
    }
    return 0;
}

// ---------------------------------------------------------------- indexes ---

static uint64_t hash_str(const char *s) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    return h;
}

// Open-addressing index of n names (entry = position + 1, 0 = empty).
// Returns the position of a duplicate name, -1 if none, -2 when out of memory.
static int64_t index_build(const char *(*name_of)(const gguf_file *, int64_t), const gguf_file *f,
                           int64_t n, int64_t **index, size_t *size) {
    size_t sz = 16;
    while (sz < (size_t)n * 2) sz <<= 1;
    int64_t *ix = calloc(sz, sizeof *ix);
    if (!ix) return -2;
    *index = ix;
    *size = sz;
    for (int64_t i = 0; i < n; i++) {
        const char *name = name_of(f, i);
        size_t h = (size_t)hash_str(name) & (sz - 1);
        while (ix[h]) {
            if (strcmp(name_of(f, ix[h] - 1), name) == 0) return i;
            h = (h + 1) & (sz - 1);
        }
        ix[h] = i + 1;
    }
    return -1;
}

static int64_t index_find(const char *(*name_of)(const gguf_file *, int64_t), const gguf_file *f,
                          const int64_t *ix, size_t sz, const char *name) {
    if (!ix) return -1;
    size_t h = (size_t)hash_str(name) & (sz - 1);
    while (ix[h]) {
        if (strcmp(name_of(f, ix[h] - 1), name) == 0) return ix[h] - 1;
        h = (h + 1) & (sz - 1);
    }
    return -1;
}

static const char *kv_name(const gguf_file *f, int64_t i) { return f->kv[i].key; }
static const char *tensor_name(const gguf_file *f, int64_t i) { return f->tensors[i].name; }

// ------------------------------------------------------------------ parse ---

// Printable rendering of the first 4 bytes for the magic message.
static void magic_text(const uint8_t *p, size_t n, char *out, size_t cap) {
    size_t used = 0;
    for (size_t i = 0; i < n && i < 4 && used + 5 < cap; i++)
        used += (size_t)snprintf(out + used, cap - used, isprint(p[i]) && p[i] != '\\' ? "%c" : "\\x%02x", p[i]);
    out[used] = 0;
}

static int parse_header(reader *r) {
    gguf_file *f = r->f;
    if (f->size < 4 || memcmp(f->base, "GGUF", 4) != 0) {
        char m[32];
        magic_text(f->base, f->size, m, sizeof m);
        if (f->size < 4)
            return error_set(r->e, "%s: not a GGUF file: %zu bytes, too short for the 'GGUF' magic",
                             f->path, f->size);
        return error_set(r->e, "%s: not a GGUF file: starts with '%s', expected the magic 'GGUF'",
                         f->path, m);
    }
    r->off = 4;
    snprintf(r->what, sizeof r->what, "the version");
    if (rd_u32(r, &f->version)) return -1;
    if (f->version == 1)
        return error_set(r->e, "%s: GGUF version 1 is not supported (only versions 2 and 3; "
                         "re-convert the model with a current llama.cpp)", f->path);
    if (f->version == 0x02000000u || f->version == 0x03000000u)
        return error_set(r->e, "%s: big-endian GGUF files are not supported", f->path);
    if (f->version != 2 && f->version != 3)
        return error_set(r->e, "%s: unsupported GGUF version %u (supported: 2, 3)", f->path, f->version);
    uint64_t nt, nkv;
    snprintf(r->what, sizeof r->what, "the tensor count");
    if (rd_u64(r, &nt)) return -1;
    snprintf(r->what, sizeof r->what, "the metadata key/value count");
    if (rd_u64(r, &nkv)) return -1;
    // Each tensor info and key/value takes several bytes: a count above the
    // file size is garbage. (Smaller lies end in a "truncated" error below;
    // tables grow only as entries are parsed.)
    if (nt > f->size)
        return error_set(r->e, "%s: tensor count %" PRIu64 " is absurd (larger than the file's %zu "
                         "bytes; corrupt header)", f->path, nt, f->size);
    if (nkv > f->size)
        return error_set(r->e, "%s: metadata key/value count %" PRIu64 " is absurd (larger than the "
                         "file's %zu bytes; corrupt header)", f->path, nkv, f->size);
    f->n_tensors = (int64_t)nt;  // declared; re-counted as parsed below
    f->n_kv = (int64_t)nkv;
    return 0;
}

// Makes room for entry n of a table of `elem`-byte entries with *cap slots,
// doubling it when full (tables grow only as entries are parsed).
static int grow_table(void **table, int64_t *cap, int64_t n, size_t elem) {
    if (n < *cap) return 0;
    int64_t want = *cap ? *cap * 2 : 64;
    void *grown = realloc(*table, (size_t)want * elem);
    if (!grown) return -1;
    *table = grown;
    *cap = want;
    return 0;
}

static int parse_kvs(reader *r, int64_t declared) {
    gguf_file *f = r->f;
    int64_t cap = 0;
    f->n_kv = 0;
    for (int64_t k = 0; k < declared; k++) {
        if (grow_table((void **)&f->kv, &cap, f->n_kv, sizeof *f->kv))
            return error_set(r->e, "%s: out of memory reading metadata", f->path);
        gguf_kv *kv = &f->kv[f->n_kv];
        memset(kv, 0, sizeof *kv);
        snprintf(r->what, sizeof r->what, "the key of metadata entry %" PRId64, k);
        uint64_t len;
        if (rd_string(r, GGUF_MAX_KEY, &kv->key, &len)) return -1;
        f->n_kv++;
        if (len == 0 || strlen(kv->key) != len)
            return error_set(r->e, "%s: metadata entry %" PRId64 " has an %s key", f->path, k,
                             len == 0 ? "empty" : "invalid (NUL byte in the)");
        snprintf(r->what, sizeof r->what, "the value type of key '%.120s'", kv->key);
        uint32_t t;
        if (rd_u32(r, &t)) return -1;
        if (t >= GGUF_TYPE_COUNT)
            return error_set(r->e, "%s: key '%s' has unknown value type %u", f->path, kv->key, t);
        snprintf(r->what, sizeof r->what, "the value of key '%.120s'", kv->key);
        if (parse_value(r, (gguf_type)t, &kv->value, 0)) return -1;
    }
    int64_t dup = index_build(kv_name, f, f->n_kv, &f->kv_index, &f->kv_index_size);
    if (dup == -2) return error_set(r->e, "%s: out of memory", f->path);
    if (dup >= 0) return error_set(r->e, "%s: duplicate metadata key '%s'", f->path, f->kv[dup].key);
    return 0;
}

static int read_alignment(reader *r) {
    gguf_file *f = r->f;
    f->alignment = GGUF_DEFAULT_ALIGNMENT;
    const gguf_value *v = gguf_find(f, "general.alignment");
    if (!v) return 0;
    uint32_t a;
    if (gguf_read_u32(f, "general.alignment", &a, r->e)) return -1;
    if (a == 0 || (a & (a - 1)) || a > GGUF_MAX_ALIGNMENT)
        return error_set(r->e, "%s: general.alignment is %u; it must be a power of two (at most %u)",
                         f->path, a, GGUF_MAX_ALIGNMENT);
    f->alignment = a;
    return 0;
}

static void shape_text(const gguf_tensor *t, char *out, size_t cap) {
    size_t used = (size_t)snprintf(out, cap, "[");
    for (int d = 0; d < t->n_dims && used < cap; d++)
        used += (size_t)snprintf(out + used, cap - used, "%s%" PRId64, d ? ", " : "", t->ne[d]);
    if (used < cap) snprintf(out + used, cap - used, "]");
}

static int parse_tensor_info(reader *r, int64_t k, gguf_tensor *t) {
    gguf_file *f = r->f;
    snprintf(r->what, sizeof r->what, "the name of tensor info %" PRId64, k);
    uint64_t len;
    if (rd_string(r, GGUF_MAX_NAME, &t->name, &len)) return -1;
    if (len == 0 || strlen(t->name) != len)
        return error_set(r->e, "%s: tensor info %" PRId64 " has an %s name", f->path, k,
                         len == 0 ? "empty" : "invalid (NUL byte in the)");
    snprintf(r->what, sizeof r->what, "the dimensions of tensor '%s'", t->name);
    uint32_t n_dims;
    if (rd_u32(r, &n_dims)) return -1;
    if (n_dims > GGUF_MAX_DIMS)
        return error_set(r->e, "%s: tensor '%s' has %u dimensions (at most %d)", f->path, t->name,
                         n_dims, GGUF_MAX_DIMS);
    t->n_dims = (int)n_dims;
    for (int d = 0; d < GGUF_MAX_DIMS; d++) t->ne[d] = 1;
    for (uint32_t d = 0; d < n_dims; d++) {
        uint64_t ne;
        if (rd_u64(r, &ne)) return -1;
        if (ne > (uint64_t)INT64_MAX)
            return error_set(r->e, "%s: tensor '%s' dimension %u is %" PRIu64 " (corrupt)", f->path,
                             t->name, d, ne);
        t->ne[d] = (int64_t)ne;
    }
    snprintf(r->what, sizeof r->what, "the type of tensor '%s'", t->name);
    if (rd_u32(r, &t->ggml_type)) return -1;
    snprintf(r->what, sizeof r->what, "the offset of tensor '%s'", t->name);
    if (rd_u64(r, &t->offset)) return -1;
    if (!ggml_known(t->ggml_type))
        return error_set(r->e, "%s: tensor '%s' has unknown ggml type %u", f->path, t->name,
                         t->ggml_type);
    t->type = ggml_dtype(t->ggml_type);
    char shape[160];
    shape_text(t, shape, sizeof shape);
    const int be = ggml_types[t->ggml_type].block_elems;
    if (t->ne[0] % be)
        return error_set(r->e, "%s: tensor '%s' has shape %s: %" PRId64 " columns is not a multiple "
                         "of the %s block size %d", f->path, t->name, shape, t->ne[0],
                         ggml_types[t->ggml_type].name, be);
    int64_t count = 1;
    uint64_t bytes = (uint64_t)(t->ne[0] / be) * (uint64_t)ggml_types[t->ggml_type].block_bytes;
    int over = 0;
    for (int d = 0; d < GGUF_MAX_DIMS; d++) over |= __builtin_mul_overflow(count, t->ne[d], &count);
    for (int d = 1; d < GGUF_MAX_DIMS; d++) over |= __builtin_mul_overflow(bytes, (uint64_t)t->ne[d], &bytes);
    if (over || bytes > SIZE_MAX)
        return error_set(r->e, "%s: tensor '%s' has shape %s, whose element count or size overflows",
                         f->path, t->name, shape);
    t->bytes = (size_t)bytes;
    if (t->offset % f->alignment)
        return error_set(r->e, "%s: tensor '%s' has offset %" PRIu64 ", not a multiple of the "
                         "alignment %u", f->path, t->name, t->offset, f->alignment);
    return 0;
}

static int parse_tensors(reader *r, int64_t declared) {
    gguf_file *f = r->f;
    int64_t cap = 0;
    f->n_tensors = 0;
    for (int64_t k = 0; k < declared; k++) {
        if (grow_table((void **)&f->tensors, &cap, f->n_tensors, sizeof *f->tensors))
            return error_set(r->e, "%s: out of memory reading tensor infos", f->path);
        gguf_tensor *t = &f->tensors[f->n_tensors];
        memset(t, 0, sizeof *t);
        if (parse_tensor_info(r, k, t)) return -1;
        f->n_tensors++;
    }
    int64_t dup = index_build(tensor_name, f, f->n_tensors, &f->tensor_index, &f->tensor_index_size);
    if (dup == -2) return error_set(r->e, "%s: out of memory", f->path);
    if (dup >= 0) return error_set(r->e, "%s: duplicate tensor name '%s'", f->path, f->tensors[dup].name);

    // The data section starts at the next multiple of the alignment.
    const uint64_t a = f->alignment;
    const uint64_t start = ((uint64_t)r->off + a - 1) / a * a;
    f->data_offset = (size_t)start;
    for (int64_t k = 0; k < f->n_tensors; k++) {
        gguf_tensor *t = &f->tensors[k];
        uint64_t begin, end;
        if (__builtin_add_overflow(start, t->offset, &begin) || __builtin_add_overflow(begin, t->bytes, &end))
            return error_set(r->e, "%s: tensor '%s' has offset %" PRIu64 ", past the end of the file "
                             "(%zu bytes)", f->path, t->name, t->offset, f->size);
        if (end > f->size)
            return error_set(r->e, "%s: tensor '%s' data [%" PRIu64 ", %" PRIu64 ") runs past the end "
                             "of the file (%zu bytes; truncated?)", f->path, t->name, begin, end, f->size);
        t->data = f->base + start + t->offset;
    }
    return 0;
}

static int parse(gguf_file *f, atoll_error *e) {
    reader r = {f, 0, e, ""};
    if (parse_header(&r)) return -1;
    const int64_t declared_tensors = f->n_tensors, declared_kv = f->n_kv;
    f->n_tensors = 0;
    if (parse_kvs(&r, declared_kv) || read_alignment(&r) || parse_tensors(&r, declared_tensors))
        return -1;
    return 0;
}

// ------------------------------------------------------------ open/close ---

int gguf_open_buffer(gguf_file *f, const char *name, const void *data, size_t size, atoll_error *e) {
    memset(f, 0, sizeof *f);
    f->path = strdup(name);
    if (!f->path) return error_set(e, "out of memory");
    f->base = data;
    f->size = size;
    if (parse(f, e)) {
        gguf_close(f);
        return -1;
    }
    return 0;
}

int gguf_open(gguf_file *f, const char *path, atoll_error *e) {
    memset(f, 0, sizeof *f);
    f->path = strdup(path);
    if (!f->path) return error_set(e, "out of memory");
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        error_set(e, "cannot open %s: %s", path, strerror(errno));
        goto fail;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        error_set(e, "%s: not a regular file", path);
        close(fd);
        goto fail;
    }
    f->size = (size_t)st.st_size;
    static const uint8_t empty[1] = {0};
    f->base = empty;
    if (f->size > 0) {
        f->map = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (f->map == MAP_FAILED) {
            f->map = NULL;
            error_set(e, "cannot mmap %s: %s", path, strerror(errno));
            close(fd);
            goto fail;
        }
        f->base = f->map;
    }
    close(fd);
    if (parse(f, e)) goto fail;
    return 0;
fail:
    gguf_close(f);
    return -1;
}

void gguf_close(gguf_file *f) {
    if (f->map) munmap(f->map, f->size);
    while (f->arena) {
        gguf_arena *next = f->arena->next;
        free(f->arena);
        f->arena = next;
    }
    free(f->kv);
    free(f->tensors);
    free(f->kv_index);
    free(f->tensor_index);
    free(f->path);
    memset(f, 0, sizeof *f);
}

int gguf_is_gguf_file(const char *path) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    char magic[4];
    const int ok = read(fd, magic, 4) == 4 && memcmp(magic, "GGUF", 4) == 0;
    close(fd);
    return ok;
}

// -------------------------------------------------------------- accessors ---

const gguf_value *gguf_find(const gguf_file *f, const char *key) {
    const int64_t i = index_find(kv_name, f, f->kv_index, f->kv_index_size, key);
    return i >= 0 ? &f->kv[i].value : NULL;
}

const gguf_tensor *gguf_find_tensor(const gguf_file *f, const char *name) {
    const int64_t i = index_find(tensor_name, f, f->tensor_index, f->tensor_index_size, name);
    return i >= 0 ? &f->tensors[i] : NULL;
}

static int is_signed_int(gguf_type t) {
    return t == GGUF_TYPE_INT8 || t == GGUF_TYPE_INT16 || t == GGUF_TYPE_INT32 || t == GGUF_TYPE_INT64;
}
static int is_unsigned_int(gguf_type t) {
    return t == GGUF_TYPE_UINT8 || t == GGUF_TYPE_UINT16 || t == GGUF_TYPE_UINT32 || t == GGUF_TYPE_UINT64;
}

static int wrong_type(const gguf_file *f, const char *key, const gguf_value *v, const char *want,
                      atoll_error *e) {
    if (v->type == GGUF_TYPE_ARRAY)
        return error_set(e, "%s: key '%s' is an array of %s, expected %s", f->path, key,
                         gguf_type_name(v->arr.type), want);
    return error_set(e, "%s: key '%s' has type %s, expected %s", f->path, key, gguf_type_name(v->type),
                     want);
}

// Integer value of v as [lo, hi]; -1 with a message when not an integer or
// out of range.
static int read_int(const gguf_file *f, const char *key, const gguf_value *v, int64_t lo, int64_t hi,
                    const char *want, int64_t *out, atoll_error *e) {
    if (is_unsigned_int(v->type)) {
        if (v->u > (uint64_t)hi)
            return error_set(e, "%s: key '%s' is %" PRIu64 ", out of range for %s", f->path, key, v->u, want);
        *out = (int64_t)v->u;
        return 0;
    }
    if (is_signed_int(v->type)) {
        if (v->i < lo || v->i > hi)
            return error_set(e, "%s: key '%s' is %" PRId64 ", out of range for %s", f->path, key, v->i, want);
        *out = v->i;
        return 0;
    }
    return wrong_type(f, key, v, want, e);
}

int gguf_read_u32(const gguf_file *f, const char *key, uint32_t *out, atoll_error *e) {
    const gguf_value *v = gguf_find(f, key);
    if (!v) return GGUF_ABSENT;
    int64_t x;
    if (read_int(f, key, v, 0, UINT32_MAX, "uint32", &x, e)) return -1;
    *out = (uint32_t)x;
    return 0;
}

int gguf_read_i32(const gguf_file *f, const char *key, int32_t *out, atoll_error *e) {
    const gguf_value *v = gguf_find(f, key);
    if (!v) return GGUF_ABSENT;
    int64_t x;
    if (read_int(f, key, v, INT32_MIN, INT32_MAX, "int32", &x, e)) return -1;
    *out = (int32_t)x;
    return 0;
}

int gguf_read_f32(const gguf_file *f, const char *key, float *out, atoll_error *e) {
    const gguf_value *v = gguf_find(f, key);
    if (!v) return GGUF_ABSENT;
    if (v->type != GGUF_TYPE_FLOAT32 && v->type != GGUF_TYPE_FLOAT64)
        return wrong_type(f, key, v, "float32", e);
    *out = (float)v->f;
    return 0;
}

int gguf_read_bool(const gguf_file *f, const char *key, int *out, atoll_error *e) {
    const gguf_value *v = gguf_find(f, key);
    if (!v) return GGUF_ABSENT;
    if (v->type != GGUF_TYPE_BOOL) return wrong_type(f, key, v, "bool", e);
    *out = (int)v->u;
    return 0;
}

int gguf_read_string(const gguf_file *f, const char *key, const char **out, atoll_error *e) {
    const gguf_value *v = gguf_find(f, key);
    if (!v) return GGUF_ABSENT;
    if (v->type != GGUF_TYPE_STRING) return wrong_type(f, key, v, "string", e);
    *out = v->s.str;
    return 0;
}

const char *gguf_get_string(const gguf_file *f, const char *key) {
    const gguf_value *v = gguf_find(f, key);
    return v && v->type == GGUF_TYPE_STRING ? v->s.str : NULL;
}

int gguf_read_string_array(const gguf_file *f, const char *key, const char *const **items, size_t *n,
                           atoll_error *e) {
    const gguf_value *v = gguf_find(f, key);
    if (!v) return GGUF_ABSENT;
    if (v->type != GGUF_TYPE_ARRAY || v->arr.type != GGUF_TYPE_STRING)
        return wrong_type(f, key, v, "an array of strings", e);
    *items = v->arr.strs;
    *n = (size_t)v->arr.n;
    return 0;
}

// Element k of a scalar array as double / int64 (the caller checked the type).
static double elem_f(const gguf_value *v, uint64_t k) {
    const uint8_t *p = v->arr.raw + k * type_sizes[v->arr.type];
    if (v->arr.type == GGUF_TYPE_FLOAT32) {
        float x;
        memcpy(&x, p, 4);
        return x;
    }
    double x;
    memcpy(&x, p, 8);
    return x;
}

static int elem_i(const gguf_value *v, uint64_t k, int64_t *out) {
    const uint8_t *p = v->arr.raw + k * type_sizes[v->arr.type];
    switch (v->arr.type) {
    case GGUF_TYPE_UINT8: *out = p[0]; return 0;
    case GGUF_TYPE_INT8: *out = (int8_t)p[0]; return 0;
    case GGUF_TYPE_UINT16: { uint16_t x; memcpy(&x, p, 2); *out = x; return 0; }
    case GGUF_TYPE_INT16: { int16_t x; memcpy(&x, p, 2); *out = x; return 0; }
    case GGUF_TYPE_UINT32: { uint32_t x; memcpy(&x, p, 4); *out = x; return 0; }
    case GGUF_TYPE_INT32: { int32_t x; memcpy(&x, p, 4); *out = x; return 0; }
    case GGUF_TYPE_UINT64: {
        uint64_t x;
        memcpy(&x, p, 8);
        if (x > (uint64_t)INT64_MAX) return -1;
        *out = (int64_t)x;
        return 0;
    }
    case GGUF_TYPE_INT64: memcpy(out, p, 8); return 0;
    default: return -1;
    }
}

int gguf_read_f32_array(const gguf_file *f, const char *key, float **items, size_t *n, atoll_error *e) {
    const gguf_value *v = gguf_find(f, key);
    if (!v) return GGUF_ABSENT;
    if (v->type != GGUF_TYPE_ARRAY ||
        (v->arr.type != GGUF_TYPE_FLOAT32 && v->arr.type != GGUF_TYPE_FLOAT64))
        return wrong_type(f, key, v, "an array of float32", e);
    float *out = malloc((size_t)(v->arr.n ? v->arr.n : 1) * sizeof *out);
    if (!out) return error_set(e, "%s: out of memory reading key '%s'", f->path, key);
    for (uint64_t k = 0; k < v->arr.n; k++) out[k] = (float)elem_f(v, k);
    *items = out;
    *n = (size_t)v->arr.n;
    return 0;
}

int gguf_read_i32_array(const gguf_file *f, const char *key, int32_t **items, size_t *n, atoll_error *e) {
    const gguf_value *v = gguf_find(f, key);
    if (!v) return GGUF_ABSENT;
    if (v->type != GGUF_TYPE_ARRAY || !(is_signed_int(v->arr.type) || is_unsigned_int(v->arr.type)))
        return wrong_type(f, key, v, "an array of int32", e);
    int32_t *out = malloc((size_t)(v->arr.n ? v->arr.n : 1) * sizeof *out);
    if (!out) return error_set(e, "%s: out of memory reading key '%s'", f->path, key);
    for (uint64_t k = 0; k < v->arr.n; k++) {
        int64_t x;
        if (elem_i(v, k, &x) || x < INT32_MIN || x > INT32_MAX) {
            free(out);
            return error_set(e, "%s: key '%s' element %" PRIu64 " is out of range for int32", f->path,
                             key, k);
        }
        out[k] = (int32_t)x;
    }
    *items = out;
    *n = (size_t)v->arr.n;
    return 0;
}
