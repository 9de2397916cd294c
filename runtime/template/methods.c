// runtime/template/methods.c — attributes and methods of builtin values as
// the immutable sandbox exposes them: str methods (strip, split, replace,
// startswith, find, join, case...), dict get/keys/values/items, list
// index/count, loop.cycle/changed. Mutating methods (append, pop, update...)
// are "unsafe" as in jinja2's ImmutableSandboxedEnvironment; Python methods
// outside the subset are errors when called.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/template/tpl.h"

static const char *const str_impl[] = {
    "strip", "lstrip", "rstrip", "split", "rsplit", "splitlines", "startswith", "endswith",
    "upper", "lower", "title", "capitalize", "swapcase", "replace", "find", "rfind", "index",
    "rindex", "count", "join", "isspace", "isupper", "islower", "isascii", "isdigit", "isalpha",
    "isalnum", "isdecimal", "isnumeric", "removeprefix", "removesuffix", "format", NULL};
static const char *const str_other[] = {
    "casefold", "center", "encode", "expandtabs", "format_map", "isidentifier",
    "isprintable", "istitle", "ljust", "maketrans", "partition", "rjust", "rpartition",
    "translate", "zfill", NULL};
static const char *const list_impl[] = {"index", "count", "copy", NULL};
static const char *const list_unsafe[] = {"append", "extend", "insert", "pop", "remove",
                                          "reverse", "sort", "clear", NULL};
static const char *const dict_impl[] = {"get", "keys", "values", "items", "copy", NULL};
static const char *const dict_unsafe[] = {"pop", "popitem", "setdefault", "update", "clear", NULL};
static const char *const num_attrs[] = {"real", "imag", "numerator", "denominator", "conjugate",
                                        "bit_length", "bit_count", "as_integer_ratio", "to_bytes",
                                        "from_bytes", "is_integer", "hex", "fromhex", NULL};

static const char *in_list(const char *const *l, const char *name) {
    for (int i = 0; l[i]; i++)
        if (!strcmp(l[i], name)) return l[i];
    return NULL;
}

static value method(value self, const char *name, int id) {
    hmethod *m = malloc(sizeof *m);
    m->rc = 1;
    m->self = v_incref(self);
    m->name = name;
    m->id = id;
    value v = {.k = V_METHOD};
    v.me = m;
    return v;
}

enum { M_IMPL, M_UNSUP };

int builtin_attr(rstate *rs, const node *at, value obj, const char *name, value *out,
                 bool *unsafe) {
    const char *m;
    *unsafe = false;
    switch (obj.k) {
    case V_STR:
        if ((m = in_list(str_impl, name))) {
            *out = method(obj, m, M_IMPL);
            return 1;
        }
        if ((m = in_list(str_other, name))) {
            *out = method(obj, m, M_UNSUP);
            return 1;
        }
        return 0;
    case V_LIST:
        if (obj.l->kind == L_LIST || obj.l->kind == L_TUPLE) {
            if ((m = in_list(list_impl, name)) && !(obj.l->kind == L_TUPLE && !strcmp(name, "copy"))) {
                *out = method(obj, m, M_IMPL);
                return 1;
            }
            if (obj.l->kind == L_LIST && in_list(list_unsafe, name)) *unsafe = true;
            return 0;
        }
        if (obj.l->kind == L_GEN && (!strcmp(name, "send") || !strcmp(name, "throw") || !strcmp(name, "close")))
            return tpl_fail(rs, at, "unsupported: generator.%s", name);
        if ((obj.l->kind == L_KEYS || obj.l->kind == L_ITEMS || obj.l->kind == L_VALUES) && !strcmp(name, "mapping"))
            return tpl_fail(rs, at, "unsupported: dict view .mapping");
        if (obj.l->kind == L_KEYS && !strcmp(name, "isdisjoint"))
            return tpl_fail(rs, at, "unsupported: dict_keys.isdisjoint");
        if (obj.l->kind == L_RANGE && (in_list(list_impl, name) || !strcmp(name, "start") ||
                                       !strcmp(name, "stop") || !strcmp(name, "step")))
            return tpl_fail(rs, at, "unsupported: range.%s", name);
        return 0;
    case V_DICT:
        if ((m = in_list(dict_impl, name))) {
            *out = method(obj, m, M_IMPL);
            return 1;
        }
        if (in_list(dict_unsafe, name)) *unsafe = true;
        else if (!strcmp(name, "fromkeys")) return tpl_fail(rs, at, "unsupported: dict.fromkeys");
        return 0;
    case V_INT:
    case V_BOOL:
    case V_FLOAT:
        if (in_list(num_attrs, name))
            return tpl_fail(rs, at, "unsupported: attribute '%s' of %s", name, v_typename(obj));
        return 0;
    case V_LOOP: {
        int found;
        if (!strcmp(name, "cycle") || !strcmp(name, "changed")) {
            *out = method(obj, !strcmp(name, "cycle") ? "cycle" : "changed", M_IMPL);
            return 1;
        }
        if (loop_attr(rs, at, obj.lp, name, out, &found)) return -1;
        return found;
    }
    case V_MACRO:
    case V_FUNC:
    case V_METHOD:
        if (name[0] != '_') return tpl_fail(rs, at, "unsupported: attribute '%s' of a %s", name, v_typename(obj));
        return 0;
    default: return 0;
    }
}

