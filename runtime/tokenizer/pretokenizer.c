// runtime/tokenizer/pretokenizer.c — pre-tokenizers, as HF's: ByteLevel
// (optional prefix space, GPT-2 regex, byte -> printable character), Split
// (regex or string, the five delimiter behaviors, invert), Digits,
// Metaspace, Whitespace, WhitespaceSplit, Punctuation, CharDelimiterSplit.
// Each maps every piece to sub-pieces; empty pieces are dropped.
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "runtime/tokenizer/tok_internal.h"

const char *const tok_pattern_gpt2 =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
const char *const tok_pattern_llama3 =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char *const tok_pattern_qwen2 =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

void tok_pieces_push(tok_pieces *p, size_t off, size_t len, int first) {
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 64;
        p->v = realloc(p->v, p->cap * sizeof *p->v);
        if (!p->v) abort();
    }
    p->v[p->n].off = off;
    p->v[p->n].len = len;
    p->v[p->n].first = first;
    p->n++;
}

void tok_pieces_free(tok_pieces *p) {
    free(p->v);
    memset(p, 0, sizeof *p);
}

void tok_pretokenizer_free(tok_pretokenizer *p) { tok_regex_free(p->re); }

// ---------------------------------------------------------------- patterns

typedef int (*char_pred)(uint32_t cp, const tok_pretokenizer *p);

// Rust's char::is_numeric (categories Nd, Nl, No), which HF's Digits uses;
// plus the numbers of Unicode 16 that libutf8proc 2.8 does not know yet.
static int is_numeric(uint32_t c, const tok_pretokenizer *p) {
    if (c < 0x80) return c >= '0' && c <= '9';
    switch (utf8proc_category((utf8proc_int32_t)c)) {
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
        return 1;
    default:
        break;
    }
    static const uint32_t extra[][2] = {{0x10D40, 0x10D49}, {0x116D0, 0x116E3}, {0x11BF0, 0x11BF9}, {0x16130, 0x16139},
                                        {0x16D70, 0x16D79}, {0x1CCF0, 0x1CCF9}, {0x1E5F1, 0x1E5FA}};
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++)
        if (c >= extra[i][0] && c <= extra[i][1]) return 1;
    return 0;
}
static int is_ws(uint32_t c, const tok_pretokenizer *p) { return tok_is_whitespace(c); }
static int is_delim(uint32_t c, const tok_pretokenizer *p) { return c == p->delimiter; }
static int is_repl(uint32_t c, const tok_pretokenizer *p) { return c == p->replacement; }

// HF's punctuation: ASCII punctuation or a P* category in its (older)
// Unicode data: utf8proc's P* less these newer ones, plus U+166D and
// U+111C9 (punctuation then). Measured over every code point.
static const uint32_t new_punct[][2] = {
    {0x61D, 0x61D},     {0x9FD, 0x9FD},     {0xA76, 0xA76},     {0xC77, 0xC77},     {0xC84, 0xC84},
    {0x1B7D, 0x1B7E},   {0x2E43, 0x2E4F},   {0x2E52, 0x2E5D},   {0x10EAD, 0x10EAD}, {0x10F55, 0x10F59},
    {0x10F86, 0x10F89}, {0x1144B, 0x1144F}, {0x1145A, 0x1145B}, {0x1145D, 0x1145D}, {0x11660, 0x1166C},
    {0x116B9, 0x116B9}, {0x1183B, 0x1183B}, {0x11944, 0x11946}, {0x119E2, 0x119E2}, {0x11A3F, 0x11A46},
    {0x11A9A, 0x11A9C}, {0x11A9E, 0x11AA2}, {0x11B00, 0x11B09}, {0x11C41, 0x11C45}, {0x11C70, 0x11C71},
    {0x11EF7, 0x11EF8}, {0x11F43, 0x11F4F}, {0x11FFF, 0x11FFF}, {0x12FF1, 0x12FF2}, {0x16E97, 0x16E9A},
    {0x16FE2, 0x16FE2}, {0x1E95E, 0x1E95F},
};

