// runtime/tokenizer/regex.c — regexes of tokenizer.json through PCRE2 (UTF,
// UCP, JIT when available), made to match what Hugging Face tokenizers'
// Oniguruma (Ruby syntax) matches: the pattern is rewritten so that \s, \w,
// \h, \p{L} and \p{N} mean onig's sets, ^/$ are line anchors and (?m) is
// dot-all. Also HF's find_matches (onig find_iter semantics, empty matches
// included) and Rust regex's \w for added tokens.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/tokenizer/tok_internal.h"

struct tok_regex {
    pcre2_code *code;
    int jit;
};

struct tok_match_ctx {
    pcre2_match_data *md;
};

// onig's \s: the 25 White_Space characters (PCRE2 adds U+180E).
#define WS_CLASS "\\t-\\r\\x20\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}"
// Word characters (Alphabetic, marks, decimal digits, connector punctuation)
// assigned in Unicode 15.0-16.0, which onig and Rust's regex know and PCRE2
// 10.42 (Unicode 14) does not (measured over every code point).
#define WORD_EXTRA                                                                                    \
    "\\x{897}\\x{CF3}\\x{ECE}\\x{1C89}-\\x{1C8A}\\x{A7CB}-\\x{A7CD}\\x{A7DA}-\\x{A7DC}\\x{105C0}-\\x{105F3}"        \
    "\\x{10D40}-\\x{10D65}\\x{10D69}-\\x{10D6D}\\x{10D6F}-\\x{10D85}\\x{10EC2}-\\x{10EC4}\\x{10EFC}-\\x{10EFF}" \
    "\\x{1123F}-\\x{11241}\\x{11380}-\\x{11389}\\x{1138B}\\x{1138E}\\x{11390}-\\x{113B5}\\x{113B7}-\\x{113C0}"   \
    "\\x{113C2}\\x{113C5}\\x{113C7}-\\x{113CA}\\x{113CC}-\\x{113D3}\\x{113E1}-\\x{113E2}\\x{116D0}-\\x{116E3}"   \
    "\\x{11BC0}-\\x{11BE0}\\x{11BF0}-\\x{11BF9}\\x{11F00}-\\x{11F10}\\x{11F12}-\\x{11F3A}\\x{11F3E}-\\x{11F42}" \
    "\\x{11F50}-\\x{11F5A}\\x{1342F}\\x{13440}-\\x{13455}\\x{13460}-\\x{143FA}\\x{16100}-\\x{16139}"             \
    "\\x{16D40}-\\x{16D6C}\\x{16D70}-\\x{16D79}\\x{18CFF}\\x{1B132}\\x{1B155}\\x{1CCF0}-\\x{1CCF9}"               \
    "\\x{1DF25}-\\x{1DF2A}\\x{1E030}-\\x{1E06D}\\x{1E08F}\\x{1E4D0}-\\x{1E4F9}\\x{1E5D0}-\\x{1E5FA}\\x{2B739}"   \
    "\\x{2EBF0}-\\x{2EE5D}\\x{31350}-\\x{323AF}"
// onig's \w: Alphabetic, marks, decimal digits, connector punctuation and
// the Latin-1 superscripts/fractions.
#define WORD_CLASS "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\x{B2}\\x{B3}\\x{B9}\\x{BC}-\\x{BE}" WORD_EXTRA
// Rust regex's \w: Alphabetic, marks, decimal digits, connector punctuation, Join_Control.
#define RUST_WORD_CLASS "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}" WORD_EXTRA

