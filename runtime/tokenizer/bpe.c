// runtime/tokenizer/bpe.c — the models: HF's BPE (merges by rank with a
// priority queue over a linked list of symbols, byte fallback, unk/fuse_unk,
// ignore_merges, continuing_subword_prefix / end_of_word_suffix) and
// llama.cpp's SentencePiece BPE (merge the pair whose token has the highest
// score), plus a per-encode word cache.
#include <stdlib.h>
#include <string.h>

#include "runtime/tokenizer/tok_internal.h"

#define CACHE_MAX_WORD 256
#define CACHE_MAX_ENTRIES 200000

typedef struct {
    int32_t rank;  // BPE: merge rank; SPM: unused
    float score;   // SPM: token score
    int32_t pos;   // left symbol
    int32_t new_id;
    uint32_t size;  // SPM: byte length of the merged text
} heap_item;

struct tok_model_ctx {
    tok_strmap cache;  // word -> entry
    tok_ivec cache_ids;
    size_t *ent_off;
    uint32_t *ent_len;
    size_t n_ent, cap_ent;

    int32_t *sid, *sprev, *snext;
    uint32_t *slen, *soff;
    size_t scap, nsym;

    heap_item *heap;
    size_t hn, hcap;
    tok_buf tmp;
};

tok_model_ctx *tok_model_ctx_new(void) {
    tok_model_ctx *c = calloc(1, sizeof *c);
    if (!c) abort();
    return c;
}

void tok_model_ctx_free(tok_model_ctx *c) {
    if (!c) return;
    tok_strmap_free(&c->cache);
    tok_ivec_free(&c->cache_ids);
    free(c->ent_off);
    free(c->ent_len);
    free(c->sid);
    free(c->sprev);
    free(c->snext);
    free(c->slen);
    free(c->soff);
    free(c->heap);
    tok_buf_free(&c->tmp);
    free(c);
}

void tok_model_free(tok_model *m) {
    tok_strmap_free(&m->vocab);
    tok_u64map_free(&m->merges);
    free(m->cont_prefix);
    free(m->eow_suffix);
}

static void sym_reserve(tok_model_ctx *c, size_t n) {
    if (n <= c->scap) return;
    size_t cap = c->scap ? c->scap : 64;
    while (cap < n) cap *= 2;
    c->sid = realloc(c->sid, cap * sizeof *c->sid);
    c->sprev = realloc(c->sprev, cap * sizeof *c->sprev);
    c->snext = realloc(c->snext, cap * sizeof *c->snext);
    c->slen = realloc(c->slen, cap * sizeof *c->slen);
    c->soff = realloc(c->soff, cap * sizeof *c->soff);
    if (!c->sid || !c->sprev || !c->snext || !c->slen || !c->soff) abort();
    c->scap = cap;
}

// Word::add
static void sym_add(tok_model_ctx *c, int32_t id, uint32_t len, uint32_t off) {
    sym_reserve(c, c->nsym + 1);
    size_t i = c->nsym++;
    c->sid[i] = id;
    c->slen[i] = len;
    c->soff[i] = off;
    c->sprev[i] = (int32_t)i - 1;
    c->snext[i] = -1;
    if (i > 0) c->snext[i - 1] = (int32_t)i;
}

// ---------------------------------------------------------------- heap

// Binary heaps with the comparison inlined: BPE pops the lowest rank, then
// the leftmost; SPM (llama.cpp) the highest score, then the leftmost.
#define BPE_LESS(a, b) ((a)->rank != (b)->rank ? (a)->rank < (b)->rank : (a)->pos < (b)->pos)
#define SPM_LESS(a, b) ((a)->score != (b)->score ? (a)->score > (b)->score : (a)->pos < (b)->pos)

#define HEAP_FUNCS(NAME, LESS)                                                  \
    static void NAME##_push(tok_model_ctx *c, heap_item it) {                   \
        if (c->hn == c->hcap) {                                                 \
            c->hcap = c->hcap ? c->hcap * 2 : 64;                               \
            c->heap = realloc(c->heap, c->hcap * sizeof *c->heap);              \
            if (!c->heap) abort();                                              \
        }                                                                       \
        size_t i = c->hn++;                                                     \
        while (i > 0) {                                                         \
            size_t p = (i - 1) / 2;                                             \
            if (!(LESS(&it, &c->heap[p]))) break;                               \
            c->heap[i] = c->heap[p];                                            \
            i = p;                                                              \
        }                                                                       \
        c->heap[i] = it;                                                        \
    }                                                                           \
    static heap_item NAME##_pop(tok_model_ctx *c) {                             \
        heap_item top = c->heap[0];                                             \
        heap_item last = c->heap[--c->hn];                                      \
        size_t i = 0, n = c->hn;                                                \
        for (;;) {                                                              \
            size_t l = 2 * i + 1;                                               \
            if (l >= n) break;                                                  \
            size_t m = l;                                                       \
            if (l + 1 < n && LESS(&c->heap[l + 1], &c->heap[l])) m = l + 1;     \
            if (!(LESS(&c->heap[m], &last))) break;                             \
            c->heap[i] = c->heap[m];                                            \
            i = m;                                                              \
        }                                                                       \
        if (n) c->heap[i] = last;                                               \
        return top;                                                             \
    }