// ---------------------------------------------------------------- string helpers

static bool in_chars(value chars, uint32_t c) {
    const char *s = chars.s->b;
    size_t n = chars.s->len;
    for (size_t i = 0; i < n;)
        if (u8_next(s, n, &i) == c) return true;
    return false;
}

// which: 1 left, 2 right, 3 both
int str_strip(const char *s, size_t n, value chars, int which, size_t *start, size_t *end,
              atoll_error *e) {
    bool ws = chars.k == V_NONE || chars.k == V_MISSING || chars.k == V_UNDEF;
    if (!ws && chars.k != V_STR)
        return error_set(e, "strip arg must be None or str, not %s", v_typename(chars));
    size_t a = 0, b = n;
    if (which & 1)
        while (a < b) {
            size_t k = a;
            uint32_t c = u8_next(s, n, &k);
            if (ws ? !uc_isspace(c) : !in_chars(chars, c)) break;
            a = k;
        }
    if (which & 2)
        while (b > a) {
            size_t st = b - 1;
            while (st > a && ((unsigned char)s[st] & 0xC0) == 0x80) st--;
            size_t k = st;
            uint32_t c = u8_next(s, n, &k);
            if (ws ? !uc_isspace(c) : !in_chars(chars, c)) break;
            b = st;
        }
    *start = a;
    *end = b;
    return 0;
}

value str_replace(const char *s, size_t n, const char *old, size_t on, const char *nw, size_t nn,
                  int64_t count) {
    sbuf b = {0};
    if (on == 0) {  // inserts between code points
        int64_t done = 0;
        size_t i = 0;
        if (count != 0) {
            sb_put(&b, nw, nn);
            done++;
        }
        while (i < n) {
            size_t st = i;
            u8_next(s, n, &i);
            sb_put(&b, s + st, i - st);
            if (i < n && (count < 0 || done < count)) {
                sb_put(&b, nw, nn);
                done++;
            }
        }
        if (n > 0 && (count < 0 || done < count)) sb_put(&b, nw, nn);
        return v_str_take(&b);
    }
    size_t i = 0;
    int64_t done = 0;
    while (i < n) {
        const char *p = (count < 0 || done < count) ? memmem(s + i, n - i, old, on) : NULL;
        if (!p) break;
        sb_put(&b, s + i, (size_t)(p - (s + i)));
        sb_put(&b, nw, nn);
        i = (size_t)(p - s) + on;
        done++;
    }
    sb_put(&b, s + i, n - i);
    return v_str_take(&b);
}