// HF's Whitespace pre-tokenizer, \w+|[^\w\s]+ in Rust regex terms.
const char *const tok_pattern_rust_whitespace = "[" RUST_WORD_CLASS "]+|[^" RUST_WORD_CLASS WS_CLASS "]+";
// Letters and numbers assigned in Unicode 15.0-16.0, which onig in
// tokenizers 0.23 classifies and PCRE2 10.42 (Unicode 14) does not yet know
// (measured against tokenizers over every code point; harmless on a newer PCRE2).
#define EXTRA_L                                                                                     \
    "\\x{1C89}-\\x{1C8A}\\x{A7CB}-\\x{A7CD}\\x{A7DA}-\\x{A7DC}\\x{105C0}-\\x{105F3}\\x{10D4A}-"     \
    "\\x{10D65}\\x{10D6F}-\\x{10D85}\\x{10EC2}-\\x{10EC4}\\x{1123F}-\\x{11240}\\x{11380}-\\x{11389}" \
    "\\x{1138B}\\x{1138E}\\x{11390}-\\x{113B5}\\x{113B7}\\x{113D1}\\x{113D3}\\x{11BC0}-\\x{11BE0}"  \
    "\\x{11F02}\\x{11F04}-\\x{11F10}\\x{11F12}-\\x{11F33}\\x{1342F}\\x{13441}-\\x{13446}\\x{13460}-" \
    "\\x{143FA}\\x{16100}-\\x{1611D}\\x{16D40}-\\x{16D6C}\\x{18CFF}\\x{1B132}\\x{1B155}\\x{1DF25}-"  \
    "\\x{1DF2A}\\x{1E030}-\\x{1E06D}\\x{1E4D0}-\\x{1E4EB}\\x{1E5D0}-\\x{1E5ED}\\x{1E5F0}\\x{2B739}"  \
    "\\x{2EBF0}-\\x{2EE5D}\\x{31350}-\\x{323AF}"
#define EXTRA_N                                                                                     \
    "\\x{10D40}-\\x{10D49}\\x{116D0}-\\x{116E3}\\x{11BF0}-\\x{11BF9}\\x{11F50}-\\x{11F59}\\x{16130}-" \
    "\\x{16139}\\x{16D70}-\\x{16D79}\\x{1CCF0}-\\x{1CCF9}\\x{1D2C0}-\\x{1D2D3}\\x{1E4F0}-\\x{1E4F9}"  \
    "\\x{1E5F1}-\\x{1E5FA}"

static void put(tok_buf *b, const char *s) { tok_buf_append(b, s, strlen(s)); }

// A set that onig and PCRE2 spell differently: emitted as a class outside
// brackets, or as class members inside a bracket (negated forms inside a
// bracket cannot be expressed and are passed through).
static void emit_set(tok_buf *o, int in_class, int negate, const char *members, const char *orig,
                     size_t orig_len) {
    if (in_class) {
        if (negate)
            tok_buf_append(o, orig, orig_len);
        else
            put(o, members);
        return;
    }
    put(o, negate ? "[^" : "[");
    put(o, members);
    put(o, "]");
}

