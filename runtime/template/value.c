// runtime/template/value.c — the template value type with Python semantics:
// reference counting, constructors, truthiness, ==, ordering, str()/repr()
// (including Python's float repr), JSON input (jansson) and json.dumps output.
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/template/tpl.h"

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) abort();
    return p;
}

value v_incref(value v) {
    switch (v.k) {
    case V_STR: v.s->rc++; break;
    case V_UNDEF: if (v.s) v.s->rc++; break;
    case V_LIST: v.l->rc++; break;
    case V_DICT: v.d->rc++; break;
    case V_NS: v.ns->rc++; break;
    case V_MACRO: v.m->rc++; break;
    case V_METHOD: v.me->rc++; break;
    case V_LOOP: v.lp->rc++; break;
    default: break;
    }
    return v;
}

static void dict_free(hdict *d) {
    for (size_t i = 0; i < d->n; i++) {
        v_decref(d->k[i]);
        v_decref(d->v[i]);
    }
    free(d->k);
    free(d->v);
    free(d);
}

void v_decref(value v) {
    switch (v.k) {
    case V_STR:
    case V_UNDEF:
        if (v.s && --v.s->rc == 0) free(v.s);
        break;
    case V_LIST:
        if (--v.l->rc == 0) {
            for (size_t i = 0; i < v.l->n; i++) v_decref(v.l->v[i]);
            free(v.l->v);
            free(v.l);
        }
        break;
    case V_DICT:
        if (--v.d->rc == 0) dict_free(v.d);
        break;
    case V_NS:
        if (--v.ns->rc == 0) {
            dict_free(v.ns->attrs);
            free(v.ns);
        }
        break;
    case V_MACRO: macro_decref(v.m); break;
    case V_METHOD:
        if (--v.me->rc == 0) {
            v_decref(v.me->self);
            free(v.me);
        }
        break;
    case V_LOOP: loop_decref(v.lp); break;
    default: break;
    }
}

static hstr *hstr_new(const char *s, size_t n) {
    hstr *h = xmalloc(sizeof *h + n + 1);
    h->rc = 1;
    h->markup = 0;
    h->len = n;
    h->ncp = (size_t)-1;
    if (n) memcpy(h->b, s, n);
    h->b[n] = 0;
    return h;
}

value v_str(const char *s, size_t n) {
    value v = {.k = V_STR};
    v.s = hstr_new(s, n);
    return v;
}

value v_strz(const char *s) { return v_str(s, strlen(s)); }

value v_str_take(sbuf *b) {
    value v = v_str(b->p ? b->p : "", b->n);
    free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
    return v;
}

value v_markup(const char *s, size_t n) {
    value v = v_str(s, n);
    v.s->markup = 1;
    return v;
}

value v_undef(const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    value v = {.k = V_UNDEF};
    v.s = hstr_new(buf, strlen(buf));
    return v;
}

size_t str_ncp(hstr *s) {
    if (s->ncp == (size_t)-1) s->ncp = u8_count(s->b, s->len);
    return s->ncp;
}

hlist *list_new(int kind, size_t cap) {
    hlist *l = xmalloc(sizeof *l);
    l->rc = 1;
    l->kind = (uint8_t)kind;
    l->consumed = 0;
    l->n = 0;
    l->cap = cap;
    l->v = cap ? xmalloc(cap * sizeof(value)) : NULL;
    return l;
}

void list_push(hlist *l, value v) {
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4;
        l->v = realloc(l->v, l->cap * sizeof(value));
        if (!l->v) abort();
    }
    l->v[l->n++] = v;
}

value v_list(hlist *l) {
    value v = {.k = V_LIST};
    v.l = l;
    return v;
}

hdict *dict_new(size_t cap) {
    hdict *d = xmalloc(sizeof *d);
    d->rc = 1;
    d->n = 0;
    d->cap = cap;
    d->k = cap ? xmalloc(cap * sizeof(value)) : NULL;
    d->v = cap ? xmalloc(cap * sizeof(value)) : NULL;
    return d;
}

