// runtime/template/lexer.c — splits a template into tokens as jinja2's lexer
// does with trim_blocks and lstrip_blocks: text, {{ }}, {% %}, {# #} and
// {% raw %}, whitespace control (-, +), newline normalisation and the
// dropped final newline, then the tokens inside tags (names, numbers,
// strings with Python escapes, operators with bracket balancing).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/template/tpl.h"

typedef struct {
    const char *s;
    size_t n;
    token *t;
    size_t nt, cap;
    size_t *lines;  // byte offset of each line start
    size_t nlines;
    atoll_error *e;
} lexer;

static void linecol(lexer *L, size_t pos, int *line, int *col) {
    size_t lo = 0, hi = L->nlines;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (L->lines[mid] <= pos) lo = mid;
        else hi = mid;
    }
    *line = (int)lo + 1;
    *col = (int)u8_count(L->s + L->lines[lo], pos - L->lines[lo]) + 1;
}

static int fail(lexer *L, size_t pos, const char *fmt, const char *arg) {
    int line, col;
    linecol(L, pos, &line, &col);
    char msg[600];
    snprintf(msg, sizeof msg, fmt, arg);
    return error_set(L->e, "line %d:%d: %s", line, col, msg);
}

static token *emit(lexer *L, int type, size_t pos) {
    if (L->nt == L->cap) {
        L->cap = L->cap ? L->cap * 2 : 64;
        L->t = realloc(L->t, L->cap * sizeof(token));
        if (!L->t) abort();
    }
    token *t = &L->t[L->nt++];
    memset(t, 0, sizeof *t);
    t->type = type;
    linecol(L, pos, &t->line, &t->col);
    return t;
}

