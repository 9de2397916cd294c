// runtime/tokenizer/normalizer.c — normalizers: NFC/NFD/NFKC/NFKD (utf8proc,
// corrected to the older Unicode data HF tokenizers normalizes with),
// Lowercase (Rust's str::to_lowercase), Prepend, Replace, Strip,
// StripAccents, ByteLevel, applied in sequence.
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "runtime/tokenizer/tok_internal.h"

// Code points that HF tokenizers' normalizer (the unicode-normalization
// crate it uses) leaves alone while utf8proc's newer Unicode data decomposes
// them or gives them a non-zero combining class. Measured over every code
// point against tokenizers 0.23 and libutf8proc 2.8. Such a character is a
// starter that neither decomposes, composes nor reorders, so the text is
// normalized in pieces around it.
static const uint32_t inert[][2] = {
    {0x7FD, 0x7FD},     {0x898, 0x89F},     {0x8CA, 0x8D3},     {0x9FE, 0x9FE},     {0xC3C, 0xC3C},
    {0xD3B, 0xD3C},     {0xEBA, 0xEBA},     {0x1715, 0x1715},   {0x1ABF, 0x1ACE},   {0x1DF6, 0x1DFA},
    {0x32FF, 0x32FF},   {0xA7F2, 0xA7F4},   {0xA82C, 0xA82C},   {0xAB69, 0xAB69},   {0x10781, 0x10785},
    {0x10787, 0x107B0}, {0x107B2, 0x107BA}, {0x10D24, 0x10D27}, {0x10EAB, 0x10EAC}, {0x10EFD, 0x10EFF},
    {0x10F46, 0x10F50}, {0x10F82, 0x10F85}, {0x11070, 0x11070}, {0x1133B, 0x1133B}, {0x1145E, 0x1145E},
    {0x11839, 0x1183A}, {0x11938, 0x11938}, {0x1193D, 0x1193E}, {0x11943, 0x11943}, {0x119E0, 0x119E0},
    {0x11A34, 0x11A34}, {0x11A47, 0x11A47}, {0x11A99, 0x11A99}, {0x11D42, 0x11D42}, {0x11D44, 0x11D45},
    {0x11D97, 0x11D97}, {0x11F41, 0x11F42}, {0x16FF0, 0x16FF1}, {0x1E030, 0x1E06D}, {0x1E08F, 0x1E08F},
    {0x1E130, 0x1E136}, {0x1E2AE, 0x1E2AE}, {0x1E2EC, 0x1E2EF}, {0x1E4EC, 0x1E4EF}, {0x1F16C, 0x1F16C},
    {0x1FBF0, 0x1FBF9},
};

static int is_inert(uint32_t cp) {
    if (cp < 0x7FD) return 0;
    size_t lo = 0, hi = sizeof inert / sizeof inert[0];
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cp < inert[mid][0])
            hi = mid;
        else if (cp > inert[mid][1])
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

static int norm_piece(tok_norm_type form, const char *s, size_t n, tok_buf *out, atoll_error *e) {
    size_t i = 0;
    while (i < n && (unsigned char)s[i] < 0x80) i++;
    if (i == n) {  // ASCII is the same in every form
        tok_buf_append(out, s, n);
        return 0;
    }
    int opts = UTF8PROC_STABLE;
    switch (form) {
    case TOK_NORM_NFC: opts |= UTF8PROC_COMPOSE; break;
    case TOK_NORM_NFD: opts |= UTF8PROC_DECOMPOSE; break;
    case TOK_NORM_NFKC: opts |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT; break;
    default: opts |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT; break;
    }
    utf8proc_uint8_t *dst = NULL;
    utf8proc_ssize_t r = utf8proc_map((const utf8proc_uint8_t *)s, (utf8proc_ssize_t)n, &dst, opts);
    if (r < 0) return error_set(e, "Unicode normalization failed: %s", utf8proc_errmsg(r));
    if (form == TOK_NORM_NFC || form == TOK_NORM_NFKC) {
        // U+11938 is composed by utf8proc but not by HF (see inert[]).
        static const char comp[] = "\xF0\x91\xA4\xB8", decomp[] = "\xF0\x91\xA4\xB5\xF0\x91\xA4\xB0";
        const char *p = (const char *)dst, *end = p + r;
        for (;;) {
            const char *f = memmem(p, end - p, comp, 4);
            if (!f) break;
            tok_buf_append(out, p, f - p);
            tok_buf_append(out, decomp, 8);
            p = f + 4;
        }
        tok_buf_append(out, p, end - p);
    } else {
        tok_buf_append(out, dst, r);
    }
    free(dst);
    return 0;
}

