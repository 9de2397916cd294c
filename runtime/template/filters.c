// runtime/template/filters.c — jinja2's builtin filters in the subset, with
// their Python signatures and results (generators where jinja2 returns one),
// and transformers' tojson (json.dumps with ensure_ascii=False by default,
// indent, separators, sort_keys). Filters jinja2 has but the subset lacks are
// parse errors (filter_id returns -2).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/template/tpl.h"

enum {
    F_ABS, F_ATTR, F_BATCH, F_CAPITALIZE, F_CENTER, F_LENGTH, F_DEFAULT, F_DICTSORT, F_ESCAPE,
    F_FIRST, F_FLOAT, F_INDENT, F_INT, F_ITEMS, F_JOIN, F_LAST, F_LIST, F_LOWER, F_MAP, F_MAX,
    F_MIN, F_REJECT, F_REJECTATTR, F_REPLACE, F_REVERSE, F_ROUND, F_SAFE, F_SELECT, F_SELECTATTR,
    F_SORT, F_STRING, F_SUM, F_TITLE, F_TOJSON, F_TRIM, F_UNIQUE, F_UPPER
};

static const struct {
    const char *name;
    int id;
} filter_names[] = {
    {"abs", F_ABS}, {"attr", F_ATTR}, {"batch", F_BATCH}, {"capitalize", F_CAPITALIZE},
    {"center", F_CENTER}, {"count", F_LENGTH}, {"d", F_DEFAULT}, {"default", F_DEFAULT},
    {"dictsort", F_DICTSORT}, {"e", F_ESCAPE}, {"escape", F_ESCAPE}, {"first", F_FIRST},
    {"float", F_FLOAT}, {"indent", F_INDENT}, {"int", F_INT}, {"items", F_ITEMS},
    {"join", F_JOIN}, {"last", F_LAST}, {"length", F_LENGTH}, {"list", F_LIST},
    {"lower", F_LOWER}, {"map", F_MAP}, {"max", F_MAX}, {"min", F_MIN}, {"reject", F_REJECT},
    {"rejectattr", F_REJECTATTR}, {"replace", F_REPLACE}, {"reverse", F_REVERSE},
    {"round", F_ROUND}, {"safe", F_SAFE}, {"select", F_SELECT}, {"selectattr", F_SELECTATTR},
    {"sort", F_SORT}, {"string", F_STRING}, {"sum", F_SUM}, {"title", F_TITLE},
    {"tojson", F_TOJSON}, {"trim", F_TRIM}, {"unique", F_UNIQUE}, {"upper", F_UPPER},
    // jinja2 builtins outside the subset
    {"filesizeformat", -2}, {"forceescape", -2}, {"format", -2}, {"groupby", -2},
    {"pprint", -2}, {"random", -2}, {"slice", -2}, {"striptags", -2}, {"truncate", -2},
    {"urlencode", -2}, {"urlize", -2}, {"wordcount", -2}, {"wordwrap", -2}, {"xmlattr", -2},
};

int filter_id(const char *name) {
    for (size_t i = 0; i < sizeof filter_names / sizeof filter_names[0]; i++)
        if (!strcmp(filter_names[i].name, name)) return filter_names[i].id;
    return -1;
}

// binds positional and keyword arguments to a Python signature; absent
// parameters stay V_MISSING
static int bind(rstate *rs, const node *at, const char *fname, value *args, int nargs, char **kwn,
                value *kwv, int nkw, const char *const *names, value *slots) {
    int nn = 0;
    while (names[nn]) nn++;
    for (int i = 0; i < nn; i++) slots[i] = v_missing();
    if (nargs > nn)
        return tpl_fail(rs, at, "filter '%s' takes at most %d argument(s), got %d", fname, nn, nargs);
    for (int i = 0; i < nargs; i++) slots[i] = args[i];
    for (int k = 0; k < nkw; k++) {
        int i;
        for (i = 0; i < nn; i++)
            if (!strcmp(names[i], kwn[k])) break;
        if (i == nn) return tpl_fail(rs, at, "filter '%s' got an unexpected keyword argument '%s'", fname, kwn[k]);
        if (slots[i].k != V_MISSING)
            return tpl_fail(rs, at, "filter '%s' got multiple values for argument '%s'", fname, kwn[k]);
        slots[i] = kwv[k];
    }
    return 0;
}

static bool given(value v) { return v.k != V_MISSING; }

static int soft_str(rstate *rs, const node *at, value v, value *out) {
    if (v.k == V_STR) {
        *out = v_incref(v);
        return 0;
    }
    sbuf b = {0};
    if (to_pystr(rs, at, v, &b)) {
        free(b.p);
        return -1;
    }
    *out = v_str_take(&b);
    return 0;
}

static int plain_str(rstate *rs, const node *at, const char *fname, value v, value *out) {
    if (v.k == V_STR && v.s->markup)
        return tpl_fail(rs, at, "unsupported: filter '%s' on a safe/escaped (Markup) string", fname);
    return soft_str(rs, at, v, out);
}

static int as_int(rstate *rs, const node *at, value v, const char *what, int64_t *out) {
    if (v.k == V_INT || v.k == V_BOOL) {
        *out = v.i;
        return 0;
    }
    return tpl_fail(rs, at, "%s: '%s' object cannot be interpreted as an integer", what, v_typename(v));
}