static char *dupn(const char *s, size_t n) {
    char *p = malloc(n + 1);
    if (!p) abort();
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

static void emit_data(lexer *L, size_t pos, const char *s, size_t n) {
    if (!n) return;
    token *t = emit(L, T_DATA, pos);
    t->s = dupn(s, n);
    t->len = n;
}

// length of the Unicode whitespace run at i
static size_t ws_run(const char *s, size_t n, size_t i) {
    size_t j = i;
    while (j < n) {
        size_t k = j;
        uint32_t c = u8_next(s, n, &k);
        if (!uc_isspace(c)) break;
        j = k;
    }
    return j - i;
}

static size_t rstrip_len(const char *s, size_t n) {
    // Python str.rstrip(): drop trailing Unicode whitespace
    size_t end = n;
    while (end > 0) {
        size_t st = end - 1;
        while (st > 0 && ((unsigned char)s[st] & 0xC0) == 0x80) st--;
        size_t k = st;
        uint32_t c = u8_next(s, n, &k);
        if (!uc_isspace(c)) break;
        end = st;
    }
    return end;
}

// The text before a tag, after the tag's whitespace control.
static size_t text_before_tag(const char *text, size_t len, char sign, bool is_var,
                              bool line_starting) {
    if (sign == '-') return rstrip_len(text, len);
    if (sign == '+' || is_var) return len;
    size_t l_pos = 0;
    for (size_t i = len; i > 0; i--)
        if (text[i - 1] == '\n') {
            l_pos = i;
            break;
        }
    if (l_pos == 0 && !line_starting) return len;
    for (size_t i = l_pos; i < len; i++)
        if (text[i] != ' ' && text[i] != '\t') return len;
    return l_pos;
}

static bool starts(const char *s, size_t n, size_t i, const char *w) {
    size_t k = strlen(w);
    return i + k <= n && memcmp(s + i, w, k) == 0;
}

// {% raw %} / {% endraw %} recognition: returns the end of the tag or 0.
// jinja2: raw begin ends with "-%}\s*" or "%}"; endraw with "+%}", "-%}\s*" or "%}\n?".
static size_t match_raw_tag(const char *s, size_t n, size_t i, bool is_end, char *sign) {
    if (!starts(s, n, i, "{%")) return 0;
    i += 2;
    *sign = 0;
    if (i < n && (s[i] == '-' || s[i] == '+')) *sign = s[i++];
    i += ws_run(s, n, i);
    const char *word = is_end ? "endraw" : "raw";
    if (!starts(s, n, i, word)) return 0;
    i += strlen(word);
    i += ws_run(s, n, i);
    if (is_end && starts(s, n, i, "+%}")) return i + 3;
    if (starts(s, n, i, "-%}")) return i + 3 + ws_run(s, n, i + 3);
    if (starts(s, n, i, "%}")) return i + 2 + (is_end && i + 2 < n && s[i + 2] == '\n');
    return 0;
}

static size_t digits_us(const char *s, size_t n, size_t i) {
    // (\d+_)*\d+ : returns the end, or i when no match
    size_t j = i;
    if (j >= n || s[j] < '0' || s[j] > '9') return i;
    for (;;) {
        while (j < n && s[j] >= '0' && s[j] <= '9') j++;
        if (j + 1 < n && s[j] == '_' && s[j + 1] >= '0' && s[j + 1] <= '9') {
            j++;
            continue;
        }
        return j;
    }
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// Python: value.encode("ascii", "backslashreplace").decode("unicode-escape")
static int decode_string(lexer *L, size_t pos, const char *s, size_t n, sbuf *out) {
    for (size_t i = 0; i < n;) {
        if (s[i] != '\\') {
            size_t st = i;
            u8_next(s, n, &i);
            sb_put(out, s + st, i - st);
            continue;
        }
        i++;
        if (i >= n) return fail(L, pos, "%s", "string literal ends with a lone backslash");
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x80) {  // backslashreplace turned the character into an escape
            size_t k = i;
            uint32_t cp = u8_next(s, n, &k);
            sb_putc(out, '\\');
            if (cp <= 0xFF) sb_printf(out, "x%02x", cp);
            else if (cp <= 0xFFFF) sb_printf(out, "u%04x", cp);
            else sb_printf(out, "U%08x", cp);
            i = k;
            continue;
        }
        i++;
        switch (c) {
        case '\n': break;
        case '\\': sb_putc(out, '\\'); break;
        case '\'': sb_putc(out, '\''); break;
        case '"': sb_putc(out, '"'); break;
        case 'a': sb_putc(out, 7); break;
        case 'b': sb_putc(out, 8); break;
        case 'f': sb_putc(out, 12); break;
        case 'n': sb_putc(out, '\n'); break;
        case 'r': sb_putc(out, '\r'); break;
        case 't': sb_putc(out, '\t'); break;
        case 'v': sb_putc(out, 11); break;
        case 'x':
        case 'u':
        case 'U': {
            int nd = c == 'x' ? 2 : c == 'u' ? 4 : 8;
            uint32_t v = 0;
            for (int j = 0; j < nd; j++) {
                int h = i + (size_t)j < n ? hexval(s[i + (size_t)j]) : -1;
                if (h < 0) return fail(L, pos, "%s", "truncated \\x, \\u or \\U escape in a string literal");
                v = v * 16 + (uint32_t)h;
            }
            i += (size_t)nd;
            if (v > 0x10FFFF) return fail(L, pos, "%s", "illegal Unicode character in a string literal");
            if (v >= 0xD800 && v <= 0xDFFF)
                return fail(L, pos, "%s", "unsupported: a surrogate escape in a string literal");
            sb_cp(out, v);
            break;
        }
        case 'N': return fail(L, pos, "%s", "unsupported: \\N{...} escape in a string literal");
        default:
            if (c >= '0' && c <= '7') {
                uint32_t v = c - '0';
                for (int j = 0; j < 2 && i < n && s[i] >= '0' && s[i] <= '7'; j++) v = v * 8 + (uint32_t)(s[i++] - '0');
                sb_cp(out, v);
            } else {
                sb_putc(out, '\\');
                sb_putc(out, (char)c);
            }
        }
    }
    return 0;
}

static int lex_tag(lexer *L, size_t p, bool is_var, size_t *end_out, bool *line_starting) {
    char stack[256];
    int depth = 0;
    size_t i = *end_out;
    const char *s = L->s;
    size_t n = L->n;
    for (;;) {
        if (depth == 0) {
            size_t end = 0;
            if (is_var) {
                if (starts(s, n, i, "-}}")) end = i + 3 + ws_run(s, n, i + 3);
                else if (starts(s, n, i, "}}")) end = i + 2;
            } else {
                if (starts(s, n, i, "+%}")) end = i + 3;
                else if (starts(s, n, i, "-%}")) end = i + 3 + ws_run(s, n, i + 3);
                else if (starts(s, n, i, "%}")) end = i + 2 + (i + 2 < n && s[i + 2] == '\n');
            }
            if (end) {
                emit(L, is_var ? T_VAR_END : T_BLOCK_END, i);
                *line_starting = s[end - 1] == '\n';
                *end_out = end;
                return 0;
            }
        }
        if (i >= n)
            return fail(L, p, "unterminated '%s' (the template ends inside the tag)", is_var ? "{{" : "{%");
        size_t w = ws_run(s, n, i);
        if (w) {
            i += w;
            continue;
        }
        unsigned char c = (unsigned char)s[i];
        if (c >= '0' && c <= '9') {
            size_t j = digits_us(s, n, i);
            bool isf = false;
            size_t fe = j;
            if (i == 0 || s[i - 1] != '.') {
                size_t k = j;
                if (k < n && s[k] == '.') {
                    size_t k2 = digits_us(s, n, k + 1);
                    if (k2 > k + 1) k = k2;
                }
                size_t ex = k;
                if (ex < n && (s[ex] == 'e' || s[ex] == 'E')) {
                    size_t e2 = ex + 1;
                    if (e2 < n && (s[e2] == '+' || s[e2] == '-')) e2++;
                    size_t e3 = digits_us(s, n, e2);
                    if (e3 > e2) {
                        isf = true;
                        fe = e3;
                    }
                }
                if (!isf && k > j) {
                    isf = true;
                    fe = k;
                }
            }
            char buf[128];
            size_t bn = 0;
            if (isf) {
                for (size_t k = i; k < fe && bn < sizeof buf - 1; k++)
                    if (s[k] != '_') buf[bn++] = s[k];
                buf[bn] = 0;
                token *t = emit(L, T_FLOAT, i);
                t->fval = strtod(buf, NULL);
                i = fe;
                continue;
            }
            // integer: 0b/0o/0x, [1-9](_?\d)*, 0(_?0)*
            int base = 10;
            size_t k = i;
            if (s[i] == '0' && i + 1 < n && strchr("bBoOxX", s[i + 1]) && s[i + 1]) {
                char bc = (char)(s[i + 1] | 0x20);
                base = bc == 'b' ? 2 : bc == 'o' ? 8 : 16;
                k = i + 2;
                size_t st = k;
                for (;;) {
                    size_t q = k;
                    if (q < n && s[q] == '_') q++;
                    int h = q < n ? hexval(s[q]) : -1;
                    if (h < 0 || h >= base) break;
                    k = q + 1;
                }
                if (k == st) {
                    base = 10;
                    k = i + 1;  // just "0"
                }
            } else if (s[i] == '0') {
                k = i + 1;
                for (;;) {
                    size_t q = k;
                    if (q < n && s[q] == '_') q++;
                    if (q < n && s[q] == '0') k = q + 1;
                    else break;
                }
            } else {
                k = i + 1;
                for (;;) {
                    size_t q = k;
                    if (q < n && s[q] == '_') q++;
                    if (q < n && s[q] >= '0' && s[q] <= '9') k = q + 1;
                    else break;
                }
            }
            unsigned long long v = 0;
            bool over = false;
            for (size_t q = base == 10 ? i : i + 2; q < k; q++) {
                if (s[q] == '_') continue;
                unsigned long long d = (unsigned long long)hexval(s[q]);
                if (v > (9223372036854775807ULL - d) / (unsigned long long)base) over = true;
                v = v * (unsigned long long)base + d;
            }
            if (over) return fail(L, i, "%s", "unsupported: integer literal larger than 64 bits");
            token *t = emit(L, T_INT, i);
            t->ival = (int64_t)v;
            i = k;
            continue;
        }
        if (c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
            size_t j = i + 1;
            while (j < n && (s[j] == '_' || (s[j] >= 'a' && s[j] <= 'z') ||
                             (s[j] >= 'A' && s[j] <= 'Z') || (s[j] >= '0' && s[j] <= '9')))
                j++;
            if (j < n && (unsigned char)s[j] >= 0x80)
                return fail(L, i, "%s", "unsupported: non-ASCII identifier");
            token *t = emit(L, T_NAME, i);
            t->s = dupn(s + i, j - i);
            t->len = j - i;
            i = j;
            continue;
        }
        if (c == '\'' || c == '"') {
            size_t j = i + 1;
            while (j < n && s[j] != (char)c) {
                if (s[j] == '\\') j++;
                j++;
            }
            if (j >= n) return fail(L, i, "%s", "unterminated string literal");
            sbuf b = {0};
            if (decode_string(L, i, s + i + 1, j - i - 1, &b)) {
                free(b.p);
                return -1;
            }
            token *t = emit(L, T_STRING, i);
            t->len = b.n;
            t->s = sb_take(&b);
            i = j + 1;
            continue;
        }
        static const struct {
            const char *s;
            int op;
        } ops[] = {{"//", OP_FLOORDIV}, {"**", OP_POW}, {"==", OP_EQ}, {"!=", OP_NE},
                   {">=", OP_GTEQ}, {"<=", OP_LTEQ}, {"+", OP_ADD}, {"-", OP_SUB},
                   {"/", OP_DIV}, {"*", OP_MUL}, {"%", OP_MOD}, {"~", OP_TILDE},
                   {"[", OP_LBRACKET}, {"]", OP_RBRACKET}, {"(", OP_LPAREN},
                   {")", OP_RPAREN}, {"{", OP_LBRACE}, {"}", OP_RBRACE}, {">", OP_GT},
                   {"<", OP_LT}, {"=", OP_ASSIGN}, {".", OP_DOT}, {":", OP_COLON},
                   {"|", OP_PIPE}, {",", OP_COMMA}, {";", OP_SEMICOLON}};
        int op = -1;
        size_t olen = 0;
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
            if (starts(s, n, i, ops[k].s)) {
                op = ops[k].op;
                olen = strlen(ops[k].s);
                break;
            }
        if (op < 0) {
            char ch[8] = {0};
            size_t k = i;
            u8_next(s, n, &k);
            memcpy(ch, s + i, k - i < 7 ? k - i : 7);
            return fail(L, i, "unexpected character '%s' inside a tag", ch);
        }
        if (op == OP_LBRACE || op == OP_LPAREN || op == OP_LBRACKET) {
            if (depth == (int)sizeof stack) return fail(L, i, "%s", "brackets nested too deeply");
            stack[depth++] = op == OP_LBRACE ? '}' : op == OP_LPAREN ? ')' : ']';
        } else if (op == OP_RBRACE || op == OP_RPAREN || op == OP_RBRACKET) {
            char ch[2] = {s[i], 0};
            if (depth == 0) return fail(L, i, "unexpected '%s'", ch);
            if (stack[depth - 1] != s[i]) {
                char m[64];
                snprintf(m, sizeof m, "unexpected '%c', expected '%c'", s[i], stack[depth - 1]);
                return fail(L, i, "%s", m);
            }
            depth--;
        }
        token *t = emit(L, T_OP, i);
        t->op = op;
        i += olen;
    }
}

int tpl_lex(const char *src, size_t n, token **toks, size_t *ntoks, atoll_error *e) {
    *toks = NULL;
    *ntoks = 0;
    if (!u8_valid(src, n)) return error_set(e, "the template is not valid UTF-8");
    // newlines: \r\n and \r become \n; a single trailing newline is dropped
    char *s = malloc(n + 1);
    if (!s) abort();
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (src[i] == '\r') {
            s[m++] = '\n';
            if (i + 1 < n && src[i + 1] == '\n') i++;
        } else {
            s[m++] = src[i];
        }
    }
    if (m > 0 && s[m - 1] == '\n') m--;
    s[m] = 0;
    lexer L = {.s = s, .n = m, .e = e};
    size_t capl = 16;
    L.lines = malloc(capl * sizeof(size_t));
    L.lines[L.nlines++] = 0;
    for (size_t i = 0; i < m; i++)
        if (s[i] == '\n') {
            if (L.nlines == capl) L.lines = realloc(L.lines, (capl *= 2) * sizeof(size_t));
            L.lines[L.nlines++] = i + 1;
        }
    int rc = 0;
    size_t pos = 0;
    bool line_starting = true;
    while (pos < m) {
        size_t p = pos;
        while (p + 1 < m && !(s[p] == '{' && (s[p + 1] == '{' || s[p + 1] == '%' || s[p + 1] == '#')))
            p++;
        if (p + 1 >= m) {
            emit_data(&L, pos, s + pos, m - pos);
            break;
        }
        char kind = s[p + 1];
        char sign = (p + 2 < m && (s[p + 2] == '-' || s[p + 2] == '+')) ? s[p + 2] : 0;
        char rsign = 0;
        size_t raw_end = kind == '%' ? match_raw_tag(s, m, p, false, &rsign) : 0;
        size_t tl = text_before_tag(s + pos, p - pos, sign, kind == '{', line_starting);
        emit_data(&L, pos, s + pos, tl);
        if (kind == '#') {
            size_t i = p + 2 + (sign ? 1 : 0), end = 0;
            for (; i < m; i++) {
                if (s[i] == '+' && starts(s, m, i + 1, "#}")) {
                    end = i + 3;
                    break;
                }
                if (s[i] == '-' && starts(s, m, i + 1, "#}")) {
                    end = i + 3 + ws_run(s, m, i + 3);
                    break;
                }
                if (starts(s, m, i, "#}")) {
                    end = i + 2 + (i + 2 < m && s[i + 2] == '\n');
                    break;
                }
            }
            if (!end) {
                rc = fail(&L, p, "%s", "missing end of comment tag '#}'");
                break;
            }
            line_starting = s[end - 1] == '\n';
            pos = end;
            continue;
        }
        if (raw_end) {
            size_t q = raw_end, tag_end = 0;
            char esign = 0;
            for (; q < m; q++)
                if (s[q] == '{' && (tag_end = match_raw_tag(s, m, q, true, &esign))) break;
            if (!tag_end) {
                rc = fail(&L, p, "%s", "missing {% endraw %} for {% raw %}");
                break;
            }
            bool ls = s[raw_end - 1] == '\n';
            size_t dl = text_before_tag(s + raw_end, q - raw_end, esign, false, ls);
            emit_data(&L, raw_end, s + raw_end, dl);
            line_starting = s[tag_end - 1] == '\n';
            pos = tag_end;
            continue;
        }
        emit(&L, kind == '{' ? T_VAR_BEGIN : T_BLOCK_BEGIN, p);
        size_t i = p + 2 + (sign ? 1 : 0);
        if (lex_tag(&L, p, kind == '{', &i, &line_starting)) {
            rc = -1;
            break;
        }
        pos = i;
    }
    if (rc == 0) emit(&L, T_EOF, m);
    free(L.lines);
    free(s);
    if (rc) {
        tpl_free_tokens(L.t, L.nt);
        return -1;
    }
    *toks = L.t;
    *ntoks = L.nt;
    return 0;
}

void tpl_free_tokens(token *t, size_t n) {
    for (size_t i = 0; i < n; i++) free(t[i].s);
    free(t);
}