int tok_unicode_normalize(tok_norm_type form, const char *s, size_t n, tok_buf *out, atoll_error *e) {
    size_t seg = 0, i = 0;
    while (i < n) {
        if ((unsigned char)s[i] < 0x80) {
            i++;
            continue;
        }
        int len;
        uint32_t cp = tok_utf8_decode(s + i, &len);
        if (is_inert(cp)) {
            if (norm_piece(form, s + seg, i - seg, out, e)) return -1;
            tok_buf_append(out, s + i, len);
            seg = i + len;
        }
        i += len;
    }
    return norm_piece(form, s + seg, n - seg, out, e);
}

// ---------------------------------------------------------------- StripAccents

// HF's StripAccents removes what its (older) Unicode data calls a mark:
// utf8proc's Mn/Mc/Me less these newer marks, plus U+1CF2-1CF3 (marks
// then, letters now). Measured over every code point against tokenizers.
static const uint32_t new_marks[][2] = {
    {0x7FD, 0x7FD},     {0x898, 0x89F},     {0x8CA, 0x8D3},     {0x9FE, 0x9FE},     {0xAFA, 0xAFF},
    {0xB55, 0xB55},     {0xC04, 0xC04},     {0xC3C, 0xC3C},     {0xCF3, 0xCF3},     {0xD00, 0xD00},
    {0xD3B, 0xD3C},     {0xD81, 0xD81},     {0xEBA, 0xEBA},     {0xECE, 0xECE},     {0x1715, 0x1715},
    {0x180F, 0x180F},   {0x1ABF, 0x1ACE},   {0x1CF7, 0x1CF7},   {0x1DF6, 0x1DFA},   {0xA82C, 0xA82C},
    {0xA8FF, 0xA8FF},   {0x10D24, 0x10D27}, {0x10EAB, 0x10EAC}, {0x10EFD, 0x10EFF}, {0x10F46, 0x10F50},
    {0x10F82, 0x10F85}, {0x11070, 0x11070}, {0x11073, 0x11074}, {0x110C2, 0x110C2}, {0x11145, 0x11146},
    {0x111C9, 0x111C9}, {0x111CE, 0x111CF}, {0x11241, 0x11241}, {0x1133B, 0x1133B}, {0x1145E, 0x1145E},
    {0x1182C, 0x1183A}, {0x11930, 0x11935}, {0x11937, 0x11938}, {0x1193B, 0x1193E}, {0x11940, 0x11940},
    {0x11942, 0x11943}, {0x119D1, 0x119D7}, {0x119DA, 0x119E0}, {0x119E4, 0x119E4}, {0x11A01, 0x11A0A},
    {0x11A33, 0x11A39}, {0x11A3B, 0x11A3E}, {0x11A47, 0x11A47}, {0x11A51, 0x11A5B}, {0x11A8A, 0x11A99},
    {0x11D31, 0x11D36}, {0x11D3A, 0x11D3A}, {0x11D3C, 0x11D3D}, {0x11D3F, 0x11D45}, {0x11D47, 0x11D47},
    {0x11D8A, 0x11D8E}, {0x11D90, 0x11D91}, {0x11D93, 0x11D97}, {0x11EF3, 0x11EF6}, {0x11F00, 0x11F01},
    {0x11F03, 0x11F03}, {0x11F34, 0x11F3A}, {0x11F3E, 0x11F42}, {0x13440, 0x13440}, {0x13447, 0x13455},
    {0x16F4F, 0x16F4F}, {0x16F7F, 0x16F87}, {0x16FE4, 0x16FE4}, {0x16FF0, 0x16FF1}, {0x1CF00, 0x1CF2D},
    {0x1CF30, 0x1CF46}, {0x1E08F, 0x1E08F}, {0x1E130, 0x1E136}, {0x1E2AE, 0x1E2AE}, {0x1E2EC, 0x1E2EF},
    {0x1E4EC, 0x1E4EF},
};

