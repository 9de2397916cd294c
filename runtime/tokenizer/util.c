// runtime/tokenizer/util.c — the tokenizer's small containers: byte buffers,
// int vectors, string and integer hash maps, and UTF-8 helpers (validation,
// decoding, Rust's from_utf8_lossy, Unicode White_Space).
#include "runtime/tokenizer/tok_internal.h"

#include <stdlib.h>
#include <string.h>

static void *xrealloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q) abort();  // out of memory: nothing sensible to return
    return q;
}

void tok_buf_reserve(tok_buf *b, size_t extra) {
    size_t need = b->len + extra + 1;
    if (need <= b->cap) return;
    size_t cap = b->cap ? b->cap * 2 : 64;
    while (cap < need) cap *= 2;
    b->data = xrealloc(b->data, cap);
    b->cap = cap;
}

void tok_buf_append(tok_buf *b, const void *p, size_t n) {
    tok_buf_reserve(b, n);
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = 0;
}

void tok_buf_putc(tok_buf *b, char c) {
    tok_buf_reserve(b, 1);
    b->data[b->len++] = c;
    b->data[b->len] = 0;
}

void tok_buf_put_cp(tok_buf *b, uint32_t cp) {
    char u[4];
    int n;
    if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 63));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 63));
        u[2] = (char)(0x80 | (cp & 63));
        n = 3;
    } else {
        u[0] = (char)(0xF0 | (cp >> 18));
        u[1] = (char)(0x80 | ((cp >> 12) & 63));
        u[2] = (char)(0x80 | ((cp >> 6) & 63));
        u[3] = (char)(0x80 | (cp & 63));
        n = 4;
    }
    tok_buf_append(b, u, n);
}

void tok_buf_free(tok_buf *b) {
    free(b->data);
    memset(b, 0, sizeof *b);
}

char *tok_strndup(const char *s, size_t n) {
    char *d = xrealloc(NULL, n + 1);
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

void tok_ivec_push(tok_ivec *a, int32_t x) {
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 64;
        a->v = xrealloc(a->v, a->cap * sizeof *a->v);
    }
    a->v[a->n++] = x;
}

void tok_ivec_free(tok_ivec *a) {
    free(a->v);
    memset(a, 0, sizeof *a);
}

uint64_t tok_hash(const void *p, size_t n) {
    const unsigned char *s = p;
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0xC2B2AE3D27D4EB4Full);
    while (n >= 8) {
        uint64_t k;
        memcpy(&k, s, 8);
        h = (h ^ (k * 0xFF51AFD7ED558CCDull)) * 0xC4CEB9FE1A85EC53ull;
        h ^= h >> 29;
        s += 8;
        n -= 8;
    }
    uint64_t k = 0;
    for (size_t i = 0; i < n; i++) k |= (uint64_t)s[i] << (8 * i);
    h = (h ^ (k * 0xFF51AFD7ED558CCDull)) * 0xC4CEB9FE1A85EC53ull;
    h ^= h >> 32;
    h *= 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    return h;
}

// ---------------------------------------------------------------- string map

void tok_strmap_init(tok_strmap *m) { memset(m, 0, sizeof *m); }

void tok_strmap_free(tok_strmap *m) {
    free(m->slots);
    free(m->key_off);
    free(m->key_len);
    free(m->val);
    tok_buf_free(&m->arena);
    memset(m, 0, sizeof *m);
}

static size_t strmap_find(const tok_strmap *m, const char *k, size_t n, uint64_t h) {
    size_t mask = m->cap - 1, i = h & mask;
    for (;;) {
        uint32_t s = m->slots[i];
        if (!s) return i;
        size_t e = s - 1;
        if (m->key_len[e] == n && memcmp(m->arena.data + m->key_off[e], k, n) == 0) return i;
        i = (i + 1) & mask;
    }
}

static void strmap_grow(tok_strmap *m) {
    size_t cap = m->cap ? m->cap * 2 : 64;
    free(m->slots);
    m->slots = calloc(cap, sizeof *m->slots);
    if (!m->slots) abort();
    m->cap = cap;
    for (size_t e = 0; e < m->n; e++) {
        const char *k = m->arena.data + m->key_off[e];
        size_t i = strmap_find(m, k, m->key_len[e], tok_hash(k, m->key_len[e]));
        m->slots[i] = (uint32_t)(e + 1);
    }
}

void tok_strmap_put(tok_strmap *m, const char *k, size_t n, int32_t v) {
    if ((m->n + 1) * 2 > m->cap) strmap_grow(m);
    size_t i = strmap_find(m, k, n, tok_hash(k, n));
    if (m->slots[i]) {
        m->val[m->slots[i] - 1] = v;
        return;
    }
    if (m->n == m->ecap) {
        m->ecap = m->ecap ? m->ecap * 2 : 64;
        m->key_off = xrealloc(m->key_off, m->ecap * sizeof *m->key_off);
        m->key_len = xrealloc(m->key_len, m->ecap * sizeof *m->key_len);
        m->val = xrealloc(m->val, m->ecap * sizeof *m->val);
    }
    m->key_off[m->n] = m->arena.len;
    m->key_len[m->n] = (uint32_t)n;
    m->val[m->n] = v;
    tok_buf_append(&m->arena, k, n);
    tok_buf_putc(&m->arena, 0);
    m->slots[i] = (uint32_t)(++m->n);
}

