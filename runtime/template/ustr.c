// runtime/template/ustr.c — byte buffers, UTF-8 decoding and the Unicode
// properties Python's str methods use (whitespace, printable, cased, case
// mappings), looked up in the generated unicode_tables.c.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/template/tpl.h"

extern const uint32_t uct_unprintable[][2], uct_lower[][2], uct_upper[][2], uct_cased[][2],
    uct_case_ignorable[][2];
extern const size_t uct_unprintable_n, uct_lower_n, uct_upper_n, uct_cased_n,
    uct_case_ignorable_n;
extern const uint32_t uct_tolower[][4], uct_toupper[][4], uct_totitle[][4];
extern const size_t uct_tolower_n, uct_toupper_n, uct_totitle_n;

static void sb_grow(sbuf *b, size_t extra) {
    if (b->n + extra + 1 <= b->cap) return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->n + extra + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) abort();
    b->p = p;
    b->cap = cap;
}

void sb_put(sbuf *b, const char *s, size_t n) {
    sb_grow(b, n);
    if (n) memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

void sb_puts(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

void sb_putc(sbuf *b, char c) { sb_put(b, &c, 1); }

void sb_printf(sbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    sb_grow(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)n;
}

void sb_cp(sbuf *b, uint32_t c) {
    char o[4];
    size_t n;
    if (c < 0x80) {
        o[0] = (char)c;
        n = 1;
    } else if (c < 0x800) {
        o[0] = (char)(0xC0 | (c >> 6));
        o[1] = (char)(0x80 | (c & 0x3F));
        n = 2;
    } else if (c < 0x10000) {
        o[0] = (char)(0xE0 | (c >> 12));
        o[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        o[2] = (char)(0x80 | (c & 0x3F));
        n = 3;
    } else {
        o[0] = (char)(0xF0 | (c >> 18));
        o[1] = (char)(0x80 | ((c >> 12) & 0x3F));
        o[2] = (char)(0x80 | ((c >> 6) & 0x3F));
        o[3] = (char)(0x80 | (c & 0x3F));
        n = 4;
    }
    sb_put(b, o, n);
}

char *sb_take(sbuf *b) {
    if (!b->p) sb_grow(b, 0), b->p[0] = 0;
    char *p = b->p;
    b->p = NULL;
    b->n = b->cap = 0;
    return p;
}

uint32_t u8_next(const char *s, size_t n, size_t *i) {
    const unsigned char *u = (const unsigned char *)s;
    size_t k = *i;
    uint32_t c = u[k];
    if (c < 0x80 || k + 1 >= n + 1) {
        *i = k + 1;
        return c;
    }
    int len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    if (k + (size_t)len > n) {  // cannot happen on validated text
        *i = k + 1;
        return c;
    }
    c &= len == 4 ? 0x07 : len == 3 ? 0x0F : 0x1F;
    for (int j = 1; j < len; j++) c = (c << 6) | (u[k + j] & 0x3F);
    *i = k + (size_t)len;
    return c;
}

size_t u8_count(const char *s, size_t n) {
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80) c++;
    return c;
}

size_t u8_offset(const char *s, size_t n, size_t cps) {
    size_t i = 0;
    while (cps > 0 && i < n) {
        i++;
        while (i < n && ((unsigned char)s[i] & 0xC0) == 0x80) i++;
        cps--;
    }
    return i;
}

bool u8_valid(const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        unsigned c = u[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        int len;
        uint32_t cp, min;
        if ((c & 0xE0) == 0xC0) len = 2, cp = c & 0x1F, min = 0x80;
        else if ((c & 0xF0) == 0xE0) len = 3, cp = c & 0x0F, min = 0x800;
        else if ((c & 0xF8) == 0xF0) len = 4, cp = c & 0x07, min = 0x10000;
        else return false;
        if (i + (size_t)len > n) return false;
        for (int j = 1; j < len; j++) {
            if ((u[i + j] & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (u[i + j] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
        i += (size_t)len;
    }
    return true;
}

static bool in_ranges(const uint32_t (*r)[2], size_t n, uint32_t c) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c < r[mid][0]) hi = mid;
        else if (c > r[mid][1]) lo = mid + 1;
        else return true;
    }
    return false;
}

bool uc_isspace(uint32_t c) {
    if (c < 0x80) return (c >= 9 && c <= 13) || (c >= 0x1C && c <= 0x20);
    return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
           c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

bool uc_isprintable(uint32_t c) {
    if (c < 0x7F) return c >= 0x20;
    return !in_ranges(uct_unprintable, uct_unprintable_n, c);
}

bool uc_islower(uint32_t c) {
    if (c < 0x80) return c >= 'a' && c <= 'z';
    return in_ranges(uct_lower, uct_lower_n, c);
}

bool uc_isupper(uint32_t c) {
    if (c < 0x80) return c >= 'A' && c <= 'Z';
    return in_ranges(uct_upper, uct_upper_n, c);
}

bool uc_iscased(uint32_t c) {
    if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    return in_ranges(uct_cased, uct_cased_n, c);
}

static bool uc_case_ignorable(uint32_t c) {
    return in_ranges(uct_case_ignorable, uct_case_ignorable_n, c);
}

int uc_map(int which, uint32_t c, uint32_t out[3]) {
    if (c < 0x80) {
        if (which == UC_LOWER && c >= 'A' && c <= 'Z') c += 32;
        else if (which != UC_LOWER && c >= 'a' && c <= 'z') c -= 32;
        out[0] = c;
        return 1;
    }
    const uint32_t(*t)[4] = which == UC_LOWER ? uct_tolower : which == UC_UPPER ? uct_toupper
                                                                                : uct_totitle;
    size_t n = which == UC_LOWER ? uct_tolower_n : which == UC_UPPER ? uct_toupper_n
                                                                     : uct_totitle_n;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c < t[mid][0]) hi = mid;
        else if (c > t[mid][0]) lo = mid + 1;
        else {
            int k = 0;
            for (int j = 1; j <= 3 && t[mid][j]; j++) out[k++] = t[mid][j];
            return k;
        }
    }
    out[0] = c;
    return 1;
}

// Python's lower() of U+03A3 at code point index i: final sigma when preceded
// by a cased letter and not followed by one (skipping case-ignorables).
static uint32_t sigma_lower(const uint32_t *cps, size_t n, size_t i) {
    size_t j = i;
    bool before = false, after = false;
    while (j > 0) {
        uint32_t c = cps[--j];
        if (uc_case_ignorable(c)) continue;
        before = uc_iscased(c);
        break;
    }
    for (j = i + 1; j < n; j++) {
        uint32_t c = cps[j];
        if (uc_case_ignorable(c)) continue;
        after = uc_iscased(c);
        break;
    }
    return before && !after ? 0x3C2 : 0x3C3;
}

// which: UC_LOWER / UC_UPPER (str.lower/upper), 3 = str.title, 4 = str.capitalize,
// 5 = str.swapcase.
value str_case(const char *s, size_t n, int which, atoll_error *e, bool *ok) {
    *ok = true;
    size_t ncp = u8_count(s, n);
    uint32_t *cps = malloc((ncp + 1) * sizeof *cps);
    size_t k = 0;
    for (size_t i = 0; i < n;) cps[k++] = u8_next(s, n, &i);
    sbuf b = {0};
    bool prev_cased = false;
    for (size_t i = 0; i < k; i++) {
        uint32_t c = cps[i], o[3];
        int m;
        int mode;
        if (which == UC_LOWER || which == UC_UPPER) mode = which;
        else if (which == 3) mode = prev_cased ? UC_LOWER : UC_TITLE;
        else if (which == 4) mode = i == 0 ? UC_TITLE : UC_LOWER;
        else mode = uc_isupper(c) ? UC_LOWER : uc_islower(c) ? UC_UPPER : -1;
        if (mode == -1) {
            o[0] = c;
            m = 1;
        } else if (mode == UC_LOWER && c == 0x3A3) {
            o[0] = sigma_lower(cps, k, i);
            m = 1;
        } else {
            m = uc_map(mode, c, o);
        }
        for (int j = 0; j < m; j++) sb_cp(&b, o[j]);
        prev_cased = uc_iscased(c);
    }
    free(cps);
    (void)e;
    return v_str_take(&b);
}