value *dict_get(hdict *d, value k) {
    for (size_t i = 0; i < d->n; i++)
        if (v_eq(d->k[i], k)) return &d->v[i];
    return NULL;
}

value *dict_gets(hdict *d, const char *k) {
    size_t n = strlen(k);
    for (size_t i = 0; i < d->n; i++)
        if (d->k[i].k == V_STR && d->k[i].s->len == n && memcmp(d->k[i].s->b, k, n) == 0)
            return &d->v[i];
    return NULL;
}

void dict_set(hdict *d, value k, value v) {
    value *old = dict_get(d, k);
    if (old) {
        v_decref(*old);
        *old = v;
        v_decref(k);
        return;
    }
    if (d->n == d->cap) {
        d->cap = d->cap ? d->cap * 2 : 4;
        d->k = realloc(d->k, d->cap * sizeof(value));
        d->v = realloc(d->v, d->cap * sizeof(value));
        if (!d->k || !d->v) abort();
    }
    d->k[d->n] = k;
    d->v[d->n] = v;
    d->n++;
}

value v_dict(hdict *d) {
    value v = {.k = V_DICT};
    v.d = d;
    return v;
}

bool v_truthy(value v) {
    switch (v.k) {
    case V_UNDEF:
    case V_NONE:
    case V_MISSING: return false;
    case V_BOOL:
    case V_INT: return v.i != 0;
    case V_FLOAT: return v.f != 0.0;
    case V_STR: return v.s->len != 0;
    case V_LIST: return v.l->kind == L_GEN ? true : v.l->n != 0;
    case V_DICT: return v.d->n != 0;
    default: return true;
    }
}

static bool is_num(value v) { return v.k == V_BOOL || v.k == V_INT || v.k == V_FLOAT; }

static bool int_float_eq(int64_t i, double f) {
    if (f != floor(f) || isinf(f) || fabs(f) >= 9223372036854775808.0) return false;
    return (int64_t)f == i;
}

bool v_eq(value a, value b) {
    if (is_num(a) && is_num(b)) {
        if (a.k != V_FLOAT && b.k != V_FLOAT) return a.i == b.i;
        if (a.k == V_FLOAT && b.k == V_FLOAT) return a.f == b.f;
        return a.k == V_FLOAT ? int_float_eq(b.i, a.f) : int_float_eq(a.i, b.f);
    }
    if (a.k != b.k) return false;
    switch (a.k) {
    case V_UNDEF:
    case V_NONE: return true;
    case V_STR: return a.s->len == b.s->len && memcmp(a.s->b, b.s->b, a.s->len) == 0;
    case V_LIST: {
        if (a.l == b.l) return true;
        int ka = a.l->kind, kb = b.l->kind;
        if (ka == L_GEN || kb == L_GEN || ka == L_VALUES || kb == L_VALUES) return false;
        if ((ka == L_KEYS || ka == L_ITEMS) && ka == kb) {  // set comparison
            if (a.l->n != b.l->n) return false;
            for (size_t i = 0; i < a.l->n; i++) {
                bool found = false;
                for (size_t j = 0; j < b.l->n && !found; j++) found = v_eq(a.l->v[i], b.l->v[j]);
                if (!found) return false;
            }
            return true;
        }
        if (ka != kb || a.l->n != b.l->n) return false;
        for (size_t i = 0; i < a.l->n; i++)
            if (!v_eq(a.l->v[i], b.l->v[i])) return false;
        return true;
    }
    case V_DICT: {
        if (a.d->n != b.d->n) return false;
        for (size_t i = 0; i < a.d->n; i++) {
            value *o = dict_get(b.d, a.d->k[i]);
            if (!o || !v_eq(a.d->v[i], *o)) return false;
        }
        return true;
    }
    case V_NS: return a.ns == b.ns;
    case V_MACRO: return a.m == b.m;
    case V_FUNC: return a.i == b.i;
    case V_METHOD: return a.me == b.me;
    case V_LOOP: return a.lp == b.lp;
    default: return false;
    }
}