// ---------------------------------------------------------------- attribute getters

static int attr_get(rstate *rs, const node *at, value item, value attribute, value dflt, value *out) {
    item = v_incref(item);
    if (attribute.k == V_MISSING || attribute.k == V_NONE) {
        *out = item;
        return 0;
    }
    if (attribute.k != V_STR) {
        value r;
        int rc = get_item(rs, at, item, attribute, &r);
        v_decref(item);
        if (rc) return -1;
        if (given(dflt) && dflt.k != V_NONE && r.k == V_UNDEF) {
            v_decref(r);
            r = v_incref(dflt);
        }
        *out = r;
        return 0;
    }
    const char *s = attribute.s->b;
    size_t n = attribute.s->len, st = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != '.') continue;
        value key;
        bool digits = i > st;
        for (size_t k = st; k < i; k++)
            if (s[k] < '0' || s[k] > '9') digits = false;
        if (digits) {
            int64_t x = 0;
            for (size_t k = st; k < i; k++) {
                if (x > (INT64_MAX - 9) / 10) {
                    v_decref(item);
                    return tpl_fail(rs, at, "unsupported: attribute index beyond 64 bits");
                }
                x = x * 10 + (s[k] - '0');
            }
            key = v_int(x);
        } else {
            key = v_str(s + st, i - st);
        }
        value r;
        int rc = get_item(rs, at, item, key, &r);
        v_decref(key);
        v_decref(item);
        if (rc) return -1;
        if (given(dflt) && dflt.k != V_NONE && r.k == V_UNDEF) {
            v_decref(r);
            r = v_incref(dflt);
        }
        item = r;
        st = i + 1;
    }
    *out = item;
    return 0;
}

static value ignore_case(value v, bool cs) {
    if (cs || v.k != V_STR) return v;
    bool ok;
    atoll_error e;
    value r = str_case(v.s->b, v.s->len, UC_LOWER, &e, &ok);
    v_decref(v);
    return r;
}

