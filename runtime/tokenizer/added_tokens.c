// runtime/tokenizer/added_tokens.c — finding added tokens in text as HF's
// AddedVocabulary does: a byte trie with a first-byte index gives the
// leftmost-longest, non-overlapping matches (aho-corasick LeftmostLongest),
// then single_word, lstrip and rstrip decide each match's span.
#include <stdlib.h>
#include <string.h>

#include "runtime/tokenizer/tok_internal.h"

void tok_matcher_init(tok_matcher *m) {
    memset(m, 0, sizeof *m);
    tok_u64map_init(&m->edges, 64);
    m->cap_nodes = 64;
    m->terminal = malloc(m->cap_nodes * sizeof *m->terminal);
    if (!m->terminal) abort();
    m->terminal[0] = -1;
    m->n_nodes = 1;
}

void tok_matcher_free(tok_matcher *m) {
    tok_u64map_free(&m->edges);
    free(m->terminal);
    free(m->pattern_token);
    memset(m, 0, sizeof *m);
}

void tok_matcher_add(tok_matcher *m, const char *s, size_t n, int32_t token_index) {
    if (n == 0) return;
    int32_t node = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t key = ((uint64_t)node << 8) | (unsigned char)s[i];
        int32_t child;
        if (!tok_u64map_get(&m->edges, key, &child, NULL)) {
            if (m->n_nodes == m->cap_nodes) {
                m->cap_nodes *= 2;
                m->terminal = realloc(m->terminal, m->cap_nodes * sizeof *m->terminal);
                if (!m->terminal) abort();
            }
            child = (int32_t)m->n_nodes++;
            m->terminal[child] = -1;
            tok_u64map_put(&m->edges, key, child, 0);
        }
        node = child;
    }
    if (m->terminal[node] >= 0) return;  // same content twice: the first wins
    m->pattern_token = realloc(m->pattern_token, (m->n_patterns + 1) * sizeof *m->pattern_token);
    if (!m->pattern_token) abort();
    m->pattern_token[m->n_patterns] = token_index;
    m->terminal[node] = m->n_patterns++;
    m->first[(unsigned char)s[0]] = 1;
}

// Longest pattern starting at s[i]: its end, or 0 when none.
static size_t longest_at(const tok_matcher *m, const char *s, size_t n, size_t i, int32_t *pattern) {
    int32_t node = 0;
    size_t best = 0;
    for (size_t k = i; k < n; k++) {
        int32_t child;
        if (!tok_u64map_get(&m->edges, ((uint64_t)node << 8) | (unsigned char)s[k], &child, NULL)) break;
        node = child;
        if (m->terminal[node] >= 0) {
            best = k + 1;
            *pattern = m->terminal[node];
        }
    }
    return best;
}

void tok_segments_free(tok_segments *s) {
    free(s->v);
    memset(s, 0, sizeof *s);
}

static void seg_push(tok_segments *o, size_t a, size_t b, int32_t added) {
    if (o->n == o->cap) {
        o->cap = o->cap ? o->cap * 2 : 16;
        o->v = realloc(o->v, o->cap * sizeof *o->v);
        if (!o->v) abort();
    }
    o->v[o->n].start = a;
    o->v[o->n].end = b;
    o->v[o->n].added = added;
    o->n++;
}

// Start of the character that ends at s[end) (s valid UTF-8, end > 0).
static size_t prev_char(const char *s, size_t end) {
    size_t i = end - 1;
    while (i > 0 && ((unsigned char)s[i] & 0xC0) == 0x80) i--;
    return i;
}

void tok_added_split(const tokenizer *t, const tok_matcher *m, const char *s, size_t n, tok_segments *out) {
    out->n = 0;
    if (n == 0) return;
    size_t start_offset = 0, pos = 0;
    if (m->n_patterns) {
        while (pos < n) {
            size_t i = pos, end = 0;
            int32_t pat = -1;
            for (; i < n; i++) {
                if (!m->first[(unsigned char)s[i]]) continue;
                end = longest_at(m, s, n, i, &pat);
                if (end) break;
            }
            if (!end) break;
            pos = end;  // the next search starts where this match ended
            const tok_added *tk = &t->added[m->pattern_token[pat]];
            size_t start = i, stop = end;
            if (tk->single_word) {
                int len;
                int start_space = start == 0;
                if (!start_space) start_space = !tok_is_word_char(tok_utf8_decode(s + prev_char(s, start), &len));
                int stop_space = stop == n;
                if (!stop_space) stop_space = !tok_is_word_char(tok_utf8_decode(s + stop, &len));
                if (!start_space || !stop_space) continue;
            }
            if (tk->lstrip) {
                size_t ns = start;
                while (ns > 0) {
                    size_t p = prev_char(s, ns);
                    int len;
                    if (!tok_is_whitespace(tok_utf8_decode(s + p, &len))) break;
                    ns = p;
                }
                start = ns > start_offset ? ns : start_offset;
            }
            if (tk->rstrip) {
                while (stop < n) {
                    int len;
                    uint32_t cp = tok_utf8_decode(s + stop, &len);
                    if (!tok_is_whitespace(cp)) break;
                    stop += len;
                }
            }
            if (start_offset < start) seg_push(out, start_offset, start, -1);
            seg_push(out, start, stop, m->pattern_token[pat]);
            start_offset = stop;
        }
    }
    if (start_offset != n) seg_push(out, start_offset, n, -1);
}