const char *v_typename(value v) {
    switch (v.k) {
    case V_UNDEF: return "Undefined";
    case V_NONE: return "NoneType";
    case V_BOOL: return "bool";
    case V_INT: return "int";
    case V_FLOAT: return "float";
    case V_STR: return v.s->markup ? "Markup" : "str";
    case V_LIST:
        switch (v.l->kind) {
        case L_TUPLE: return "tuple";
        case L_GEN: return "generator";
        case L_KEYS: return "dict_keys";
        case L_VALUES: return "dict_values";
        case L_ITEMS: return "dict_items";
        default: return "list";
        }
    case V_DICT: return "dict";
    case V_NS: return "Namespace";
    case V_MACRO: return "Macro";
    case V_FUNC: return "function";
    case V_METHOD: return "builtin_function_or_method";
    case V_LOOP: return "LoopContext";
    default: return "object";
    }
}

int v_cmp(value a, value b, int *res, atoll_error *e) {
    if (is_num(a) && is_num(b)) {
        if (a.k != V_FLOAT && b.k != V_FLOAT) {
            *res = a.i < b.i ? -1 : a.i > b.i;
            return 0;
        }
        double x = a.k == V_FLOAT ? a.f : (double)a.i, y = b.k == V_FLOAT ? b.f : (double)b.i;
        if (a.k != V_FLOAT && int_float_eq(a.i, b.f)) x = y;
        if (b.k != V_FLOAT && int_float_eq(b.i, a.f)) y = x;
        if (isnan(x) || isnan(y)) {
            *res = 2;  // unordered: every comparison is false
            return 0;
        }
        *res = x < y ? -1 : x > y;
        return 0;
    }
    if (a.k == V_STR && b.k == V_STR) {
        size_t n = a.s->len < b.s->len ? a.s->len : b.s->len;
        int c = memcmp(a.s->b, b.s->b, n);
        *res = c < 0 ? -1 : c > 0 ? 1 : a.s->len < b.s->len ? -1 : a.s->len > b.s->len;
        return 0;
    }
    if (a.k == V_LIST && b.k == V_LIST && a.l->kind == b.l->kind &&
        (a.l->kind == L_LIST || a.l->kind == L_TUPLE)) {
        size_t i = 0;
        while (i < a.l->n && i < b.l->n && v_eq(a.l->v[i], b.l->v[i])) i++;
        if (i < a.l->n && i < b.l->n) return v_cmp(a.l->v[i], b.l->v[i], res, e);
        *res = a.l->n < b.l->n ? -1 : a.l->n > b.l->n;
        return 0;
    }
    if (a.k == V_UNDEF || b.k == V_UNDEF) {
        value u = a.k == V_UNDEF ? a : b;
        return error_set(e, "%s", u.s ? u.s->b : "undefined value used in a comparison");
    }
    return error_set(e, "'<' not supported between instances of '%s' and '%s'", v_typename(a),
                     v_typename(b));
}

bool v_hashable(value v) {
    switch (v.k) {
    case V_LIST:
        if (v.l->kind == L_TUPLE) {
            for (size_t i = 0; i < v.l->n; i++)
                if (!v_hashable(v.l->v[i])) return false;
            return true;
        }
        return v.l->kind == L_GEN;
    case V_DICT:
    case V_NS: return false;
    default: return true;
    }
}

// ---------------------------------------------------------------- text forms