static bool line_break(uint32_t c) {
    return c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D ||
           c == 0x1E || c == 0x85 || c == 0x2028 || c == 0x2029;
}

void str_splitlines(const char *s, size_t n, bool keepends, hlist *out) {
    size_t start = 0, i = 0;
    while (i < n) {
        size_t st = i;
        uint32_t c = u8_next(s, n, &i);
        if (!line_break(c)) continue;
        size_t eol = i;
        if (c == '\r' && i < n && s[i] == '\n') eol = ++i;
        list_push(out, v_str(s + start, (keepends ? eol : st) - start));
        start = i;
    }
    if (start < n) list_push(out, v_str(s + start, n - start));
}

static void split_ws(const char *s, size_t n, int64_t maxsplit, hlist *out) {
    size_t i = 0;
    int64_t done = 0;
    for (;;) {
        while (i < n) {  // skip whitespace
            size_t k = i;
            if (!uc_isspace(u8_next(s, n, &k))) break;
            i = k;
        }
        if (i >= n) return;
        if (maxsplit >= 0 && done >= maxsplit) {
            list_push(out, v_str(s + i, n - i));
            return;
        }
        size_t st = i;
        while (i < n) {
            size_t k = i;
            if (uc_isspace(u8_next(s, n, &k))) break;
            i = k;
        }
        list_push(out, v_str(s + st, i - st));
        done++;
    }
}

static void rsplit_ws(const char *s, size_t n, int64_t maxsplit, hlist *out) {
    // collect from the right, then reverse
    hlist *tmp = list_new(L_LIST, 0);
    size_t i = n;
    int64_t done = 0;
    for (;;) {
        while (i > 0) {
            size_t st = i - 1;
            while (st > 0 && ((unsigned char)s[st] & 0xC0) == 0x80) st--;
            size_t k = st;
            if (!uc_isspace(u8_next(s, n, &k))) break;
            i = st;
        }
        if (i == 0) break;
        if (maxsplit >= 0 && done >= maxsplit) {
            list_push(tmp, v_str(s, i));
            break;
        }
        size_t end = i;
        while (i > 0) {
            size_t st = i - 1;
            while (st > 0 && ((unsigned char)s[st] & 0xC0) == 0x80) st--;
            size_t k = st;
            if (uc_isspace(u8_next(s, n, &k))) break;
            i = st;
        }
        list_push(tmp, v_str(s + i, end - i));
        done++;
    }
    for (size_t k = tmp->n; k > 0; k--) list_push(out, v_incref(tmp->v[k - 1]));
    v_decref(v_list(tmp));
}

static const char *rmemmem(const char *h, size_t hn, const char *nd, size_t nn) {
    if (nn > hn) return NULL;
    for (size_t i = hn - nn + 1; i > 0; i--)
        if (memcmp(h + i - 1, nd, nn) == 0) return h + i - 1;
    return NULL;
}

// Python start/end (code points, negative from the end) -> byte range
static int cp_range(rstate *rs, const node *at, hstr *s, value *a, int na, size_t *bs,
                    size_t *be, int64_t *cs) {
    int64_t len = (int64_t)str_ncp(s), st = 0, en = len;
    for (int i = 0; i < na && i < 2; i++) {
        if (a[i].k == V_NONE) continue;
        if (a[i].k != V_INT && a[i].k != V_BOOL)
            return tpl_fail(rs, at, "slice indices must be integers or None");
        int64_t v = a[i].i;
        if (v < 0 && (v += len) < 0) v = 0;
        if (v > len) v = len;
        if (i == 0) st = v;
        else en = v;
    }
    *cs = st;
    if (en < st) {
        *bs = *be = (size_t)-1;  // empty range
        return 0;
    }
    *bs = u8_offset(s->b, s->len, (size_t)st);
    *be = u8_offset(s->b, s->len, (size_t)en);
    return 0;
}