static int is_punct(uint32_t c, const tok_pretokenizer *p) {
    if (c < 0x80) return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126);
    if (c == 0x166D || c == 0x111C9) return 1;
    for (size_t i = 0; i < sizeof new_punct / sizeof new_punct[0]; i++)
        if (c >= new_punct[i][0] && c <= new_punct[i][1]) return 0;
    switch (utf8proc_category((utf8proc_int32_t)c)) {
    case UTF8PROC_CATEGORY_PC:
    case UTF8PROC_CATEGORY_PD:
    case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE:
    case UTF8PROC_CATEGORY_PI:
    case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO:
        return 1;
    default:
        return 0;
    }
}

// find_matches for a char predicate: every matching character is a match.
static void pred_matches(const char *s, size_t n, char_pred pred, const tok_pretokenizer *p, tok_spans *out) {
    out->n = 0;
    if (n == 0) {
        tok_spans_push(out, 0, 0, 0);
        return;
    }
    size_t last = 0;
    for (size_t i = 0; i < n;) {
        int len;
        uint32_t cp = tok_utf8_decode(s + i, &len);
        if (pred(cp, p)) {
            if (last < i) tok_spans_push(out, last, i, 0);
            tok_spans_push(out, i, i + len, 1);
            last = i + len;
        }
        i += len;
    }
    if (n > last) tok_spans_push(out, last, n, 0);
}

// NormalizedString::split: applies the behavior to the spans (is_match ->
// "remove" flag) and pushes the kept, non-empty pieces.
static void split_by(tok_spans *sp, tok_split_behavior b, size_t base, int first, tok_pieces *out) {
    size_t n = sp->n, w = 0;
    tok_span *v = sp->v;
    switch (b) {
    case TOK_SPLIT_ISOLATED:
        for (size_t i = 0; i < n; i++) v[i].is_match = 0;
        w = n;
        break;
    case TOK_SPLIT_REMOVED:
        w = n;
        break;
    case TOK_SPLIT_CONTIGUOUS: {
        int prev = 0;
        for (size_t i = 0; i < n; i++) {
            int m = v[i].is_match;
            if (m == prev && w > 0)
                v[w - 1].end = v[i].end;
            else
                v[w++] = (tok_span){v[i].start, v[i].end, 0};
            prev = m;
        }
        break;
    }
    case TOK_SPLIT_MERGED_PREV: {
        int prev = 0;
        for (size_t i = 0; i < n; i++) {
            int m = v[i].is_match;
            if (m && !prev && w > 0)
                v[w - 1].end = v[i].end;
            else
                v[w++] = (tok_span){v[i].start, v[i].end, 0};
            prev = m;
        }
        break;
    }
    case TOK_SPLIT_MERGED_NEXT: {
        // Folded from the end, then reversed: written back to front.
        int prev = 0;
        size_t r = n;  // v[r..n) holds the result
        for (size_t i = n; i-- > 0;) {
            int m = v[i].is_match;
            tok_span cur = v[i];
            if (m && !prev && r < n) {
                v[r].start = cur.start;
            } else {
                v[--r] = (tok_span){cur.start, cur.end, 0};
            }
            prev = m;
        }
        memmove(v, v + r, (n - r) * sizeof *v);
        w = n - r;
        break;
    }
    }
    for (size_t i = 0; i < w; i++) {
        if (v[i].is_match || v[i].end == v[i].start) continue;
        tok_pieces_push(out, base + v[i].start, v[i].end - v[i].start, first && v[i].start == 0);
    }
}

// ---------------------------------------------------------------- driver