static void float_repr(double x, sbuf *b) {
    if (isnan(x)) {
        sb_puts(b, "nan");
        return;
    }
    if (isinf(x)) {
        sb_puts(b, x < 0 ? "-inf" : "inf");
        return;
    }
    if (x == 0) {
        sb_puts(b, signbit(x) ? "-0.0" : "0.0");
        return;
    }
    char buf[64];
    int p;
    for (p = 1; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*e", p - 1, x);
        if (strtod(buf, NULL) == x) break;
    }
    // buf: [-]d[.ddd]e[+-]xx
    char digits[32];
    int nd = 0;
    const char *q = buf;
    bool neg = false;
    if (*q == '-') neg = true, q++;
    while (*q && *q != 'e') {
        if (*q != '.') digits[nd++] = *q;
        q++;
    }
    int exp10 = atoi(q + 1);
    while (nd > 1 && digits[nd - 1] == '0') nd--;
    digits[nd] = 0;
    int decpt = exp10 + 1;
    if (neg) sb_putc(b, '-');
    if (decpt <= -4 || decpt > 16) {
        sb_putc(b, digits[0]);
        if (nd > 1) {
            sb_putc(b, '.');
            sb_put(b, digits + 1, (size_t)nd - 1);
        }
        sb_printf(b, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
    } else if (decpt <= 0) {
        sb_puts(b, "0.");
        for (int i = 0; i < -decpt; i++) sb_putc(b, '0');
        sb_put(b, digits, (size_t)nd);
    } else if (decpt >= nd) {
        sb_put(b, digits, (size_t)nd);
        for (int i = nd; i < decpt; i++) sb_putc(b, '0');
        sb_puts(b, ".0");
    } else {
        sb_put(b, digits, (size_t)decpt);
        sb_putc(b, '.');
        sb_put(b, digits + decpt, (size_t)(nd - decpt));
    }
}

static void str_repr(const char *s, size_t n, sbuf *b) {
    bool sq = memchr(s, '\'', n) != NULL, dq = memchr(s, '"', n) != NULL;
    char quote = sq && !dq ? '"' : '\'';
    sb_putc(b, quote);
    for (size_t i = 0; i < n;) {
        size_t st = i;
        uint32_t c = u8_next(s, n, &i);
        if (c == (uint32_t)quote || c == '\\') {
            sb_putc(b, '\\');
            sb_putc(b, (char)c);
        } else if (c == '\t') sb_puts(b, "\\t");
        else if (c == '\n') sb_puts(b, "\\n");
        else if (c == '\r') sb_puts(b, "\\r");
        else if (c < 0x20 || c == 0x7F) sb_printf(b, "\\x%02x", c);
        else if (c < 0x7F) sb_putc(b, (char)c);
        else if (uc_isprintable(c)) sb_put(b, s + st, i - st);
        else if (c <= 0xFF) sb_printf(b, "\\x%02x", c);
        else if (c <= 0xFFFF) sb_printf(b, "\\u%04x", c);
        else sb_printf(b, "\\U%08x", c);
    }
    sb_putc(b, quote);
}

static int repr_seq(value v, sbuf *b, atoll_error *e) {
    hlist *l = v.l;
    const char *open = "[", *close = "]";
    switch (l->kind) {
    case L_TUPLE: open = "(", close = ")"; break;
    case L_KEYS: open = "dict_keys([", close = "])"; break;
    case L_VALUES: open = "dict_values([", close = "])"; break;
    case L_ITEMS: open = "dict_items([", close = "])"; break;
    case L_GEN:
        return error_set(e, "printing a generator (Python prints its memory address) is not "
                            "supported: convert it with |list");
    case L_RANGE: return error_set(e, "unsupported: printing a range(); convert it with |list");
    }
    sb_puts(b, open);
    for (size_t i = 0; i < l->n; i++) {
        if (i) sb_puts(b, ", ");
        if (v_repr_into(l->v[i], b, e)) return -1;
    }
    if (l->kind == L_TUPLE && l->n == 1) sb_putc(b, ',');
    sb_puts(b, close);
    return 0;
}

static int repr_dict(hdict *d, sbuf *b, atoll_error *e) {
    sb_putc(b, '{');
    for (size_t i = 0; i < d->n; i++) {
        if (i) sb_puts(b, ", ");
        if (v_repr_into(d->k[i], b, e)) return -1;
        sb_puts(b, ": ");
        if (v_repr_into(d->v[i], b, e)) return -1;
    }
    sb_putc(b, '}');
    return 0;
}

int v_repr_into(value v, sbuf *b, atoll_error *e) {
    switch (v.k) {
    case V_UNDEF: sb_puts(b, "Undefined"); return 0;
    case V_NONE: sb_puts(b, "None"); return 0;
    case V_BOOL: sb_puts(b, v.i ? "True" : "False"); return 0;
    case V_INT: sb_printf(b, "%lld", (long long)v.i); return 0;
    case V_FLOAT: float_repr(v.f, b); return 0;
    case V_STR:
        if (v.s->markup) sb_puts(b, "Markup(");
        str_repr(v.s->b, v.s->len, b);
        if (v.s->markup) sb_puts(b, ")");
        return 0;
    case V_LIST: return repr_seq(v, b, e);
    case V_DICT: return repr_dict(v.d, b, e);
    case V_NS:
        sb_puts(b, "<Namespace ");
        if (repr_dict(v.ns->attrs, b, e)) return -1;
        sb_puts(b, ">");
        return 0;
    case V_MACRO:
        sb_puts(b, "<Macro ");
        str_repr(v.m->def->name, strlen(v.m->def->name), b);
        sb_puts(b, ">");
        return 0;
    default:
        return error_set(e, "printing a %s (Python prints its memory address) is not supported",
                         v_typename(v));
    }
}

int v_str_into(value v, sbuf *b, atoll_error *e) {
    switch (v.k) {
    case V_UNDEF:
    case V_MISSING: return 0;
    case V_STR: sb_put(b, v.s->b, v.s->len); return 0;
    default: return v_repr_into(v, b, e);
    }
}

// ---------------------------------------------------------------- JSON

value v_from_json(void *jp) {
    json_t *j = jp;
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        hdict *d = dict_new(json_object_size(j));
        const char *k;
        json_t *x;
        json_object_foreach(j, k, x) dict_set(d, v_strz(k), v_from_json(x));
        return v_dict(d);
    }
    case JSON_ARRAY: {
        hlist *l = list_new(L_LIST, json_array_size(j));
        size_t i;
        json_t *x;
        json_array_foreach(j, i, x) list_push(l, v_from_json(x));
        return v_list(l);
    }
    case JSON_STRING: return v_str(json_string_value(j), json_string_length(j));
    case JSON_INTEGER: return v_int((int64_t)json_integer_value(j));
    case JSON_REAL: return v_float(json_real_value(j));
    case JSON_TRUE: return v_bool(true);
    case JSON_FALSE: return v_bool(false);
    default: return v_none();
    }
}