static void rewrite(const char *p, size_t n, tok_buf *o) {
    int in_class = 0;
    size_t i = 0;
    while (i < n) {
        char c = p[i];
        if (c == '\\' && i + 1 < n) {
            char d = p[i + 1];
            if (d == 's' || d == 'S') {
                emit_set(o, in_class, d == 'S', WS_CLASS, p + i, 2);
                i += 2;
            } else if (d == 'w' || d == 'W') {
                emit_set(o, in_class, d == 'W', WORD_CLASS, p + i, 2);
                i += 2;
            } else if (d == 'h' || d == 'H') {  // onig: hex digit
                emit_set(o, in_class, d == 'H', "0-9a-fA-F", p + i, 2);
                i += 2;
            } else if (d == 'p' || d == 'P') {
                size_t j = i + 2, name_start, name_end;
                int neg = d == 'P';
                if (j < n && p[j] == '{') {
                    size_t k = j + 1;
                    while (k < n && p[k] != '}') k++;
                    name_start = j + 1;
                    name_end = k;
                    j = k < n ? k + 1 : k;
                } else {
                    name_start = j;
                    name_end = j < n ? j + 1 : j;
                    j = name_end;
                }
                if (name_start < name_end && p[name_start] == '^') {
                    neg = !neg;
                    name_start++;
                }
                size_t len = name_end - name_start;
                const char *name = p + name_start;
                const char *extra = NULL, *base = NULL;
                if ((len == 1 && name[0] == 'L') || (len == 6 && !memcmp(name, "Letter", 6))) {
                    extra = EXTRA_L;
                    base = "\\p{L}";
                } else if ((len == 1 && name[0] == 'N') || (len == 6 && !memcmp(name, "Number", 6))) {
                    extra = EXTRA_N;
                    base = "\\p{N}";
                }
                if (extra) {
                    tok_buf m = {0};
                    put(&m, base);
                    put(&m, extra);
                    emit_set(o, in_class, neg, m.data, p + i, j - i);
                    tok_buf_free(&m);
                } else {
                    tok_buf_append(o, p + i, j - i);
                }
                i = j;
            } else if (d == 'Q') {
                size_t k = i + 2;
                while (k + 1 < n && !(p[k] == '\\' && p[k + 1] == 'E')) k++;
                k = k + 1 < n ? k + 2 : n;
                tok_buf_append(o, p + i, k - i);
                i = k;
            } else {
                tok_buf_append(o, p + i, 2);
                i += 2;
            }
            continue;
        }
        if (!in_class && c == '[') {
            in_class = 1;
            tok_buf_putc(o, c);
            i++;
            if (i < n && p[i] == '^') tok_buf_putc(o, p[i++]);
            if (i < n && p[i] == ']') tok_buf_putc(o, p[i++]);
            continue;
        }
        if (in_class && c == '[' && i + 1 < n && p[i + 1] == ':') {  // POSIX class
            size_t k = i + 2;
            while (k + 1 < n && !(p[k] == ':' && p[k + 1] == ']')) k++;
            k = k + 1 < n ? k + 2 : n;
            tok_buf_append(o, p + i, k - i);
            i = k;
            continue;
        }
        if (in_class && c == ']') {
            in_class = 0;
            tok_buf_putc(o, c);
            i++;
            continue;
        }
        if (!in_class && c == '(' && i + 2 < n && p[i + 1] == '?') {
            // Option groups: Ruby's (?m) is PCRE2's (?s).
            size_t k = i + 2;
            while (k < n && (p[k] == 'i' || p[k] == 'm' || p[k] == 'x' || p[k] == '-')) k++;
            if (k > i + 2 && k < n && (p[k] == ')' || p[k] == ':')) {
                tok_buf_append(o, "(?", 2);
                for (size_t q = i + 2; q < k; q++) tok_buf_putc(o, p[q] == 'm' ? 's' : p[q]);
                i = k;
                continue;
            }
        }
        tok_buf_putc(o, c);
        i++;
    }
}

tok_regex *tok_regex_new(const char *pattern, size_t len, int literal, atoll_error *e) {
    tok_buf src = {0};
    uint32_t opts = PCRE2_UTF;
    if (literal == TOK_RE_LITERAL) {
        opts |= PCRE2_LITERAL;  // (UCP is not allowed with it, and not needed)
        tok_buf_append(&src, pattern, len);
    } else if (literal == TOK_RE_PCRE2) {
        opts |= PCRE2_UCP;
        tok_buf_append(&src, pattern, len);
    } else {
        opts |= PCRE2_UCP | PCRE2_MULTILINE;
        rewrite(pattern, len, &src);
    }
    pcre2_compile_context *cc = pcre2_compile_context_create(NULL);
    pcre2_set_newline(cc, PCRE2_NEWLINE_LF);
    int err;
    PCRE2_SIZE eoff;
    pcre2_code *code = pcre2_compile((PCRE2_SPTR)(src.data ? src.data : ""), src.len, opts, &err, &eoff, cc);
    pcre2_compile_context_free(cc);
    tok_buf_free(&src);
    if (!code) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(err, msg, sizeof msg);
        return error_set(e, "regex '%.*s': %s", (int)(len > 200 ? 200 : len), pattern, (char *)msg), NULL;
    }
    tok_regex *re = calloc(1, sizeof *re);
    re->code = code;
    re->jit = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
    return re;
}