// stable insertion sort of idx by keys; Python's sorted (reverse keeps stability)
static int sort_idx(rstate *rs, const node *at, value *keys, size_t n, size_t *idx, bool reverse) {
    for (size_t i = 0; i < n; i++) idx[i] = i;
    for (size_t i = 1; i < n; i++) {
        size_t x = idx[i], j = i;
        while (j > 0) {
            int c;
            if (v_cmp(keys[x], keys[idx[j - 1]], &c, rs->e))
                return error_prefix(rs->e, "line %d:%d", at->line, at->col);
            bool less = c == 2 ? false : reverse ? c > 0 : c < 0;
            if (!less) break;
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = x;
    }
    return 0;
}

// ---------------------------------------------------------------- select / map

static int select_or_reject(rstate *rs, frame *f, const node *at, value seq, value *args, int nargs,
                            char **kwn, value *kwv, int nkw, bool lookup_attr, bool want,
                            value *out) {
    if (!v_truthy(seq)) {  // jinja2: `if value:` guards the generator
        *out = v_list(list_new(L_GEN, 0));
        return 0;
    }
    int off = 0;
    value attribute = v_missing();
    if (lookup_attr) {
        if (nargs < 1) return tpl_fail(rs, at, "Missing parameter for attribute name");
        attribute = args[0];
        off = 1;
    }
    const char *tname = NULL;
    if (nargs > off) {
        if (args[off].k != V_STR) return tpl_fail(rs, at, "test name must be a string");
        tname = args[off].s->b;
    }
    hlist *items;
    if (v_iterate(rs, at, seq, &items)) return -1;
    hlist *res = list_new(L_GEN, 0);
    int rc = 0;
    for (size_t i = 0; i < items->n && !rc; i++) {
        value x;
        if ((rc = attr_get(rs, at, items->v[i], attribute, v_missing(), &x))) break;
        bool t;
        if (tname)
            rc = apply_test(rs, f, at, test_id(tname), tname, x, args + off + 1, nargs - off - 1, kwn, kwv, nkw, &t);
        else
            t = v_truthy(x);
        v_decref(x);
        if (!rc && t == want) list_push(res, v_incref(items->v[i]));
    }
    v_decref(v_list(items));
    if (rc) {
        v_decref(v_list(res));
        return -1;
    }
    *out = v_list(res);
    return 0;
}

static int do_map(rstate *rs, frame *f, const node *at, value seq, value *args, int nargs, char **kwn,
                  value *kwv, int nkw, value *out) {
    if (!v_truthy(seq)) {  // jinja2: `if value:` guards the generator
        *out = v_list(list_new(L_GEN, 0));
        return 0;
    }
    value attribute = v_missing(), dflt = v_missing();
    const char *fname = NULL;
    if (nargs == 0) {
        for (int k = 0; k < nkw; k++) {
            if (!strcmp(kwn[k], "attribute")) attribute = kwv[k];
            else if (!strcmp(kwn[k], "default")) dflt = kwv[k];
            else return tpl_fail(rs, at, "Unexpected keyword argument '%s'", kwn[k]);
        }
        if (!given(attribute)) {
            if (given(dflt)) return tpl_fail(rs, at, "Unexpected keyword argument 'default'");
            return tpl_fail(rs, at, "map requires a filter argument");
        }
    } else {
        if (args[0].k != V_STR) return tpl_fail(rs, at, "map: the filter name must be a string");
        fname = args[0].s->b;
    }
    hlist *items;
    if (v_iterate(rs, at, seq, &items)) return -1;
    hlist *res = list_new(L_GEN, items->n);
    int rc = 0;
    for (size_t i = 0; i < items->n && !rc; i++) {
        value x;
        if (fname)
            rc = apply_filter(rs, f, at, filter_id(fname), fname, items->v[i], args + 1, nargs - 1, kwn, kwv, nkw, &x);
        else
            rc = attr_get(rs, at, items->v[i], attribute, dflt, &x);
        if (!rc) list_push(res, x);
    }
    v_decref(v_list(items));
    if (rc) {
        v_decref(v_list(res));
        return -1;
    }
    *out = v_list(res);
    return 0;
}

// ---------------------------------------------------------------- numbers from strings

// Python float(str) syntax check; writes the text strtod can read
static bool py_float_text(const char *s, size_t n, sbuf *o) {
    size_t a, b;
    value none = v_none();
    atoll_error e;
    str_strip(s, n, none, 3, &a, &b, &e);
    size_t i = a;
    if (i < b && (s[i] == '+' || s[i] == '-')) sb_putc(o, s[i++]);
    size_t rest = b - i;
    const char *r = s + i;
    if ((rest == 3 && !strncasecmp(r, "inf", 3)) || (rest == 8 && !strncasecmp(r, "infinity", 8)) ||
        (rest == 3 && !strncasecmp(r, "nan", 3))) {
        sb_put(o, r, rest);
        return true;
    }
    bool digits = false, prev_digit = false;
    int part = 0;  // 0 int, 1 frac, 2 exp
    bool exp_digits = false;
    for (; i < b; i++) {
        char c = s[i];
        if (c >= '0' && c <= '9') {
            sb_putc(o, c);
            if (part < 2) digits = true;
            else exp_digits = true;
            prev_digit = true;
        } else if (c == '_' && prev_digit && i + 1 < b && s[i + 1] >= '0' && s[i + 1] <= '9') {
            prev_digit = false;
        } else if (c == '.' && part == 0) {
            sb_putc(o, c);
            part = 1;
            prev_digit = false;
        } else if ((c == 'e' || c == 'E') && part < 2 && digits) {
            sb_putc(o, 'e');
            part = 2;
            prev_digit = false;
            if (i + 1 < b && (s[i + 1] == '+' || s[i + 1] == '-')) sb_putc(o, s[++i]);
        } else {
            return false;
        }
    }
    return digits && (part < 2 || exp_digits);
}

// Python int(str, base) for bases 2..36 (no base 0); false when invalid
static bool py_int_text(const char *s, size_t n, int base, int64_t *out, bool *overflow) {
    size_t a, b;
    value none = v_none();
    atoll_error e;
    str_strip(s, n, none, 3, &a, &b, &e);
    size_t i = a;
    bool neg = false;
    *overflow = false;
    if (i < b && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    if (i + 1 < b && s[i] == '0') {
        char p = (char)(s[i + 1] | 0x20);
        if ((base == 16 && p == 'x') || (base == 8 && p == 'o') || (base == 2 && p == 'b')) {
            i += 2;
            if (i < b && s[i] == '_') i++;
        }
    }
    if (i >= b) return false;
    unsigned long long v = 0;
    bool prev = false;
    for (; i < b; i++) {
        char c = s[i];
        int d;
        if (c == '_') {
            if (!prev || i + 1 >= b) return false;
            prev = false;
            continue;
        }
        if (c >= '0' && c <= '9') d = c - '0';
        else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') d = (c | 0x20) - 'a' + 10;
        else return false;
        if (d >= base) return false;
        if (v > (9223372036854775808ULL - (unsigned long long)d) / (unsigned long long)base) *overflow = true;
        v = v * (unsigned long long)base + (unsigned long long)d;
        prev = true;
    }
    if (!neg && v > 9223372036854775807ULL) *overflow = true;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

static int to_float(value v, double *out) {  // 0 ok, 1 TypeError/ValueError
    switch (v.k) {
    case V_INT:
    case V_BOOL: *out = (double)v.i; return 0;
    case V_FLOAT: *out = v.f; return 0;
    case V_STR: {
        sbuf t = {0};
        bool ok = py_float_text(v.s->b, v.s->len, &t);
        if (ok) *out = strtod(t.p ? t.p : "", NULL);
        free(t.p);
        return ok ? 0 : 1;
    }
    default: return 1;
    }
}

// ---------------------------------------------------------------- indent / title / tojson

static value do_indent(value s, value width, bool first, bool blank) {
    sbuf ind = {0}, text = {0}, o = {0};
    if (width.k == V_STR) sb_put(&ind, width.s->b, width.s->len);
    else
        for (int64_t i = 0; i < width.i; i++) sb_putc(&ind, ' ');
    sb_put(&text, s.s->b, s.s->len);
    sb_putc(&text, '\n');
    hlist *lines = list_new(L_LIST, 0);
    str_splitlines(text.p, text.n, false, lines);
    if (blank) {
        for (size_t i = 0; i < lines->n; i++) {
            if (i) {
                sb_putc(&o, '\n');
                sb_put(&o, ind.p, ind.n);
            }
            sb_put(&o, lines->v[i].s->b, lines->v[i].s->len);
        }
    } else if (lines->n) {
        sb_put(&o, lines->v[0].s->b, lines->v[0].s->len);
        for (size_t i = 1; i < lines->n; i++) {
            sb_putc(&o, '\n');
            if (lines->v[i].s->len) sb_put(&o, ind.p, ind.n);
            sb_put(&o, lines->v[i].s->b, lines->v[i].s->len);
        }
    }
    v_decref(v_list(lines));
    sbuf r = {0};
    if (first) sb_put(&r, ind.p, ind.n);
    sb_put(&r, o.p, o.n);
    free(ind.p);
    free(text.p);
    free(o.p);
    return v_str_take(&r);
}

static bool title_sep(uint32_t c) {
    return c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || uc_isspace(c);
}

static value do_title(value s) {
    const char *b = s.s->b;
    size_t n = s.s->len, i = 0;
    sbuf o = {0};
    atoll_error e;
    bool ok;
    while (i < n) {
        size_t st = i, k = i;
        bool sep = title_sep(u8_next(b, n, &k));
        while (i < n) {
            k = i;
            if (title_sep(u8_next(b, n, &k)) != sep) break;
            i = k;
        }
        // item b[st..i): first code point upper, the rest lower
        size_t f = st;
        u8_next(b, n, &f);
        value u = str_case(b + st, f - st, UC_UPPER, &e, &ok);
        value l = str_case(b + f, i - f, UC_LOWER, &e, &ok);
        sb_put(&o, u.s->b, u.s->len);
        sb_put(&o, l.s->b, l.s->len);
        v_decref(u);
        v_decref(l);
    }
    return v_str_take(&o);
}

static int do_tojson(rstate *rs, const node *at, value x, value *p, value *out) {
    // p: ensure_ascii, indent, separators, sort_keys
    json_opts o = {0};
    o.ensure_ascii = given(p[0]) && v_truthy(p[0]);
    o.sort_keys = given(p[3]) && v_truthy(p[3]);
    sbuf ind = {0};
    if (given(p[1]) && p[1].k != V_NONE) {
        o.has_indent = true;
        if (p[1].k == V_STR) sb_put(&ind, p[1].s->b, p[1].s->len);
        else if (p[1].k == V_INT || p[1].k == V_BOOL)
            for (int64_t i = 0; i < p[1].i; i++) sb_putc(&ind, ' ');
        else return tpl_fail(rs, at, "tojson: indent must be an int, a str or None, not %s", v_typename(p[1]));
        o.indent = ind.p ? ind.p : "";
        o.indent_len = ind.n;
    }
    o.item_sep = o.has_indent ? "," : ", ";
    o.key_sep = ": ";
    if (given(p[2]) && p[2].k != V_NONE) {
        value sp = p[2];
        if (sp.k != V_LIST || (sp.l->kind != L_LIST && sp.l->kind != L_TUPLE) || sp.l->n != 2 ||
            sp.l->v[0].k != V_STR || sp.l->v[1].k != V_STR) {
            free(ind.p);
            return tpl_fail(rs, at, "unsupported: tojson separators other than a pair of strings");
        }
        o.item_sep = sp.l->v[0].s->b;
        o.key_sep = sp.l->v[1].s->b;
        o.item_sep_len = sp.l->v[0].s->len;
        o.key_sep_len = sp.l->v[1].s->len;
    } else {
        o.item_sep_len = strlen(o.item_sep);
        o.key_sep_len = strlen(o.key_sep);
    }
    sbuf b = {0};
    int rc = v_tojson(x, &o, &b, rs->e);
    free(ind.p);
    if (rc) {
        free(b.p);
        return error_prefix(rs->e, "line %d:%d", at->line, at->col);
    }
    *out = v_str_take(&b);
    return 0;
}

// ---------------------------------------------------------------- dispatch

#define SIG0 static const char *const names[] = {NULL}; \
    if (bind(rs, at, name, args, nargs, kwn, kwv, nkw, names, p)) return -1
#define SIG(...) static const char *const names[] = {__VA_ARGS__, NULL}; \
    if (bind(rs, at, name, args, nargs, kwn, kwv, nkw, names, p)) return -1

int apply_filter(rstate *rs, frame *f, const node *at, int fid, const char *name, value in,
                 value *args, int nargs, char **kwn, value *kwv, int nkw, value *out) {
    value p[8];
    value s;
    hlist *items;
    int rc;
    switch (fid) {
    case -1: return tpl_fail(rs, at, "no filter named '%s'", name);
    case -2: return tpl_fail(rs, at, "unsupported filter '%s' (not part of the chat-template subset)", name);
    case F_ABS: {
        SIG0;
        if (in.k == V_INT || in.k == V_BOOL) {
            if (in.i == INT64_MIN) return tpl_fail(rs, at, "unsupported: integer result beyond 64 bits");
            *out = v_int(in.i < 0 ? -in.i : in.i);
        } else if (in.k == V_FLOAT) *out = v_float(fabs(in.f));
        else return tpl_fail(rs, at, "bad operand type for abs(): '%s'", v_typename(in));
        return 0;
    }
    case F_ATTR: {
        SIG("name");
        if (!given(p[0])) return tpl_fail(rs, at, "attr() missing required argument 'name'");
        if (p[0].k != V_STR) return tpl_fail(rs, at, "unsupported: attr() with a non-string name");
        if (in.k == V_UNDEF) return tpl_fail(rs, at, "%s", in.s ? in.s->b : "undefined value");
        bool unsafe;
        rc = builtin_attr(rs, at, in, p[0].s->b, out, &unsafe);
        if (rc < 0) return -1;
        if (rc > 0) return 0;
        if (in.k == V_NS) {
            value *x = dict_gets(in.ns->attrs, p[0].s->b);
            if (x) {
                *out = v_incref(*x);
                return 0;
            }
        }
        *out = v_undef("'%s object' has no attribute '%s'", v_typename(in), p[0].s->b);
        return 0;
    }
    case F_BATCH: {
        SIG("linecount", "fill_with");
        int64_t lc = 0;
        if (!given(p[0])) return tpl_fail(rs, at, "batch() missing required argument 'linecount'");
        if (as_int(rs, at, p[0], "batch", &lc)) return -1;
        if (v_iterate(rs, at, in, &items)) return -1;
        hlist *res = list_new(L_GEN, 0), *cur = NULL;
        for (size_t i = 0; i < items->n; i++) {
            if (!cur) cur = list_new(L_LIST, 0);
            list_push(cur, v_incref(items->v[i]));
            if ((int64_t)cur->n == lc) {
                list_push(res, v_list(cur));
                cur = NULL;
            }
        }
        if (cur) {
            if (given(p[1]) && p[1].k != V_NONE)
                while ((int64_t)cur->n < lc) list_push(cur, v_incref(p[1]));
            list_push(res, v_list(cur));
        }
        v_decref(v_list(items));
        *out = v_list(res);
        return 0;
    }
    case F_CAPITALIZE:
    case F_LOWER:
    case F_UPPER:
    case F_TITLE: {
        SIG0;
        if (plain_str(rs, at, name, in, &s)) return -1;
        bool ok;
        if (fid == F_TITLE) *out = do_title(s);
        else *out = str_case(s.s->b, s.s->len, fid == F_LOWER ? UC_LOWER : fid == F_UPPER ? UC_UPPER : 4, rs->e, &ok);
        v_decref(s);
        return 0;
    }
    case F_CENTER: {
        SIG("width");
        int64_t w = 80;
        if (given(p[0]) && as_int(rs, at, p[0], "center", &w)) return -1;
        if (plain_str(rs, at, name, in, &s)) return -1;
        int64_t len = (int64_t)str_ncp(s.s), marg = w - len;
        if (marg <= 0) {
            *out = s;
            return 0;
        }
        int64_t left = marg / 2 + (marg & w & 1);
        sbuf b = {0};
        for (int64_t i = 0; i < left; i++) sb_putc(&b, ' ');
        sb_put(&b, s.s->b, s.s->len);
        for (int64_t i = left; i < marg; i++) sb_putc(&b, ' ');
        v_decref(s);
        *out = v_str_take(&b);
        return 0;
    }
    case F_LENGTH: {
        SIG0;
        int64_t n;
        if (v_len(rs, at, in, &n)) return -1;
        *out = v_int(n);
        return 0;
    }
    case F_DEFAULT: {
        SIG("default_value", "boolean");
        bool boolean = given(p[1]) && v_truthy(p[1]);
        if (in.k == V_UNDEF || (boolean && !v_truthy(in)))
            *out = given(p[0]) ? v_incref(p[0]) : v_str("", 0);
        else
            *out = v_incref(in);
        return 0;
    }
    case F_DICTSORT: {
        SIG("case_sensitive", "by", "reverse");
        bool cs = given(p[0]) && v_truthy(p[0]), rev = given(p[2]) && v_truthy(p[2]);
        int pos = 0;
        if (given(p[1])) {
            if (p[1].k == V_STR && !strcmp(p[1].s->b, "value")) pos = 1;
            else if (!(p[1].k == V_STR && !strcmp(p[1].s->b, "key")))
                return tpl_fail(rs, at, "You can only sort by either \"key\" or \"value\"");
        }
        if (in.k != V_DICT) return tpl_fail(rs, at, "dictsort: '%s' object has no attribute 'items'", v_typename(in));
        size_t n = in.d->n;
        value *keys = calloc(n + 1, sizeof(value));
        size_t *idx = calloc(n + 1, sizeof(size_t));
        for (size_t i = 0; i < n; i++) keys[i] = ignore_case(v_incref(pos ? in.d->v[i] : in.d->k[i]), cs);
        rc = sort_idx(rs, at, keys, n, idx, rev);
        if (!rc) {
            hlist *l = list_new(L_LIST, n);
            for (size_t i = 0; i < n; i++) {
                hlist *t = list_new(L_TUPLE, 2);
                list_push(t, v_incref(in.d->k[idx[i]]));
                list_push(t, v_incref(in.d->v[idx[i]]));
                list_push(l, v_list(t));
            }
            *out = v_list(l);
        }
        for (size_t i = 0; i < n; i++) v_decref(keys[i]);
        free(keys);
        free(idx);
        return rc;
    }
    case F_ESCAPE: {
        SIG0;
        *out = v_escape(in);
        return 0;
    }
    case F_SAFE: {
        SIG0;
        if (soft_str(rs, at, in, &s)) return -1;
        *out = v_markup(s.s->b, s.s->len);
        v_decref(s);
        return 0;
    }
    case F_FIRST:
    case F_LAST: {
        SIG0;
        if (fid == F_LAST && (in.k == V_LIST && in.l->kind == L_GEN))
            return tpl_fail(rs, at, "'generator' object is not reversible");
        if (fid == F_LAST && in.k != V_LIST && in.k != V_STR && in.k != V_DICT && in.k != V_UNDEF)
            return tpl_fail(rs, at, "'%s' object is not reversible", v_typename(in));
        bool gen = in.k == V_LIST && in.l->kind == L_GEN;
        uint8_t consumed = gen ? in.l->consumed : 0;
        if (v_iterate(rs, at, in, &items)) return -1;
        if (gen) in.l->consumed = consumed;
        if (items->n == 0)
            *out = v_undef(fid == F_FIRST ? "No first item, sequence was empty." : "No last item, sequence was empty.");
        else
            *out = v_incref(items->v[fid == F_FIRST ? 0 : items->n - 1]);
        v_decref(v_list(items));
        return 0;
    }
    case F_FLOAT: {
        SIG("default");
        double d;
        if (to_float(in, &d)) *out = given(p[0]) ? v_incref(p[0]) : v_float(0.0);
        else *out = v_float(d);
        return 0;
    }
    case F_INT: {
        SIG("default", "base");
        int64_t base = 10;
        if (given(p[1]) && as_int(rs, at, p[1], "int", &base)) return -1;
        value dflt = given(p[0]) ? v_incref(p[0]) : v_int(0);
        if (in.k == V_STR) {
            if (base < 2 || base > 36) {
                v_decref(dflt);
                return tpl_fail(rs, at, "unsupported: int() base %lld", (long long)base);
            }
            int64_t x;
            bool over;
            if (py_int_text(in.s->b, in.s->len, (int)base, &x, &over)) {
                v_decref(dflt);
                if (over) return tpl_fail(rs, at, "unsupported: integer beyond 64 bits");
                *out = v_int(x);
                return 0;
            }
        } else if (in.k == V_INT || in.k == V_BOOL) {
            v_decref(dflt);
            *out = v_int(in.i);
            return 0;
        }
        double d;
        if (to_float(in, &d) || isnan(d)) {
            *out = dflt;
            return 0;
        }
        v_decref(dflt);
        if (isinf(d)) return tpl_fail(rs, at, "cannot convert float infinity to integer");
        if (fabs(d) >= 9223372036854775808.0) return tpl_fail(rs, at, "unsupported: integer beyond 64 bits");
        *out = v_int((int64_t)d);
        return 0;
    }
    case F_INDENT: {
        SIG("width", "first", "blank");
        value width = given(p[0]) ? p[0] : v_int(4);
        if (width.k != V_STR && width.k != V_INT && width.k != V_BOOL)
            return tpl_fail(rs, at, "indent: width must be an int or a str, not %s", v_typename(width));
        // jinja2's indent appends "\n" to its argument without converting it to a string first
        if (in.k == V_UNDEF) return tpl_fail(rs, at, "%s", in.s ? in.s->b : "undefined value");
        if (in.k != V_STR)
            return tpl_fail(rs, at, "unsupported operand type(s) for +=: '%s' and 'str'", v_typename(in));
        if (plain_str(rs, at, name, in, &s)) return -1;
        *out = do_indent(s, width, given(p[1]) && v_truthy(p[1]), given(p[2]) && v_truthy(p[2]));
        v_decref(s);
        return 0;
    }
    case F_ITEMS: {
        SIG0;
        hlist *l = list_new(L_GEN, 0);
        if (in.k == V_DICT) {
            for (size_t i = 0; i < in.d->n; i++) {
                hlist *t = list_new(L_TUPLE, 2);
                list_push(t, v_incref(in.d->k[i]));
                list_push(t, v_incref(in.d->v[i]));
                list_push(l, v_list(t));
            }
        } else if (in.k != V_UNDEF) {
            v_decref(v_list(l));
            return tpl_fail(rs, at, "Can only get item pairs from a mapping.");
        }
        *out = v_list(l);
        return 0;
    }
    case F_JOIN: {
        SIG("d", "attribute");
        sbuf sep = {0}, b = {0};
        if (given(p[0]) && to_pystr(rs, at, p[0], &sep)) return -1;
        if (v_iterate(rs, at, in, &items)) {
            free(sep.p);
            return -1;
        }
        rc = 0;
        for (size_t i = 0; i < items->n && !rc; i++) {
            value x;
            if ((rc = attr_get(rs, at, items->v[i], given(p[1]) ? p[1] : v_missing(), v_missing(), &x))) break;
            if (i) sb_put(&b, sep.p, sep.n);
            rc = to_pystr(rs, at, x, &b);
            v_decref(x);
        }
        v_decref(v_list(items));
        free(sep.p);
        if (rc) {
            free(b.p);
            return -1;
        }
        *out = v_str_take(&b);
        return 0;
    }
    case F_LIST: {
        SIG0;
        if (v_iterate(rs, at, in, &items)) return -1;
        *out = v_list(items);
        return 0;
    }
    case F_MAP: return do_map(rs, f, at, in, args, nargs, kwn, kwv, nkw, out);
    case F_SELECT:
    case F_REJECT:
    case F_SELECTATTR:
    case F_REJECTATTR:
        return select_or_reject(rs, f, at, in, args, nargs, kwn, kwv, nkw,
                                fid == F_SELECTATTR || fid == F_REJECTATTR,
                                fid == F_SELECT || fid == F_SELECTATTR, out);
    case F_MAX:
    case F_MIN: {
        SIG("case_sensitive", "attribute");
        bool cs = given(p[0]) && v_truthy(p[0]);
        if (v_iterate(rs, at, in, &items)) return -1;
        if (items->n == 0) {
            v_decref(v_list(items));
            *out = v_undef("No aggregated item, sequence was empty.");
            return 0;
        }
        size_t best = 0;
        value bk = v_undef0();
        rc = 0;
        for (size_t i = 0; i < items->n && !rc; i++) {
            value k;
            if ((rc = attr_get(rs, at, items->v[i], given(p[1]) ? p[1] : v_missing(), v_missing(), &k))) break;
            k = ignore_case(k, cs);
            if (i == 0) {
                bk = k;
                continue;
            }
            int c;
            if (v_cmp(k, bk, &c, rs->e)) {
                rc = error_prefix(rs->e, "line %d:%d", at->line, at->col);
                v_decref(k);
                break;
            }
            if (c != 2 && (fid == F_MAX ? c > 0 : c < 0)) {
                v_decref(bk);
                bk = k;
                best = i;
            } else {
                v_decref(k);
            }
        }
        v_decref(bk);
        if (!rc) *out = v_incref(items->v[best]);
        v_decref(v_list(items));
        return rc;
    }
    case F_REPLACE: {
        SIG("old", "new", "count");
        if (!given(p[0]) || !given(p[1])) return tpl_fail(rs, at, "replace() missing required arguments");
        int64_t cnt = -1;
        if (given(p[2]) && p[2].k != V_NONE && as_int(rs, at, p[2], "replace", &cnt)) return -1;
        value o, nw;
        if (plain_str(rs, at, name, in, &s)) return -1;
        if (soft_str(rs, at, p[0], &o)) {
            v_decref(s);
            return -1;
        }
        if (soft_str(rs, at, p[1], &nw)) {
            v_decref(s);
            v_decref(o);
            return -1;
        }
        *out = str_replace(s.s->b, s.s->len, o.s->b, o.s->len, nw.s->b, nw.s->len, cnt);
        v_decref(s);
        v_decref(o);
        v_decref(nw);
        return 0;
    }
    case F_REVERSE: {
        SIG0;
        if (in.k == V_STR) {
            if (plain_str(rs, at, name, in, &s)) return -1;
            size_t n = s.s->len, i = n;
            sbuf b = {0};
            while (i > 0) {
                size_t st = i - 1;
                while (st > 0 && ((unsigned char)s.s->b[st] & 0xC0) == 0x80) st--;
                sb_put(&b, s.s->b + st, i - st);
                i = st;
            }
            v_decref(s);
            *out = v_str_take(&b);
            return 0;
        }
        bool gen = in.k == V_LIST && in.l->kind == L_GEN;
        if (v_iterate(rs, at, in, &items)) return tpl_fail(rs, at, "argument must be iterable");
        hlist *l = list_new(gen ? L_LIST : L_GEN, items->n);
        for (size_t i = items->n; i > 0; i--) list_push(l, v_incref(items->v[i - 1]));
        v_decref(v_list(items));
        *out = v_list(l);
        return 0;
    }
    case F_ROUND: {
        SIG("precision", "method");
        int64_t prec = 0;
        if (given(p[0]) && as_int(rs, at, p[0], "round", &prec)) return -1;
        const char *method = "common";
        if (given(p[1])) {
            if (p[1].k != V_STR || (strcmp(p[1].s->b, "common") && strcmp(p[1].s->b, "ceil") && strcmp(p[1].s->b, "floor")))
                return tpl_fail(rs, at, "method must be common, ceil or floor");
            method = p[1].s->b;
        }
        if (in.k != V_INT && in.k != V_BOOL && in.k != V_FLOAT)
            return tpl_fail(rs, at, "round: type %s doesn't define __round__ method", v_typename(in));
        if (strcmp(method, "common")) {
            if (prec < 0 || prec > 22) return tpl_fail(rs, at, "unsupported: round() precision %lld", (long long)prec);
            double m = pow(10, (double)prec), x = in.k == V_FLOAT ? in.f : (double)in.i;
            double r = method[0] == 'c' ? ceil(x * m) : floor(x * m);
            if (isinf(r) || isnan(r)) return tpl_fail(rs, at, "cannot convert float infinity or NaN to integer");
            *out = v_float(r / m);
            return 0;
        }
        if (in.k != V_FLOAT) {
            if (prec < 0) return tpl_fail(rs, at, "unsupported: round() of an int with negative precision");
            *out = v_int(in.i);
            return 0;
        }
        if (prec < 0) return tpl_fail(rs, at, "unsupported: round() with negative precision");
        if (!isfinite(in.f)) {
            *out = v_float(in.f);
            return 0;
        }
        if (prec == 0) {
            *out = v_float(nearbyint(in.f));
            return 0;
        }
        if (prec > 320) {
            *out = v_float(in.f);
            return 0;
        }
        char buf[512];
        snprintf(buf, sizeof buf, "%.*f", (int)prec, in.f);
        *out = v_float(strtod(buf, NULL));
        return 0;
    }
    case F_SORT: {
        SIG("reverse", "case_sensitive", "attribute");
        bool rev = given(p[0]) && v_truthy(p[0]), cs = given(p[1]) && v_truthy(p[1]);
        if (v_iterate(rs, at, in, &items)) return -1;
        size_t n = items->n;
        value *keys = calloc(n + 1, sizeof(value));
        size_t *idx = calloc(n + 1, sizeof(size_t));
        rc = 0;
        // attribute may name several comma-separated attributes: the key is a list
        for (size_t i = 0; i < n && !rc; i++) {
            hlist *kl = list_new(L_LIST, 1);
            if (given(p[2]) && p[2].k == V_STR) {
                const char *a = p[2].s->b;
                size_t al = p[2].s->len, st = 0;
                for (size_t j = 0; j <= al && !rc; j++) {
                    if (j < al && a[j] != ',') continue;
                    value an = v_str(a + st, j - st), k;
                    rc = attr_get(rs, at, items->v[i], an, v_missing(), &k);
                    v_decref(an);
                    if (!rc) list_push(kl, ignore_case(k, cs));
                    st = j + 1;
                }
            } else {
                value k;
                rc = attr_get(rs, at, items->v[i], given(p[2]) ? p[2] : v_missing(), v_missing(), &k);
                if (!rc) list_push(kl, ignore_case(k, cs));
            }
            keys[i] = v_list(kl);
        }
        if (!rc) rc = sort_idx(rs, at, keys, n, idx, rev);
        if (!rc) {
            hlist *l = list_new(L_LIST, n);
            for (size_t i = 0; i < n; i++) list_push(l, v_incref(items->v[idx[i]]));
            *out = v_list(l);
        }
        for (size_t i = 0; i < n; i++) v_decref(keys[i]);
        free(keys);
        free(idx);
        v_decref(v_list(items));
        return rc;
    }
    case F_STRING: {
        SIG0;
        return soft_str(rs, at, in, out);
    }
    case F_SUM: {
        SIG("attribute", "start");
        value acc = given(p[1]) ? v_incref(p[1]) : v_int(0);
        if (v_iterate(rs, at, in, &items)) {
            v_decref(acc);
            return -1;
        }
        rc = 0;
        for (size_t i = 0; i < items->n && !rc; i++) {
            value x, r;
            if ((rc = attr_get(rs, at, items->v[i], given(p[0]) ? p[0] : v_missing(), v_missing(), &x))) break;
            rc = binop(rs, at, OP_ADD, acc, x, &r);
            v_decref(x);
            if (!rc) {
                v_decref(acc);
                acc = r;
            }
        }
        v_decref(v_list(items));
        if (rc) {
            v_decref(acc);
            return -1;
        }
        *out = acc;
        return 0;
    }
    case F_TOJSON: {
        SIG("ensure_ascii", "indent", "separators", "sort_keys");
        return do_tojson(rs, at, in, p, out);
    }
    case F_TRIM: {
        SIG("chars");
        if (plain_str(rs, at, name, in, &s)) return -1;
        size_t a, b;
        if (str_strip(s.s->b, s.s->len, given(p[0]) ? p[0] : v_none(), 3, &a, &b, rs->e)) {
            v_decref(s);
            return error_prefix(rs->e, "line %d:%d", at->line, at->col);
        }
        *out = v_str(s.s->b + a, b - a);
        v_decref(s);
        return 0;
    }
    case F_UNIQUE: {
        SIG("case_sensitive", "attribute");
        bool cs = given(p[0]) && v_truthy(p[0]);
        if (v_iterate(rs, at, in, &items)) return -1;
        hlist *seen = list_new(L_LIST, 0), *res = list_new(L_GEN, 0);
        rc = 0;
        for (size_t i = 0; i < items->n && !rc; i++) {
            value k;
            if ((rc = attr_get(rs, at, items->v[i], given(p[1]) ? p[1] : v_missing(), v_missing(), &k))) break;
            k = ignore_case(k, cs);
            if (!v_hashable(k)) {
                rc = tpl_fail(rs, at, "unhashable type: '%s'", v_typename(k));
                v_decref(k);
                break;
            }
            bool dup = false;
            for (size_t j = 0; j < seen->n && !dup; j++) dup = v_eq(seen->v[j], k);
            if (dup) v_decref(k);
            else {
                list_push(seen, k);
                list_push(res, v_incref(items->v[i]));
            }
        }
        v_decref(v_list(items));
        v_decref(v_list(seen));
        if (rc) {
            v_decref(v_list(res));
            return -1;
        }
        *out = v_list(res);
        return 0;
    }
    }
    return tpl_fail(rs, at, "internal error: filter '%s'", name);
}