static void json_str(const char *s, size_t n, bool ascii, sbuf *b) {
    sb_putc(b, '"');
    for (size_t i = 0; i < n;) {
        size_t st = i;
        uint32_t c = u8_next(s, n, &i);
        switch (c) {
        case '"': sb_puts(b, "\\\""); continue;
        case '\\': sb_puts(b, "\\\\"); continue;
        case '\n': sb_puts(b, "\\n"); continue;
        case '\r': sb_puts(b, "\\r"); continue;
        case '\t': sb_puts(b, "\\t"); continue;
        case '\b': sb_puts(b, "\\b"); continue;
        case '\f': sb_puts(b, "\\f"); continue;
        }
        if (c < 0x20 || (ascii && c >= 0x7F)) {
            if (c > 0xFFFF) {
                uint32_t v = c - 0x10000;
                sb_printf(b, "\\u%04x\\u%04x", 0xD800 | (v >> 10), 0xDC00 | (v & 0x3FF));
            } else {
                sb_printf(b, "\\u%04x", c);
            }
        } else {
            sb_put(b, s + st, i - st);
        }
    }
    sb_putc(b, '"');
}

static void json_float(double x, sbuf *b) {
    if (isnan(x)) sb_puts(b, "NaN");
    else if (isinf(x)) sb_puts(b, x < 0 ? "-Infinity" : "Infinity");
    else float_repr(x, b);
}