void tok_regex_free(tok_regex *re) {
    if (!re) return;
    pcre2_code_free(re->code);
    free(re);
}

tok_match_ctx *tok_match_ctx_new(void) {
    tok_match_ctx *c = calloc(1, sizeof *c);
    c->md = pcre2_match_data_create(1, NULL);
    return c;
}

void tok_match_ctx_free(tok_match_ctx *c) {
    if (!c) return;
    pcre2_match_data_free(c->md);
    free(c);
}

void tok_spans_push(tok_spans *s, size_t a, size_t b, int m) {
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 64;
        s->v = realloc(s->v, s->cap * sizeof *s->v);
        if (!s->v) abort();
    }
    s->v[s->n].start = a;
    s->v[s->n].end = b;
    s->v[s->n].is_match = m;
    s->n++;
}

void tok_spans_free(tok_spans *s) {
    free(s->v);
    memset(s, 0, sizeof *s);
}

// One search from offset `from`; 1 and the match range, 0 no match, -1 error.
static int search(const tok_regex *re, tok_match_ctx *ctx, const char *s, size_t n, size_t from,
                  size_t *ms, size_t *me, atoll_error *e) {
    int rc = pcre2_match(re->code, (PCRE2_SPTR)s, n, from, PCRE2_NO_UTF_CHECK, ctx->md, NULL);
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT)
        rc = pcre2_match(re->code, (PCRE2_SPTR)s, n, from, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, ctx->md, NULL);
    if (rc == PCRE2_ERROR_NOMATCH) return 0;
    if (rc < 0) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(rc, msg, sizeof msg);
        return error_set(e, "regex match failed: %s", (char *)msg);
    }
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(ctx->md);
    *ms = ov[0];
    *me = ov[1];
    return 1;
}

int tok_regex_find_matches(const tok_regex *re, tok_match_ctx *ctx, const char *s, size_t n,
                           tok_spans *out, atoll_error *e) {
    out->n = 0;
    if (n == 0) {
        tok_spans_push(out, 0, 0, 0);
        return 0;
    }
    size_t prev = 0, last_end = 0;
    int have_last = 0;
    size_t last_match_end = 0;
    while (last_end <= n) {
        size_t ms, me;
        int r = search(re, ctx, s, n, last_end, &ms, &me, e);
        if (r < 0) return -1;
        if (!r) break;
        if (me == ms && have_last && last_match_end == me) {
            // onig find_iter: no empty match right after the previous match.
            last_end += last_end < n ? tok_utf8_len((unsigned char)s[last_end]) : 1;
            continue;
        }
        last_end = me;
        last_match_end = me;
        have_last = 1;
        if (prev != ms) tok_spans_push(out, prev, ms, 0);
        tok_spans_push(out, ms, me, 1);
        prev = me;
    }
    if (prev != n) tok_spans_push(out, prev, n, 0);
    return 0;
}

// Rust regex \w (Unicode word: Alphabetic, M, Nd, Pc, Join_Control), used by
// single_word added tokens. Compiled once.
static pcre2_code *word_code;
static pthread_once_t word_once = PTHREAD_ONCE_INIT;

static void word_init(void) {
    int err;
    PCRE2_SIZE eoff;
    const char *p = "[" RUST_WORD_CLASS "]";
    word_code = pcre2_compile((PCRE2_SPTR)p, PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP, &err, &eoff, NULL);
}

int tok_is_word_char(uint32_t cp) {
    if (cp < 0x80)
        return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || cp == '_';
    pthread_once(&word_once, word_init);
    if (!word_code) return 0;
    tok_buf b = {0};
    tok_buf_put_cp(&b, cp);
    pcre2_match_data *m = pcre2_match_data_create(1, NULL);
    int rc = pcre2_match(word_code, (PCRE2_SPTR)b.data, b.len, 0, PCRE2_ANCHORED, m, NULL);
    pcre2_match_data_free(m);
    tok_buf_free(&b);
    return rc >= 0;
}