static int in_ranges(uint32_t cp, const uint32_t (*r)[2], size_t n) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cp < r[mid][0])
            hi = mid;
        else if (cp > r[mid][1])
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

static int is_hf_mark(uint32_t cp) {
    if (cp == 0x1CF2 || cp == 0x1CF3) return 1;
    utf8proc_category_t cat = utf8proc_category((utf8proc_int32_t)cp);
    if (cat != UTF8PROC_CATEGORY_MN && cat != UTF8PROC_CATEGORY_MC && cat != UTF8PROC_CATEGORY_ME) return 0;
    return !in_ranges(cp, new_marks, sizeof new_marks / sizeof new_marks[0]);
}

// ---------------------------------------------------------------- Lowercase

// Lowercase mappings of Unicode 16-17 that libutf8proc does not have yet
// (HF lowercases with Rust's char::to_lowercase; measured against it).
static const uint32_t lower_extra[][2] = {
    {0x1C89, 0x1C8A},   {0xA7CB, 0x264},    {0xA7CC, 0xA7CD},   {0xA7CE, 0xA7CF},   {0xA7D2, 0xA7D3},
    {0xA7D4, 0xA7D5},   {0xA7DA, 0xA7DB},   {0xA7DC, 0x19B},    {0x10D50, 0x10D70}, {0x10D51, 0x10D71},
    {0x10D52, 0x10D72}, {0x10D53, 0x10D73}, {0x10D54, 0x10D74}, {0x10D55, 0x10D75}, {0x10D56, 0x10D76},
    {0x10D57, 0x10D77}, {0x10D58, 0x10D78}, {0x10D59, 0x10D79}, {0x10D5A, 0x10D7A}, {0x10D5B, 0x10D7B},
    {0x10D5C, 0x10D7C}, {0x10D5D, 0x10D7D}, {0x10D5E, 0x10D7E}, {0x10D5F, 0x10D7F}, {0x10D60, 0x10D80},
    {0x10D61, 0x10D81}, {0x10D62, 0x10D82}, {0x10D63, 0x10D83}, {0x10D64, 0x10D84}, {0x10D65, 0x10D85},
    {0x16EA0, 0x16EBB}, {0x16EA1, 0x16EBC}, {0x16EA2, 0x16EBD}, {0x16EA3, 0x16EBE}, {0x16EA4, 0x16EBF},
    {0x16EA5, 0x16EC0}, {0x16EA6, 0x16EC1}, {0x16EA7, 0x16EC2}, {0x16EA8, 0x16EC3}, {0x16EA9, 0x16EC4},
    {0x16EAA, 0x16EC5}, {0x16EAB, 0x16EC6}, {0x16EAC, 0x16EC7}, {0x16EAD, 0x16EC8}, {0x16EAE, 0x16EC9},
    {0x16EAF, 0x16ECA}, {0x16EB0, 0x16ECB}, {0x16EB1, 0x16ECC}, {0x16EB2, 0x16ECD}, {0x16EB3, 0x16ECE},
    {0x16EB4, 0x16ECF}, {0x16EB5, 0x16ED0}, {0x16EB6, 0x16ED1}, {0x16EB7, 0x16ED2}, {0x16EB8, 0x16ED3},
};

