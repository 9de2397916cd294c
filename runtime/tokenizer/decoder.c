// runtime/tokenizer/decoder.c — decoders over a list of token texts, as HF's
// decode_chain: ByteLevel (bytes joined, then from_utf8_lossy), Metaspace,
// ByteFallback, Fuse, Strip, Replace, in sequence; no decoder joins with
// spaces. at_start/at_end let stream.c decode a window of the ids: steps
// that depend on being at the start or end of the whole text only act there.
#include <stdlib.h>
#include <string.h>

#include "runtime/tokenizer/tok_internal.h"

typedef struct {
    tok_buf a;
    size_t *off, *len;
    size_t n, cap;
} slist;

static void sl_push(slist *l, const char *s, size_t n) {
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->off = realloc(l->off, l->cap * sizeof *l->off);
        l->len = realloc(l->len, l->cap * sizeof *l->len);
        if (!l->off || !l->len) abort();
    }
    l->off[l->n] = l->a.len;
    l->len[l->n] = n;
    tok_buf_append(&l->a, s, n);
    l->n++;
}

// Appends to the last item (which must be the last thing in the arena).
static void sl_extend(slist *l, const char *s, size_t n) {
    tok_buf_append(&l->a, s, n);
    l->len[l->n - 1] += n;
}

static void sl_free(slist *l) {
    tok_buf_free(&l->a);
    free(l->off);
    free(l->len);
    memset(l, 0, sizeof *l);
}

#define ITEM(l, i) ((l)->a.data + (l)->off[i])

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// "<0xNN>" as ByteFallback reads it (u8::from_str_radix of two characters,
// which also takes a '+' sign): the byte, or -1.
static int byte_token(const char *s, size_t n) {
    if (n != 6 || memcmp(s, "<0x", 3) != 0 || s[5] != '>') return -1;
    int h = hexval(s[3]), l = hexval(s[4]);
    if (s[3] == '+' && l >= 0) return l;
    if (h < 0 || l < 0) return -1;
    return h * 16 + l;
}

static void flush_bytes(slist *out, tok_buf *bytes) {
    if (!bytes->len) return;
    if (tok_utf8_valid(bytes->data, bytes->len)) {
        sl_push(out, bytes->data, bytes->len);
    } else {
        for (size_t k = 0; k < bytes->len; k++) sl_push(out, "\xEF\xBF\xBD", 3);
    }
    bytes->len = 0;
}