int tok_pretokenize(const tokenizer *t, tok_match_ctx *mctx, tok_buf *arena, tok_pieces *in, tok_pieces *tmp,
                    atoll_error *e) {
    tok_spans sp = {0};
    tok_buf scratch = {0};
    int rc = 0;
    for (int k = 0; k < t->n_pre && rc == 0; k++) {
        const tok_pretokenizer *p = &t->pre[k];
        tmp->n = 0;
        for (size_t i = 0; i < in->n && rc == 0; i++) {
            tok_piece pc = in->v[i];
            switch (p->type) {
            case TOK_PRE_BYTELEVEL: {
                size_t off = pc.off, len = pc.len;
                if (p->add_prefix_space && !(len > 0 && arena->data[off] == ' ')) {
                    scratch.len = 0;
                    tok_buf_putc(&scratch, ' ');
                    tok_buf_append(&scratch, arena->data + off, len);
                    off = arena->len;
                    len = scratch.len;
                    tok_buf_append(arena, scratch.data, scratch.len);
                }
                size_t start = tmp->n;
                if (p->re) {
                    if (tok_regex_find_matches(p->re, mctx, arena->data + off, len, &sp, e)) {
                        rc = -1;
                        break;
                    }
                    split_by(&sp, TOK_SPLIT_ISOLATED, off, pc.first, tmp);
                } else if (len) {
                    tok_pieces_push(tmp, off, len, pc.first);
                }
                // Bytes -> printable characters.
                for (size_t j = start; j < tmp->n; j++) {
                    scratch.len = 0;
                    const unsigned char *s = (const unsigned char *)arena->data + tmp->v[j].off;
                    for (size_t q = 0; q < tmp->v[j].len; q++) tok_buf_put_cp(&scratch, tok_byte_cp(s[q]));
                    tmp->v[j].off = arena->len;
                    tmp->v[j].len = scratch.len;
                    tok_buf_append(arena, scratch.data, scratch.len);
                }
                break;
            }
            case TOK_PRE_SPLIT:
            case TOK_PRE_WHITESPACE:
                if (tok_regex_find_matches(p->re, mctx, arena->data + pc.off, pc.len, &sp, e)) {
                    rc = -1;
                    break;
                }
                if (p->invert)
                    for (size_t q = 0; q < sp.n; q++) sp.v[q].is_match = !sp.v[q].is_match;
                split_by(&sp, p->behavior, pc.off, pc.first, tmp);
                break;
            case TOK_PRE_DIGITS:
                pred_matches(arena->data + pc.off, pc.len, is_numeric, p, &sp);
                split_by(&sp, p->individual_digits ? TOK_SPLIT_ISOLATED : TOK_SPLIT_CONTIGUOUS, pc.off, pc.first, tmp);
                break;
            case TOK_PRE_WHITESPACE_SPLIT:
                pred_matches(arena->data + pc.off, pc.len, is_ws, p, &sp);
                split_by(&sp, TOK_SPLIT_REMOVED, pc.off, pc.first, tmp);
                break;
            case TOK_PRE_PUNCTUATION:
                pred_matches(arena->data + pc.off, pc.len, is_punct, p, &sp);
                split_by(&sp, p->behavior, pc.off, pc.first, tmp);
                break;
            case TOK_PRE_CHAR_DELIMITER:
                pred_matches(arena->data + pc.off, pc.len, is_delim, p, &sp);
                split_by(&sp, TOK_SPLIT_REMOVED, pc.off, pc.first, tmp);
                break;
            case TOK_PRE_METASPACE: {
                scratch.len = 0;
                const char *s = arena->data + pc.off;
                int starts = 0;
                {
                    tok_buf rep = {0};
                    for (size_t q = 0; q < pc.len; q++) {
                        if (s[q] == ' ')
                            tok_buf_put_cp(&rep, p->replacement);
                        else
                            tok_buf_putc(&rep, s[q]);
                    }
                    if (rep.len) {
                        int l;
                        starts = tok_utf8_decode(rep.data, &l) == p->replacement;
                    }
                    int prepend = !starts && (p->prepend_scheme == TOK_PREPEND_ALWAYS ||
                                              (p->prepend_scheme == TOK_PREPEND_FIRST && pc.first));
                    if (prepend) tok_buf_put_cp(&scratch, p->replacement);
                    tok_buf_append(&scratch, rep.data, rep.len);
                    tok_buf_free(&rep);
                }
                size_t off = arena->len;
                tok_buf_append(arena, scratch.data, scratch.len);
                if (p->split) {
                    pred_matches(arena->data + off, scratch.len, is_repl, p, &sp);
                    split_by(&sp, TOK_SPLIT_MERGED_NEXT, off, pc.first, tmp);
                } else if (scratch.len) {
                    tok_pieces_push(tmp, off, scratch.len, pc.first);
                }
                break;
            }
            }
        }
        tok_pieces swap = *in;
        *in = *tmp;
        *tmp = swap;
    }
    tok_spans_free(&sp);
    tok_buf_free(&scratch);
    return rc;
}