static void json_newline(const json_opts *o, int level, sbuf *b) {
    sb_putc(b, '\n');
    for (int i = 0; i < level; i++) sb_put(b, o->indent, o->indent_len);
}

static int json_key(value k, const json_opts *o, sbuf *b, atoll_error *e) {
    switch (k.k) {
    case V_STR: json_str(k.s->b, k.s->len, o->ensure_ascii, b); return 0;
    case V_INT: sb_printf(b, "\"%lld\"", (long long)k.i); return 0;
    case V_BOOL: sb_puts(b, k.i ? "\"true\"" : "\"false\""); return 0;
    case V_NONE: sb_puts(b, "\"null\""); return 0;
    case V_FLOAT: sb_putc(b, '"'); json_float(k.f, b); sb_putc(b, '"'); return 0;
    default:
        return error_set(e, "tojson: keys must be str, int, float, bool or None, not %s",
                         v_typename(k));
    }
}

static int json_rec(value v, const json_opts *o, int level, sbuf *b, atoll_error *e) {
    switch (v.k) {
    case V_NONE: sb_puts(b, "null"); return 0;
    case V_BOOL: sb_puts(b, v.i ? "true" : "false"); return 0;
    case V_INT: sb_printf(b, "%lld", (long long)v.i); return 0;
    case V_FLOAT: json_float(v.f, b); return 0;
    case V_STR: json_str(v.s->b, v.s->len, o->ensure_ascii, b); return 0;
    case V_LIST: {
        hlist *l = v.l;
        if (l->kind != L_LIST && l->kind != L_TUPLE)
            return error_set(e, "tojson: Object of type %s is not JSON serializable",
                             v_typename(v));
        if (l->n == 0) {
            sb_puts(b, "[]");
            return 0;
        }
        sb_putc(b, '[');
        if (o->has_indent) json_newline(o, level + 1, b);
        for (size_t i = 0; i < l->n; i++) {
            if (i) {
                sb_put(b, o->item_sep, o->item_sep_len);
                if (o->has_indent) json_newline(o, level + 1, b);
            }
            if (json_rec(l->v[i], o, level + 1, b, e)) return -1;
        }
        if (o->has_indent) json_newline(o, level, b);
        sb_putc(b, ']');
        return 0;
    }
    case V_DICT: {
        hdict *d = v.d;
        if (d->n == 0) {
            sb_puts(b, "{}");
            return 0;
        }
        size_t *ord = malloc(d->n * sizeof *ord);
        for (size_t i = 0; i < d->n; i++) ord[i] = i;
        if (o->sort_keys) {  // insertion sort: stable, with Python's ordering
            for (size_t i = 1; i < d->n; i++) {
                size_t x = ord[i], j = i;
                while (j > 0) {
                    int c;
                    if (v_cmp(d->k[ord[j - 1]], d->k[x], &c, e)) {
                        free(ord);
                        return error_prefix(e, "tojson(sort_keys=True)");
                    }
                    if (c <= 0) break;
                    ord[j] = ord[j - 1];
                    j--;
                }
                ord[j] = x;
            }
        }
        sb_putc(b, '{');
        if (o->has_indent) json_newline(o, level + 1, b);
        for (size_t i = 0; i < d->n; i++) {
            if (i) {
                sb_put(b, o->item_sep, o->item_sep_len);
                if (o->has_indent) json_newline(o, level + 1, b);
            }
            if (json_key(d->k[ord[i]], o, b, e) ||
                (sb_put(b, o->key_sep, o->key_sep_len), json_rec(d->v[ord[i]], o, level + 1, b, e))) {
                free(ord);
                return -1;
            }
        }
        free(ord);
        if (o->has_indent) json_newline(o, level, b);
        sb_putc(b, '}');
        return 0;
    }
    default:
        return error_set(e, "tojson: Object of type %s is not JSON serializable", v_typename(v));
    }
}

int v_tojson(value v, const json_opts *o, sbuf *b, atoll_error *e) {
    return json_rec(v, o, 0, b, e);
}