int tok_strmap_get(const tok_strmap *m, const char *k, size_t n, int32_t *v) {
    if (!m->n) return 0;
    size_t i = strmap_find(m, k, n, tok_hash(k, n));
    if (!m->slots[i]) return 0;
    if (v) *v = m->val[m->slots[i] - 1];
    return 1;
}

// ---------------------------------------------------------------- u64 map

static size_t u64_slot(uint64_t k, size_t mask) {
    k ^= k >> 33;
    k *= 0xFF51AFD7ED558CCDull;
    k ^= k >> 33;
    return (size_t)k & mask;
}

void tok_u64map_init(tok_u64map *m, size_t expected) {
    memset(m, 0, sizeof *m);
    size_t cap = 16;
    while (cap < expected * 2) cap *= 2;
    m->cap = cap;
    m->keys = calloc(cap, sizeof *m->keys);
    m->a = calloc(cap, sizeof *m->a);
    m->b = calloc(cap, sizeof *m->b);
    m->used = calloc(cap, 1);
    if (!m->keys || !m->a || !m->b || !m->used) abort();
}

void tok_u64map_free(tok_u64map *m) {
    free(m->keys);
    free(m->a);
    free(m->b);
    free(m->used);
    memset(m, 0, sizeof *m);
}

void tok_u64map_put(tok_u64map *m, uint64_t k, int32_t a, int32_t b) {
    if (!m->cap) tok_u64map_init(m, 16);
    if ((m->n + 1) * 2 > m->cap) {
        tok_u64map old = *m;
        tok_u64map_init(m, old.cap);
        for (size_t i = 0; i < old.cap; i++)
            if (old.used[i]) tok_u64map_put(m, old.keys[i], old.a[i], old.b[i]);
        tok_u64map_free(&old);
    }
    size_t mask = m->cap - 1, i = u64_slot(k, mask);
    while (m->used[i] && m->keys[i] != k) i = (i + 1) & mask;
    if (!m->used[i]) {
        m->used[i] = 1;
        m->keys[i] = k;
        m->n++;
    }
    m->a[i] = a;
    m->b[i] = b;
}

int tok_u64map_get(const tok_u64map *m, uint64_t k, int32_t *a, int32_t *b) {
    if (!m->n) return 0;
    size_t mask = m->cap - 1, i = u64_slot(k, mask);
    while (m->used[i]) {
        if (m->keys[i] == k) {
            if (a) *a = m->a[i];
            if (b) *b = m->b[i];
            return 1;
        }
        i = (i + 1) & mask;
    }
    return 0;
}

// ---------------------------------------------------------------- UTF-8

// Length of the valid UTF-8 sequence at s[0..n), 0 if invalid or cut short;
// *prefix gets the length of the longest valid prefix of a sequence (the
// "maximal subpart" that from_utf8_lossy replaces with one U+FFFD).
static int utf8_seq(const unsigned char *s, size_t n, int *prefix) {
    unsigned c = s[0];
    int need;
    unsigned lo = 0x80, hi = 0xBF;
    if (c < 0x80) {
        *prefix = 1;
        return 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
        need = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else {
        *prefix = 1;
        return 0;
    }
    int i = 1;
    for (; i < need; i++) {
        if ((size_t)i >= n) break;
        unsigned d = s[i];
        if (i == 1 ? (d < lo || d > hi) : (d < 0x80 || d > 0xBF)) break;
    }
    *prefix = i;
    return i == need ? need : 0;
}

int tok_utf8_valid(const char *p, size_t n) {
    const unsigned char *s = (const unsigned char *)p;
    size_t i = 0;
    while (i < n) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        int pre, k = utf8_seq(s + i, n - i, &pre);
        if (!k) return 0;
        i += k;
    }
    return 1;
}

uint32_t tok_utf8_decode(const char *p, int *len) {
    const unsigned char *s = (const unsigned char *)p;
    uint32_t c = s[0];
    if (c < 0x80) {
        *len = 1;
        return c;
    }
    if (c < 0xE0) {
        *len = 2;
        return ((c & 0x1F) << 6) | (s[1] & 0x3F);
    }
    if (c < 0xF0) {
        *len = 3;
        return ((c & 0x0F) << 12) | ((s[1] & 0x3F) << 6) | (s[2] & 0x3F);
    }
    *len = 4;
    return ((c & 0x07) << 18) | ((s[1] & 0x3F) << 12) | ((s[2] & 0x3F) << 6) | (s[3] & 0x3F);
}

void tok_utf8_lossy(tok_buf *out, const unsigned char *s, size_t n) {
    static const char repl[3] = {(char)0xEF, (char)0xBF, (char)0xBD};
    size_t i = 0, run = 0;  // run: start of the current valid stretch
    tok_buf_reserve(out, n);
    while (i < n) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        int pre, k = utf8_seq(s + i, n - i, &pre);
        if (k) {
            i += k;
            continue;
        }
        tok_buf_append(out, s + run, i - run);
        tok_buf_append(out, repl, 3);
        i += pre;
        run = i;
    }
    tok_buf_append(out, s + run, n - run);
}

int tok_is_whitespace(uint32_t c) {
    return (c >= 9 && c <= 13) || c == 32 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
           c == 0x205F || c == 0x3000;
}