static int need_str(rstate *rs, const node *at, value v, const char *what) {
    if (v.k == V_STR) return 0;
    return tpl_fail(rs, at, "%s: must be str, not %s", what, v_typename(v));
}

static int is_check(rstate *rs, const node *at, hstr *s, const char *name, value *out) {
    bool all = s->len > 0, any_cased = false;
    for (size_t i = 0; i < s->len;) {
        uint32_t c = u8_next(s->b, s->len, &i);
        if (!strcmp(name, "isspace")) all = all && uc_isspace(c);
        else if (!strcmp(name, "isascii")) all = all && c < 0x80;
        else if (!strcmp(name, "isupper") || !strcmp(name, "islower")) {
            bool up = name[2] == 'u';
            if (up ? uc_islower(c) : uc_isupper(c)) all = false;
            if (up ? uc_isupper(c) : uc_islower(c)) any_cased = true;
        } else {
            if (c >= 0x80)
                return tpl_fail(rs, at, "unsupported: str.%s on non-ASCII text", name);
            bool d = c >= '0' && c <= '9', a = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
            if (!strcmp(name, "isalpha")) all = all && a;
            else if (!strcmp(name, "isalnum")) all = all && (a || d);
            else all = all && d;
        }
    }
    if (!strcmp(name, "isascii")) all = true && all;
    if (!strcmp(name, "isascii") && s->len == 0) all = true;
    if (!strcmp(name, "isupper") || !strcmp(name, "islower")) all = all && any_cased;
    *out = v_bool(all);
    return 0;
}

// str.format with plain fields: {}, {0}, {name}, {!r}/{!s}; format specs and
// attribute/index access in fields are unsupported
static int str_format(rstate *rs, const node *at, hstr *s, value *a, int na, char **kwn, value *kwv,
                      int nkw, value *out) {
    sbuf o = {0};
    const char *b = s->b;
    size_t n = s->len;
    int autoidx = 0, mode = 0;  // 1 automatic, 2 manual numbering
    for (size_t i = 0; i < n; i++) {
        if (b[i] == '}') {
            if (i + 1 < n && b[i + 1] == '}') {
                sb_putc(&o, '}');
                i++;
                continue;
            }
            free(o.p);
            return tpl_fail(rs, at, "Single '}' encountered in format string");
        }
        if (b[i] != '{') {
            sb_putc(&o, b[i]);
            continue;
        }
        if (i + 1 < n && b[i + 1] == '{') {
            sb_putc(&o, '{');
            i++;
            continue;
        }
        size_t j = i + 1;
        while (j < n && b[j] != '}' && b[j] != '!' && b[j] != ':' && b[j] != '{') j++;
        size_t fe = j;
        char conv = 's';
        if (j < n && b[j] == '!') {
            if (j + 2 < n && (b[j + 1] == 'r' || b[j + 1] == 's') && b[j + 2] == '}') conv = b[j + 1], j += 2;
            else j = n;
        }
        if (j >= n || b[j] != '}') {
            free(o.p);
            return tpl_fail(rs, at, "unsupported: str.format field with a format spec, nesting or bad syntax");
        }
        value v = v_undef0();
        bool found = false;
        if (fe == i + 1) {
            if (mode == 2) goto numbering;
            mode = 1;
            if (autoidx < na) v = a[autoidx], found = true;
            autoidx++;
        } else {
            bool digits = true, ident = true;
            for (size_t k = i + 1; k < fe; k++) {
                char c = b[k];
                if (c < '0' || c > '9') digits = false;
                if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) ident = false;
            }
            if (digits) {
                if (mode == 1) goto numbering;
                mode = 2;
                long idx = strtol(b + i + 1, NULL, 10);
                if (idx < na) v = a[idx], found = true;
            } else if (ident) {
                for (int k = 0; k < nkw; k++)
                    if (strlen(kwn[k]) == fe - i - 1 && !memcmp(kwn[k], b + i + 1, fe - i - 1)) v = kwv[k], found = true;
            } else {
                free(o.p);
                return tpl_fail(rs, at, "unsupported: str.format field with attribute or index access");
            }
        }
        if (!found) {
            free(o.p);
            return tpl_fail(rs, at, "str.format: replacement field %.*s has no argument", (int)(fe - i - 1), b + i + 1);
        }
        if (conv == 'r' ? v_repr_into(v, &o, rs->e) : to_pystr(rs, at, v, &o)) {
            free(o.p);
            return conv == 'r' ? error_prefix(rs->e, "line %d:%d", at->line, at->col) : -1;
        }
        i = j;
    }
    *out = v_str_take(&o);
    return 0;