HEAP_FUNCS(bpe_heap, BPE_LESS)
HEAP_FUNCS(spm_heap, SPM_LESS)

// ---------------------------------------------------------------- BPE

static int merge_get(const tok_model *m, int32_t a, int32_t b, int32_t *rank, int32_t *new_id) {
    return tok_u64map_get(&m->merges, ((uint64_t)(uint32_t)a << 32) | (uint32_t)b, rank, new_id);
}

static void bpe_merge_all(const tok_model *m, tok_model_ctx *c) {
    c->hn = 0;
    for (size_t i = 0; i + 1 < c->nsym; i++) {
        int32_t rank, nid;
        if (merge_get(m, c->sid[i], c->sid[i + 1], &rank, &nid))
            bpe_heap_push(c, (heap_item){.rank = rank, .pos = (int32_t)i, .new_id = nid});
    }
    while (c->hn) {
        heap_item top = bpe_heap_pop(c);
        int32_t p = top.pos;
        if (c->slen[p] == 0) continue;
        int32_t nx = c->snext[p];
        if (nx == -1) continue;
        int32_t rank, nid;
        if (!merge_get(m, c->sid[p], c->sid[nx], &rank, &nid) || nid != top.new_id) continue;
        c->sid[p] = top.new_id;
        c->slen[p] += c->slen[nx];
        c->snext[p] = c->snext[nx];
        c->slen[nx] = 0;
        if (c->snext[nx] >= 0) c->sprev[c->snext[nx]] = p;
        int32_t pv = c->sprev[p];
        if (pv >= 0 && merge_get(m, c->sid[pv], c->sid[p], &rank, &nid))
            bpe_heap_push(c, (heap_item){.rank = rank, .pos = pv, .new_id = nid});
        int32_t nn = c->snext[p];
        if (nn >= 0 && merge_get(m, c->sid[p], c->sid[nn], &rank, &nid))
            bpe_heap_push(c, (heap_item){.rank = rank, .pos = p, .new_id = nid});
    }
}

// BPE::merge_word then the symbols' ids, appended to out.
static int bpe_word(const tok_model *m, tok_model_ctx *c, const char *s, size_t n, tok_ivec *out,
                    atoll_error *e) {
    c->nsym = 0;
    int have_unk = 0;
    int32_t unk_id = -1;
    uint32_t unk_len = 0;
    size_t plen = m->cont_prefix ? strlen(m->cont_prefix) : 0;
    size_t slen = m->eow_suffix ? strlen(m->eow_suffix) : 0;
    for (size_t i = 0; i < n;) {
        size_t cl = tok_utf8_len((unsigned char)s[i]);
        if (i + cl > n) cl = n - i;
        int is_first = i == 0, is_last = i + cl == n;
        const char *key = s + i;
        size_t klen = cl;
        if ((!is_first && plen) || (is_last && slen)) {
            c->tmp.len = 0;
            if (!is_first && plen) tok_buf_append(&c->tmp, m->cont_prefix, plen);
            tok_buf_append(&c->tmp, s + i, cl);
            if (is_last && slen) tok_buf_append(&c->tmp, m->eow_suffix, slen);
            key = c->tmp.data;
            klen = c->tmp.len;
        }
        int32_t id;
        if (tok_strmap_get(&m->vocab, key, klen, &id)) {
            if (have_unk) {
                sym_add(c, unk_id, unk_len, 0);
                have_unk = 0;
            }
            sym_add(c, id, (uint32_t)cl, 0);
        } else {
            int done = 0;
            if (m->byte_fallback) {
                int ok = 1;
                for (size_t k = 0; k < klen; k++)
                    if (m->byte_ids[(unsigned char)key[k]] < 0) ok = 0;
                if (ok) {
                    for (size_t k = 0; k < klen; k++) sym_add(c, m->byte_ids[(unsigned char)key[k]], 1, 0);
                    done = 1;
                }
            }
            if (!done && m->unk_id != -1) {  // -1: no unk_token, the character is dropped
                if (m->unk_id == -2) return error_set(e, "the model's unk_token is not in its vocabulary");
                if (have_unk && m->fuse_unk) {
                    unk_len += (uint32_t)cl;
                } else {
                    if (have_unk) sym_add(c, unk_id, unk_len, 0);
                    have_unk = 1;
                    unk_id = m->unk_id;
                    unk_len = (uint32_t)cl;
                }
            }
        }
        i += cl;
    }
    if (have_unk) sym_add(c, unk_id, unk_len, 0);
    bpe_merge_all(m, c);
    for (int32_t i = c->nsym ? 0 : -1; i >= 0; i = c->snext[i]) tok_ivec_push(out, c->sid[i]);
    return 0;
}

// ---------------------------------------------------------------- SPM (llama.cpp)

static void spm_try_bigram(const tok_model *m, tok_model_ctx *c, const char *s, int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    uint32_t size = c->slen[left] + c->slen[right];
    int32_t id;
    if (!tok_strmap_get(&m->vocab, s + c->soff[left], size, &id)) return;
    if (id < 0 || id >= m->n_scores) return;
    spm_heap_push(c, (heap_item){.score = m->scores[id], .pos = left, .size = size});
}

