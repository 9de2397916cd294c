// runtime/model/gguf.h — one GGUF file (versions 2 and 3): the header, every
// metadata key/value and the tensor infos parsed and validated, tensor data
// mmapped read-only (never copied), and typed accessors for the metadata.
//
// Layout (little-endian): "GGUF", u32 version, u64 tensor count, u64 kv
// count; the kvs (string key, u32 value type, value); the tensor infos
// (string name, u32 n_dims, u64 ne[n_dims], u32 ggml type, u64 offset);
// padding to general.alignment (default 32); the data section, where each
// tensor starts at its offset. A string is a u64 length and that many bytes;
// an array a u32 element type, a u64 count and the elements (arrays of
// arrays nest). ne[0] is the innermost dimension: a matrix's columns.
#ifndef ATOLL_MODEL_GGUF_H
#define ATOLL_MODEL_GGUF_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/backend.h"
#include "runtime/util/error.h"

#define GGUF_MAX_DIMS 4
#define GGUF_DEFAULT_ALIGNMENT 32
// Returned by the gguf_read_* accessors when the key is absent.
#define GGUF_ABSENT 1

typedef enum {
    GGUF_TYPE_UINT8 = 0,
    GGUF_TYPE_INT8 = 1,
    GGUF_TYPE_UINT16 = 2,
    GGUF_TYPE_INT16 = 3,
    GGUF_TYPE_UINT32 = 4,
    GGUF_TYPE_INT32 = 5,
    GGUF_TYPE_FLOAT32 = 6,
    GGUF_TYPE_BOOL = 7,
    GGUF_TYPE_STRING = 8,
    GGUF_TYPE_ARRAY = 9,
    GGUF_TYPE_UINT64 = 10,
    GGUF_TYPE_INT64 = 11,
    GGUF_TYPE_FLOAT64 = 12,
    GGUF_TYPE_COUNT
} gguf_type;

typedef struct gguf_value gguf_value;
struct gguf_value {
    gguf_type type;
    union {
        uint64_t u;                  // UINT8, UINT16, UINT32, UINT64, BOOL (0 or 1)
        int64_t i;                   // INT8, INT16, INT32, INT64
        double f;                    // FLOAT32, FLOAT64
        struct {
            const char *str;         // NUL-terminated copy (may hold NULs: see len)
            uint64_t len;            // bytes, without the terminating NUL
        } s;                         // STRING
        struct {
            gguf_type type;          // element type
            uint64_t n;              // element count
            const uint8_t *raw;      // scalar elements: n little-endian values in
                                     // the file, unaligned (use the accessors)
            const char **strs;       // STRING elements: NUL-terminated copies
            const uint64_t *lens;    // STRING elements: their lengths
            gguf_value *items;       // ARRAY elements
        } arr;                       // ARRAY
    };
};

typedef struct {
    const char *key;                 // NUL-terminated (keys may not contain NUL)
    gguf_value value;
} gguf_kv;

typedef struct {
    const char *name;
    int n_dims;                      // 1..GGUF_MAX_DIMS
    int64_t ne[GGUF_MAX_DIMS];       // ne[0] innermost; unused dims are 1
    uint32_t ggml_type;              // the file's type id (ggml_type)
    dtype type;                      // atoll's dtype, DTYPE_COUNT when it has none
    uint64_t offset;                 // in the data section
    const void *data;                // in the mapping
    size_t bytes;
} gguf_tensor;

typedef struct gguf_arena gguf_arena;

typedef struct {
    char *path;
    const uint8_t *base;             // the file's bytes
    size_t size;
    void *map;                       // the mapping (NULL for gguf_open_buffer)
    uint32_t version;
    uint32_t alignment;
    size_t data_offset;              // start of the data section in the file
    gguf_kv *kv;
    int64_t n_kv;
    gguf_tensor *tensors;
    int64_t n_tensors;
    // private: string storage and the hash indexes of keys and names
    gguf_arena *arena;
    int64_t *kv_index, *tensor_index;
    size_t kv_index_size, tensor_index_size;
} gguf_file;

// Opens and validates a GGUF file (mmapped read-only). On error the message
// names the file and the problem, and f is left closed.
int gguf_open(gguf_file *f, const char *path, atoll_error *e);
// Parses a GGUF image already in memory (not copied: it must outlive f);
// `name` stands for the file in messages.
int gguf_open_buffer(gguf_file *f, const char *name, const void *data, size_t size, atoll_error *e);
void gguf_close(gguf_file *f);
// 1 if the file at path starts with the GGUF magic.
int gguf_is_gguf_file(const char *path);

const char *gguf_type_name(gguf_type t);
// The ggml type's name ("q4_1", "iq2_xs", ...) or "unknown".
const char *gguf_ggml_type_name(uint32_t ggml_type);

// The value of `key`, or NULL.
const gguf_value *gguf_find(const gguf_file *f, const char *key);
const gguf_tensor *gguf_find_tensor(const gguf_file *f, const char *name);

// Typed reads. Each returns 0 and sets *out when the key holds a value of
// the wanted kind, GGUF_ABSENT when the key is absent (nothing set, no
// error), and -1 with a message naming the file, the key, the type found and
// the type wanted otherwise. Integer reads accept every integer type whose
// value fits; float reads FLOAT32 and FLOAT64.
int gguf_read_u32(const gguf_file *f, const char *key, uint32_t *out, atoll_error *e);
int gguf_read_i32(const gguf_file *f, const char *key, int32_t *out, atoll_error *e);
int gguf_read_f32(const gguf_file *f, const char *key, float *out, atoll_error *e);
int gguf_read_bool(const gguf_file *f, const char *key, int *out, atoll_error *e);
// *out stays owned by f (valid until gguf_close).
int gguf_read_string(const gguf_file *f, const char *key, const char **out, atoll_error *e);
// An array of strings: *items[i] NUL-terminated, owned by f.
int gguf_read_string_array(const gguf_file *f, const char *key, const char *const **items,
                           size_t *n, atoll_error *e);
// Numeric arrays, converted into a malloc'ed copy the caller frees.
int gguf_read_f32_array(const gguf_file *f, const char *key, float **items, size_t *n,
                        atoll_error *e);
int gguf_read_i32_array(const gguf_file *f, const char *key, int32_t **items, size_t *n,
                        atoll_error *e);
// Shorthand: the string value of key, or NULL when absent or not a string.
const char *gguf_get_string(const gguf_file *f, const char *key);

#endif