numbering:
    free(o.p);
    return tpl_fail(rs, at, "cannot switch between automatic field numbering and manual field specification");
}

static int str_method(rstate *rs, const node *at, hstr *s, const char *name, value *a, int na,
                      char **kwn, value *kwv, int nkw, value *out) {
    value self = {.k = V_STR};
    self.s = s;
    if (s->markup) return tpl_fail(rs, at, "unsupported: str.%s on a safe/escaped (Markup) string", name);
    if (!strcmp(name, "format")) return str_format(rs, at, s, a, na, kwn, kwv, nkw, out);
    // keyword arguments Python accepts: split/rsplit(sep, maxsplit), splitlines(keepends)
    value args[4] = {v_missing(), v_missing(), v_missing(), v_missing()};
    if (na > 4) return tpl_fail(rs, at, "str.%s: too many arguments", name);
    for (int i = 0; i < na; i++) args[i] = a[i];
    for (int k = 0; k < nkw; k++) {
        int slot = -1;
        if ((!strcmp(name, "split") || !strcmp(name, "rsplit")) && !strcmp(kwn[k], "sep")) slot = 0;
        else if ((!strcmp(name, "split") || !strcmp(name, "rsplit")) && !strcmp(kwn[k], "maxsplit")) slot = 1;
        else if (!strcmp(name, "splitlines") && !strcmp(kwn[k], "keepends")) slot = 0;
        if (slot < 0) return tpl_fail(rs, at, "str.%s() takes no keyword argument '%s'", name, kwn[k]);
        if (args[slot].k != V_MISSING) return tpl_fail(rs, at, "str.%s() got multiple values for '%s'", name, kwn[k]);
        args[slot] = kwv[k];
        if (slot + 1 > na) na = slot + 1;
    }
#define NARGS(lo, hi)                                                                            \
    do {                                                                                         \
        if (na < (lo) || na > (hi))                                                              \
            return tpl_fail(rs, at, "str.%s() takes %d to %d arguments (%d given)", name, lo, hi, na); \
    } while (0)
    const char *b = s->b;
    size_t n = s->len;
    if (!strcmp(name, "strip") || !strcmp(name, "lstrip") || !strcmp(name, "rstrip")) {
        NARGS(0, 1);
        size_t st, en;
        int which = name[0] == 'l' ? 1 : name[0] == 'r' ? 2 : 3;
        if (str_strip(b, n, args[0], which, &st, &en, rs->e)) return error_prefix(rs->e, "line %d:%d", at->line, at->col);
        *out = v_str(b + st, en - st);
        return 0;
    }
    if (!strcmp(name, "split") || !strcmp(name, "rsplit")) {
        NARGS(0, 2);
        int64_t maxsplit = -1;
        if (args[1].k != V_MISSING) {
            if (args[1].k != V_INT && args[1].k != V_BOOL)
                return tpl_fail(rs, at, "'%s' object cannot be interpreted as an integer", v_typename(args[1]));
            maxsplit = args[1].i;
        }
        hlist *l = list_new(L_LIST, 0);
        bool rev = name[0] == 'r';
        if (args[0].k == V_MISSING || args[0].k == V_NONE) {
            if (rev) rsplit_ws(b, n, maxsplit, l);
            else split_ws(b, n, maxsplit, l);
        } else {
            if (args[0].k != V_STR) {
                v_decref(v_list(l));
                return tpl_fail(rs, at, "must be str or None, not %s", v_typename(args[0]));
            }
            const char *sep = args[0].s->b;
            size_t sn = args[0].s->len;
            if (!sn) {
                v_decref(v_list(l));
                return tpl_fail(rs, at, "empty separator");
            }
            if (!rev) {
                size_t i = 0;
                int64_t done = 0;
                for (;;) {
                    const char *p = (maxsplit < 0 || done < maxsplit) ? memmem(b + i, n - i, sep, sn) : NULL;
                    if (!p) break;
                    list_push(l, v_str(b + i, (size_t)(p - b) - i));
                    i = (size_t)(p - b) + sn;
                    done++;
                }
                list_push(l, v_str(b + i, n - i));
            } else {
                hlist *tmp = list_new(L_LIST, 0);
                size_t end = n;
                int64_t done = 0;
                for (;;) {
                    const char *p = (maxsplit < 0 || done < maxsplit) ? rmemmem(b, end, sep, sn) : NULL;
                    if (!p) break;
                    list_push(tmp, v_str(p + sn, end - (size_t)(p - b) - sn));
                    end = (size_t)(p - b);
                    done++;
                }
                list_push(tmp, v_str(b, end));
                for (size_t k = tmp->n; k > 0; k--) list_push(l, v_incref(tmp->v[k - 1]));
                v_decref(v_list(tmp));
            }
        }
        *out = v_list(l);
        return 0;
    }
    if (!strcmp(name, "splitlines")) {
        NARGS(0, 1);
        hlist *l = list_new(L_LIST, 0);
        str_splitlines(b, n, args[0].k != V_MISSING && v_truthy(args[0]), l);
        *out = v_list(l);
        return 0;
    }
    if (!strcmp(name, "startswith") || !strcmp(name, "endswith")) {
        NARGS(1, 3);
        size_t bs, be;
        int64_t cs;
        if (cp_range(rs, at, s, args + 1, na - 1, &bs, &be, &cs)) return -1;
        hlist *cands = NULL;
        if (args[0].k == V_LIST && args[0].l->kind == L_TUPLE) cands = args[0].l;
        else if (args[0].k != V_STR)
            return tpl_fail(rs, at, "%s first arg must be str or a tuple of str, not %s", name, v_typename(args[0]));
        bool res = false;
        size_t nc = cands ? cands->n : 1;
        for (size_t i = 0; i < nc && !res; i++) {
            value p = cands ? cands->v[i] : args[0];
            if (p.k != V_STR)
                return tpl_fail(rs, at, "tuple for %s must only contain str, not %s", name, v_typename(p));
            if (bs == (size_t)-1) continue;
            size_t len = be - bs;
            if (p.s->len > len) continue;
            res = name[0] == 's' ? memcmp(b + bs, p.s->b, p.s->len) == 0
                                 : memcmp(b + be - p.s->len, p.s->b, p.s->len) == 0;
        }
        *out = v_bool(res);
        return 0;
    }
    if (!strcmp(name, "upper") || !strcmp(name, "lower") || !strcmp(name, "title") ||
        !strcmp(name, "capitalize") || !strcmp(name, "swapcase")) {
        NARGS(0, 0);
        int which = name[0] == 'u' ? UC_UPPER : name[0] == 'l' ? UC_LOWER : name[0] == 't' ? 3 : name[0] == 'c' ? 4 : 5;
        bool ok;
        *out = str_case(b, n, which, rs->e, &ok);
        return 0;
    }
    if (!strcmp(name, "replace")) {
        NARGS(2, 3);
        if (need_str(rs, at, args[0], "replace() argument 1") || need_str(rs, at, args[1], "replace() argument 2")) return -1;
        int64_t cnt = -1;
        if (na == 3) {
            if (args[2].k != V_INT && args[2].k != V_BOOL)
                return tpl_fail(rs, at, "'%s' object cannot be interpreted as an integer", v_typename(args[2]));
            cnt = args[2].i;
        }
        *out = str_replace(b, n, args[0].s->b, args[0].s->len, args[1].s->b, args[1].s->len, cnt);
        return 0;
    }
    if (!strcmp(name, "find") || !strcmp(name, "rfind") || !strcmp(name, "index") ||
        !strcmp(name, "rindex") || !strcmp(name, "count")) {
        NARGS(1, 3);
        if (need_str(rs, at, args[0], name)) return -1;
        size_t bs, be;
        int64_t cs;
        if (cp_range(rs, at, s, args + 1, na - 1, &bs, &be, &cs)) return -1;
        const char *nd = args[0].s->b;
        size_t nl = args[0].s->len;
        if (!strcmp(name, "count")) {
            int64_t c = 0;
            if (bs != (size_t)-1) {
                if (nl == 0) c = (int64_t)u8_count(b + bs, be - bs) + 1;
                else
                    for (size_t i = bs; i + nl <= be;) {
                        const char *p = memmem(b + i, be - i, nd, nl);
                        if (!p) break;
                        c++;
                        i = (size_t)(p - b) + nl;
                    }
            }
            *out = v_int(c);
            return 0;
        }
        int64_t r = -1;
        if (bs != (size_t)-1 && nl <= be - bs) {
            const char *p = name[0] == 'r' ? rmemmem(b + bs, be - bs, nd, nl)
                                           : (nl ? memmem(b + bs, be - bs, nd, nl) : b + bs);
            if (name[0] == 'r' && nl == 0) p = b + be;
            if (p) r = (int64_t)u8_count(b, (size_t)(p - b));
        }
        if (r < 0 && strstr(name, "index")) return tpl_fail(rs, at, "substring not found");
        *out = v_int(r);
        return 0;
    }
    if (!strcmp(name, "join")) {
        NARGS(1, 1);
        hlist *items;
        if (v_iterate(rs, at, args[0], &items)) return -1;
        sbuf o = {0};
        for (size_t i = 0; i < items->n; i++) {
            if (items->v[i].k != V_STR) {
                free(o.p);
                int rc = tpl_fail(rs, at, "sequence item %zu: expected str instance, %s found", i, v_typename(items->v[i]));
                v_decref(v_list(items));
                return rc;
            }
            if (i) sb_put(&o, b, n);
            sb_put(&o, items->v[i].s->b, items->v[i].s->len);
        }
        v_decref(v_list(items));
        *out = v_str_take(&o);
        return 0;
    }
    if (!strcmp(name, "removeprefix") || !strcmp(name, "removesuffix")) {
        NARGS(1, 1);
        if (need_str(rs, at, args[0], name)) return -1;
        size_t pl = args[0].s->len;
        if (pl <= n && name[6] == 'p' && memcmp(b, args[0].s->b, pl) == 0) *out = v_str(b + pl, n - pl);
        else if (pl <= n && name[6] == 's' && memcmp(b + n - pl, args[0].s->b, pl) == 0) *out = v_str(b, n - pl);
        else *out = v_incref(self);
        return 0;
    }
    if (!strncmp(name, "is", 2)) {
        NARGS(0, 0);
        return is_check(rs, at, s, name, out);
    }
    return tpl_fail(rs, at, "unsupported: str.%s", name);
#undef NARGS
}