static void spm_byte(const tok_model *m, unsigned char b, tok_ivec *out) {
    if (m->byte_ids[b] >= 0) {
        tok_ivec_push(out, m->byte_ids[b]);
        return;
    }
    char one = (char)b;
    int32_t id;
    if (tok_strmap_get(&m->vocab, &one, 1, &id))
        tok_ivec_push(out, id);
    else if (m->unk_id >= 0)
        tok_ivec_push(out, m->unk_id);
}

static int spm_tokenize(const tok_model *m, tok_model_ctx *c, const char *s, size_t n, tok_ivec *out) {
    c->nsym = 0;
    for (size_t i = 0; i < n;) {
        size_t cl = tok_utf8_len((unsigned char)s[i]);
        if (i + cl > n) cl = n - i;
        sym_add(c, -1, (uint32_t)cl, (uint32_t)i);
        i += cl;
    }
    c->hn = 0;
    for (size_t i = 1; i < c->nsym; i++) spm_try_bigram(m, c, s, (int32_t)i - 1, (int32_t)i);
    while (c->hn) {
        heap_item b = spm_heap_pop(c);
        int32_t l = b.pos, r = c->snext[l];
        if (r < 0 || c->slen[l] == 0 || c->slen[r] == 0 || c->slen[l] + c->slen[r] != b.size) continue;
        c->slen[l] += c->slen[r];
        c->slen[r] = 0;
        c->snext[l] = c->snext[r];
        if (c->snext[r] >= 0) c->sprev[c->snext[r]] = l;
        spm_try_bigram(m, c, s, c->sprev[l], l);
        spm_try_bigram(m, c, s, l, c->snext[l]);
    }
    for (int32_t i = c->nsym ? 0 : -1; i >= 0; i = c->snext[i]) {
        int32_t id;
        if (tok_strmap_get(&m->vocab, s + c->soff[i], c->slen[i], &id)) {
            tok_ivec_push(out, id);
        } else {
            // Only single characters can be missing (bigrams exist by construction).
            for (uint32_t k = 0; k < c->slen[i]; k++) spm_byte(m, (unsigned char)s[c->soff[i] + k], out);
        }
    }
    return 0;
}

// ---------------------------------------------------------------- entry

static int bpe_cached(const tok_model *m, tok_model_ctx *c, const char *s, size_t n, tok_ivec *out, atoll_error *e);

int tok_model_tokenize(const tok_model *m, tok_model_ctx *c, const char *s, size_t n, tok_ivec *out,
                       atoll_error *e) {
    if (n == 0) return 0;
    if (m->kind == TOK_MODEL_SPM) return spm_tokenize(m, c, s, n, out);
    if (m->split_at_metaspace && n >= CACHE_MAX_WORD) {
        // Cut before each "▁" that follows another character (see tok_model).
        size_t start = 0;
        for (size_t i = 3; i + 3 <= n; i++) {
            if (memcmp(s + i, "\xE2\x96\x81", 3) != 0 || !memcmp(s + i - 3, "\xE2\x96\x81", 3)) continue;
            if (bpe_cached(m, c, s + start, i - start, out, e)) return -1;
            start = i;
        }
        return bpe_cached(m, c, s + start, n - start, out, e);
    }
    return bpe_cached(m, c, s, n, out, e);
}

static int bpe_cached(const tok_model *m, tok_model_ctx *c, const char *s, size_t n, tok_ivec *out, atoll_error *e) {
    if (m->ignore_merges) {
        int32_t id;
        if (tok_strmap_get(&m->vocab, s, n, &id)) {
            tok_ivec_push(out, id);
            return 0;
        }
    }
    int cacheable = n < CACHE_MAX_WORD;
    if (cacheable) {
        int32_t ent;
        if (tok_strmap_get(&c->cache, s, n, &ent)) {
            for (uint32_t k = 0; k < c->ent_len[ent]; k++) tok_ivec_push(out, c->cache_ids.v[c->ent_off[ent] + k]);
            return 0;
        }
    }
    size_t before = out->n;
    if (bpe_word(m, c, s, n, out, e)) return -1;
    if (cacheable && c->n_ent < CACHE_MAX_ENTRIES) {
        if (c->n_ent == c->cap_ent) {
            c->cap_ent = c->cap_ent ? c->cap_ent * 2 : 256;
            c->ent_off = realloc(c->ent_off, c->cap_ent * sizeof *c->ent_off);
            c->ent_len = realloc(c->ent_len, c->cap_ent * sizeof *c->ent_len);
            if (!c->ent_off || !c->ent_len) abort();
        }
        c->ent_off[c->n_ent] = c->cache_ids.n;
        c->ent_len[c->n_ent] = (uint32_t)(out->n - before);
        for (size_t k = before; k < out->n; k++) tok_ivec_push(&c->cache_ids, out->v[k]);
        tok_strmap_put(&c->cache, s, n, (int32_t)c->n_ent);
        c->n_ent++;
    }
    return 0;
}