static int step(const tokenizer *t, const tok_decoder *d, tok_match_ctx **mctx, slist *in, slist *out,
                int *joined, int at_start, int at_end, atoll_error *e) {
    switch (d->type) {
    case TOK_DEC_BYTELEVEL: {
        tok_buf bytes = {0};
        for (size_t i = 0; i < in->n; i++) {
            const char *s = ITEM(in, i);
            size_t n = in->len[i], mark = bytes.len;
            int ok = 1;
            for (size_t q = 0; q < n;) {
                int len;
                int b = tok_cp_byte(tok_utf8_decode(s + q, &len));
                if (b < 0) {
                    ok = 0;
                    break;
                }
                tok_buf_putc(&bytes, (char)b);
                q += len;
            }
            if (!ok) {
                bytes.len = mark;
                tok_buf_append(&bytes, s, n);
            }
        }
        tok_buf text = {0};
        tok_utf8_lossy(&text, (const unsigned char *)bytes.data, bytes.len);
        sl_push(out, text.data ? text.data : "", text.len);
        tok_buf_free(&text);
        tok_buf_free(&bytes);
        *joined = 1;
        return 0;
    }
    case TOK_DEC_METASPACE:
        for (size_t i = 0; i < in->n; i++) {
            const char *s = ITEM(in, i);
            size_t n = in->len[i];
            int drop = i == 0 && at_start && d->prepend_scheme != TOK_PREPEND_NEVER;
            sl_push(out, "", 0);
            for (size_t q = 0; q < n;) {
                int len;
                uint32_t cp = tok_utf8_decode(s + q, &len);
                if (cp == d->replacement) {
                    if (!drop) sl_extend(out, " ", 1);
                } else {
                    sl_extend(out, s + q, len);
                }
                q += len;
            }
        }
        return 0;
    case TOK_DEC_BYTEFALLBACK: {
        tok_buf bytes = {0};
        for (size_t i = 0; i < in->n; i++) {
            int b = byte_token(ITEM(in, i), in->len[i]);
            if (b >= 0) {
                tok_buf_putc(&bytes, (char)b);
                continue;
            }
            flush_bytes(out, &bytes);
            sl_push(out, ITEM(in, i), in->len[i]);
        }
        flush_bytes(out, &bytes);
        tok_buf_free(&bytes);
        return 0;
    }
    case TOK_DEC_FUSE:
        sl_push(out, "", 0);
        for (size_t i = 0; i < in->n; i++) sl_extend(out, ITEM(in, i), in->len[i]);
        *joined = 1;
        return 0;
    case TOK_DEC_STRIP:
        for (size_t i = 0; i < in->n; i++) {
            const char *s = ITEM(in, i);
            size_t n = in->len[i];
            // Character boundaries.
            size_t nch = 0;
            for (size_t q = 0; q < n; q += tok_utf8_len((unsigned char)s[q])) nch++;
            size_t *pos = malloc((nch + 1) * sizeof *pos);
            uint32_t *cps = malloc((nch + 1) * sizeof *cps);
            size_t c = 0;
            for (size_t q = 0; q < n;) {
                int len;
                cps[c] = tok_utf8_decode(s + q, &len);
                pos[c++] = q;
                q += len;
            }
            pos[nch] = n;
            size_t start_cut = 0, stop_cut = nch;
            int cut_left = !(*joined && i == 0 && !at_start);
            int cut_right = !(*joined && i == in->n - 1 && !at_end);
            if (cut_left)
                for (size_t k = 0; k < (size_t)d->start && k < nch; k++) {
                    if (cps[k] != d->content) break;
                    start_cut = k + 1;
                }
            if (cut_right)
                for (size_t k = 0; k < (size_t)d->stop && k < nch; k++) {
                    size_t idx = nch - k - 1;
                    if (cps[idx] != d->content) break;
                    stop_cut = idx;
                }
            if (stop_cut < start_cut) stop_cut = start_cut;
            sl_push(out, s + pos[start_cut], pos[stop_cut] - pos[start_cut]);
            free(pos);
            free(cps);
        }
        return 0;
    case TOK_DEC_REPLACE: {
        if (!*mctx) *mctx = tok_match_ctx_new();
        tok_spans sp = {0};
        for (size_t i = 0; i < in->n; i++) {
            const char *s = ITEM(in, i);
            if (tok_regex_find_matches(d->pattern, *mctx, s, in->len[i], &sp, e)) {
                tok_spans_free(&sp);
                return -1;
            }
            sl_push(out, "", 0);
            for (size_t k = 0; k < sp.n; k++) {
                if (sp.v[k].is_match)
                    sl_extend(out, d->str, d->str_len);
                else
                    sl_extend(out, s + sp.v[k].start, sp.v[k].end - sp.v[k].start);
            }
        }
        tok_spans_free(&sp);
        return 0;
    }
    }
    return error_set(e, "unknown decoder");
}

int tok_decode_texts(const tokenizer *t, const char *const *toks, const uint32_t *lens, size_t n, int at_start,
                     int at_end, tok_buf *out, atoll_error *e) {
    out->len = 0;
    if (!t->has_decoder) {
        for (size_t i = 0; i < n; i++) {
            if (i > 0 || !at_start) tok_buf_putc(out, ' ');
            tok_buf_append(out, toks[i], lens[i]);
        }
        if (!out->data) tok_buf_append(out, "", 0);
        return 0;
    }
    slist cur = {0};
    for (size_t i = 0; i < n; i++) sl_push(&cur, toks[i], lens[i]);
    int joined = 0, rc = 0;
    tok_match_ctx *mctx = NULL;
    for (int k = 0; k < t->n_dec; k++) {
        slist next = {0};
        if (step(t, &t->dec[k], &mctx, &cur, &next, &joined, at_start, at_end, e)) {
            sl_free(&next);
            rc = -1;
            break;
        }
        sl_free(&cur);
        cur = next;
    }
    if (rc == 0)
        for (size_t i = 0; i < cur.n; i++) tok_buf_append(out, ITEM(&cur, i), cur.len[i]);
    if (!out->data) tok_buf_append(out, "", 0);
    sl_free(&cur);
    tok_match_ctx_free(mctx);
    return rc;
}

void tok_decoder_free(tok_decoder *d) {
    tok_regex_free(d->pattern);
    free(d->str);
}