int call_method(rstate *rs, frame *f, const node *at, hmethod *m, value *args, int nargs,
                char **kwn, value *kwv, int nkw, value *out) {
    value self = m->self;
    const char *name = m->name;
    if (m->id == M_UNSUP) return tpl_fail(rs, at, "unsupported: %s.%s()", v_typename(self), name);
    if (self.k == V_STR) return str_method(rs, at, self.s, name, args, nargs, kwn, kwv, nkw, out);
    if (self.k == V_LOOP) {
        if (nkw) return tpl_fail(rs, at, "loop.%s() takes no keyword arguments", name);
        hloop *lp = self.lp;
        if (!strcmp(name, "cycle")) {
            if (nargs == 0) return tpl_fail(rs, at, "no items for cycling given");
            *out = v_incref(args[lp->index0 % nargs < 0 ? 0 : lp->index0 % nargs]);
            return 0;
        }
        hlist *t = list_new(L_TUPLE, (size_t)nargs);
        for (int i = 0; i < nargs; i++) list_push(t, v_incref(args[i]));
        value tv = v_list(t);
        if (lp->has_changed && v_eq(lp->last_changed, tv)) {
            v_decref(tv);
            *out = v_bool(false);
            return 0;
        }
        v_decref(lp->last_changed);
        lp->last_changed = tv;
        lp->has_changed = true;
        *out = v_bool(true);
        return 0;
    }
    if (nkw) return tpl_fail(rs, at, "%s.%s() takes no keyword arguments", v_typename(self), name);
    if (self.k == V_DICT) {
        hdict *d = self.d;
        if (!strcmp(name, "get")) {
            if (nargs < 1 || nargs > 2) return tpl_fail(rs, at, "get expected 1 or 2 arguments, got %d", nargs);
            if (!v_hashable(args[0])) return tpl_fail(rs, at, "unhashable type: '%s'", v_typename(args[0]));
            value *p = dict_get(d, args[0]);
            *out = p ? v_incref(*p) : nargs == 2 ? v_incref(args[1]) : v_none();
            return 0;
        }
        if (nargs) return tpl_fail(rs, at, "dict.%s() takes no arguments (%d given)", name, nargs);
        if (!strcmp(name, "copy")) {
            hdict *c = dict_new(d->n);
            for (size_t i = 0; i < d->n; i++) dict_set(c, v_incref(d->k[i]), v_incref(d->v[i]));
            *out = v_dict(c);
            return 0;
        }
        int kind = !strcmp(name, "keys") ? L_KEYS : !strcmp(name, "values") ? L_VALUES : L_ITEMS;
        hlist *l = list_new(kind, d->n);
        for (size_t i = 0; i < d->n; i++) {
            if (kind == L_KEYS) list_push(l, v_incref(d->k[i]));
            else if (kind == L_VALUES) list_push(l, v_incref(d->v[i]));
            else {
                hlist *p = list_new(L_TUPLE, 2);
                list_push(p, v_incref(d->k[i]));
                list_push(p, v_incref(d->v[i]));
                list_push(l, v_list(p));
            }
        }
        *out = v_list(l);
        return 0;
    }
    if (self.k == V_LIST) {
        hlist *l = self.l;
        if (!strcmp(name, "copy")) {
            if (nargs) return tpl_fail(rs, at, "list.copy() takes no arguments");
            hlist *c = list_new(L_LIST, l->n);
            for (size_t i = 0; i < l->n; i++) list_push(c, v_incref(l->v[i]));
            *out = v_list(c);
            return 0;
        }
        if (nargs != 1) return tpl_fail(rs, at, "%s.%s() takes exactly one argument", v_typename(self), name);
        int64_t c = 0, idx = -1;
        for (size_t i = 0; i < l->n; i++)
            if (v_eq(l->v[i], args[0])) {
                c++;
                if (idx < 0) idx = (int64_t)i;
            }
        if (!strcmp(name, "count")) *out = v_int(c);
        else if (idx < 0) return tpl_fail(rs, at, "%s.index(x): x not in %s", v_typename(self), v_typename(self));
        else *out = v_int(idx);
        return 0;
    }
    (void)f;
    return tpl_fail(rs, at, "unsupported: %s.%s()", v_typename(self), name);
}