// Each character on its own (char::to_lowercase: no final-sigma rule;
// U+0130 becomes "i" + U+0307).
static void lowercase(const char *s, size_t n, tok_buf *out) {
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x80) {
            tok_buf_putc(out, (char)(c >= 'A' && c <= 'Z' ? c + 32 : c));
            i++;
            continue;
        }
        int len;
        uint32_t cp = tok_utf8_decode(s + i, &len);
        if (cp == 0x130) {
            tok_buf_append(out, "i\xCC\x87", 3);
        } else {
            uint32_t lc = (uint32_t)utf8proc_tolower((utf8proc_int32_t)cp);
            if (lc == cp && cp >= 0x1C89)
                for (size_t k = 0; k < sizeof lower_extra / sizeof lower_extra[0]; k++)
                    if (lower_extra[k][0] == cp) lc = lower_extra[k][1];
            tok_buf_put_cp(out, lc);
        }
        i += len;
    }
}

// ---------------------------------------------------------------- chain

static int apply(const tok_normalizer *nm, tok_match_ctx *mctx, const char *s, size_t n, tok_buf *out,
                 atoll_error *e) {
    switch (nm->type) {
    case TOK_NORM_NFC:
    case TOK_NORM_NFD:
    case TOK_NORM_NFKC:
    case TOK_NORM_NFKD:
        return tok_unicode_normalize(nm->type, s, n, out, e);
    case TOK_NORM_LOWERCASE:
        lowercase(s, n, out);
        return 0;
    case TOK_NORM_PREPEND:
        if (n) tok_buf_append(out, nm->str, nm->str_len);
        tok_buf_append(out, s, n);
        return 0;
    case TOK_NORM_REPLACE: {
        tok_spans sp = {0};
        if (tok_regex_find_matches(nm->pattern, mctx, s, n, &sp, e)) {
            tok_spans_free(&sp);
            return -1;
        }
        for (size_t k = 0; k < sp.n; k++) {
            if (sp.v[k].is_match)
                tok_buf_append(out, nm->str, nm->str_len);
            else
                tok_buf_append(out, s + sp.v[k].start, sp.v[k].end - sp.v[k].start);
        }
        tok_spans_free(&sp);
        return 0;
    }
    case TOK_NORM_STRIP: {
        size_t a = 0, b = n;
        int len;
        if (nm->left)
            while (a < b && tok_is_whitespace(tok_utf8_decode(s + a, &len))) a += len;
        if (nm->right)
            while (b > a) {
                size_t p = b - 1;
                while (p > a && ((unsigned char)s[p] & 0xC0) == 0x80) p--;
                if (!tok_is_whitespace(tok_utf8_decode(s + p, &len))) break;
                b = p;
            }
        tok_buf_append(out, s + a, b - a);
        return 0;
    }
    case TOK_NORM_STRIP_ACCENTS:
        for (size_t i = 0; i < n;) {
            int len;
            uint32_t cp = tok_utf8_decode(s + i, &len);
            if (!is_hf_mark(cp)) tok_buf_append(out, s + i, len);
            i += len;
        }
        return 0;
    case TOK_NORM_BYTELEVEL:
        for (size_t i = 0; i < n; i++) tok_buf_put_cp(out, tok_byte_cp((unsigned char)s[i]));
        return 0;
    }
    return error_set(e, "unknown normalizer");
}

int tok_normalize(const tokenizer *t, tok_match_ctx *mctx, const char *s, size_t n, tok_buf *out,
                  atoll_error *e) {
    out->len = 0;
    if (!t->n_norm) {
        tok_buf_append(out, s, n);
        return 0;
    }
    tok_buf a = {0};
    const char *src = s;
    size_t len = n;
    int rc = 0;
    for (int k = 0; k < t->n_norm; k++) {
        tok_buf *dst = (k == t->n_norm - 1) ? out : &a;
        tok_buf tmp = {0};
        tok_buf *target = dst == &a ? &tmp : dst;
        target->len = 0;
        if (apply(&t->norm[k], mctx, src, len, target, e)) {
            tok_buf_free(&tmp);
            rc = -1;
            break;
        }
        if (dst == &a) {
            tok_buf_free(&a);
            a = tmp;
            if (!a.data) tok_buf_append(&a, "", 0);
            src = a.data;
            len = a.len;
        }
    }
    tok_buf_free(&a);
    return rc;
}

void tok_normalizer_free(tok_normalizer *n) {
    free(n->str);
    tok_regex_free(n->pattern);
}
