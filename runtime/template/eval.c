// runtime/template/eval.c — expression evaluation with Python/jinja2
// semantics: variable lookup through frames, the sandbox's getattr/getitem
// (attribute then item, undefined on a miss, errors on undefined), slicing,
// arithmetic (int vs float, floor division, modulo, overflow is an error),
// comparisons, `in`, and/or returning operands, ~, calls.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/template/tpl.h"

int tpl_fail(rstate *rs, const node *n, const char *fmt, ...) {
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n) return error_set(rs->e, "line %d:%d: %s", n->line, n->col, msg);
    return error_set(rs->e, "%s", msg);
}

// prefixes an error produced without a position
static int at_fail(rstate *rs, const node *n) {
    return error_prefix(rs->e, "line %d:%d", n->line, n->col);
}

static int undef_fail(rstate *rs, const node *n, value u) {
    return tpl_fail(rs, n, "%s", u.s ? u.s->b : "undefined value");
}

// ---------------------------------------------------------------- frames

frame *frame_new(rstate *rs, frame *parent, const scope_info *sc) {
    frame *f = calloc(1, sizeof *f);
    if (!f) abort();
    f->parent = parent;
    f->vars = dict_new(0);
    if (rs->nframes == rs->capframes) {
        rs->capframes = rs->capframes ? rs->capframes * 2 : 16;
        rs->frames = realloc(rs->frames, rs->capframes * sizeof(frame *));
        if (!rs->frames) abort();
    }
    rs->frames[rs->nframes++] = f;
    if (sc)
        for (int i = 0; i < sc->n; i++) frame_set(f, sc->undef[i], v_missing());
    return f;
}

void frame_release(frame *f) {
    if (f->captured) return;
    v_decref(v_dict(f->vars));
    f->vars = dict_new(0);
}

void frame_set(frame *f, const char *name, value v) { dict_set(f->vars, v_strz(name), v); }

int lookup(rstate *rs, frame *f, const char *name, value *out) {
    for (; f; f = f->parent) {
        value *p = dict_gets(f->vars, name);
        if (p) {
            if (p->k == V_MISSING) *out = v_undef("'%s' is undefined", name);
            else *out = v_incref(*p);
            return 0;
        }
    }
    value *p = dict_gets(rs->ctx, name);
    if (!p) p = dict_gets(rs->globals, name);
    *out = p ? v_incref(*p) : v_undef("'%s' is undefined", name);
    return 0;
}

// ---------------------------------------------------------------- attribute and item access

int get_attr(rstate *rs, const node *at, value obj, const char *name, value *out) {
    if (obj.k == V_UNDEF) return undef_fail(rs, at, obj);
    bool unsafe = false;
    int r = builtin_attr(rs, at, obj, name, out, &unsafe);
    if (r < 0) return -1;
    if (r > 0) return 0;
    if (unsafe || (name[0] == '_' && name[1] == '_')) {
        *out = v_undef("access to attribute '%s' of '%s' object is unsafe.", name, v_typename(obj));
        return 0;
    }
    if (obj.k == V_DICT) {
        value *p = dict_gets(obj.d, name);
        if (p) {
            *out = v_incref(*p);
            return 0;
        }
    } else if (obj.k == V_NS) {
        value *p = dict_gets(obj.ns->attrs, name);
        if (p) {
            *out = v_incref(*p);
            return 0;
        }
    }
    *out = v_undef("'%s object' has no attribute '%s'", v_typename(obj), name);
    return 0;
}

static bool as_index(value k, int64_t *i) {
    if (k.k == V_INT || k.k == V_BOOL) {
        *i = k.i;
        return true;
    }
    return false;
}

int get_item(rstate *rs, const node *at, value obj, value key, value *out) {
    if (obj.k == V_UNDEF) return undef_fail(rs, at, obj);
    int64_t i;
    switch (obj.k) {
    case V_DICT:
        if (v_hashable(key)) {
            value *p = dict_get(obj.d, key);
            if (p) {
                *out = v_incref(*p);
                return 0;
            }
        }
        break;
    case V_LIST:
        if ((obj.l->kind == L_LIST || obj.l->kind == L_TUPLE || obj.l->kind == L_RANGE) &&
            as_index(key, &i)) {
            int64_t n = (int64_t)obj.l->n;
            if (i < 0) i += n;
            if (i >= 0 && i < n) {
                *out = v_incref(obj.l->v[i]);
                return 0;
            }
        }
        break;
    case V_STR:
        if (as_index(key, &i)) {
            int64_t n = (int64_t)str_ncp(obj.s);
            if (i < 0) i += n;
            if (i >= 0 && i < n) {
                size_t a = u8_offset(obj.s->b, obj.s->len, (size_t)i), b = a;
                u8_next(obj.s->b, obj.s->len, &b);
                *out = v_str(obj.s->b + a, b - a);
                return 0;
            }
        }
        break;
    default: break;
    }
    if (key.k == V_STR) {
        bool unsafe = false;
        int r = builtin_attr(rs, at, obj, key.s->b, out, &unsafe);
        if (r < 0) return -1;
        if (r > 0) return 0;
        if (unsafe || (key.s->len >= 2 && key.s->b[0] == '_' && key.s->b[1] == '_' && obj.k != V_DICT)) {
            *out = v_undef("access to attribute '%s' of '%s' object is unsafe.", key.s->b,
                           v_typename(obj));
            return 0;
        }
        if (obj.k == V_NS) {
            value *p = dict_gets(obj.ns->attrs, key.s->b);
            if (p) {
                *out = v_incref(*p);
                return 0;
            }
        }
        *out = v_undef("'%s object' has no attribute '%s'", v_typename(obj), key.s->b);
        return 0;
    }
    sbuf b = {0};
    atoll_error dummy;
    if (v_repr_into(key, &b, &dummy)) sb_puts(&b, "?");
    *out = v_undef("'%s object' has no element %s", v_typename(obj), b.p ? b.p : "");
    free(b.p);
    return 0;
}

static int slice_bound(rstate *rs, const node *at, frame *f, const node *x, bool *none,
                       int64_t *v, bool *bad) {
    *none = true;
    if (!x) return 0;
    value r;
    if (eval(rs, f, x, &r)) return -1;
    if (r.k == V_NONE) {
        v_decref(r);
        return 0;
    }
    if (r.k == V_UNDEF) {
        int rc = undef_fail(rs, x, r);
        v_decref(r);
        return rc;
    }
    if (r.k != V_INT && r.k != V_BOOL) *bad = true;
    else {
        *none = false;
        *v = r.i;
    }
    v_decref(r);
    return 0;
}

// jinja2 evaluates a {{ }} whose expression is made only of literals at compile
// time (Node.as_const), where slicing goes through the sandbox's getitem and a
// failing slice gives undefined instead of raising; rs->fold marks that case.
static const char *const context_filters[] = {"map", "select", "reject", "selectattr", "rejectattr", NULL};

bool const_foldable(const node *x) {
    if (!x) return true;
    switch (x->kind) {
    case E_CONST: return true;
    case E_NAME:
    case E_CALL: return false;
    case E_FILTER:
        for (int i = 0; context_filters[i]; i++)
            if (!strcmp(x->name, context_filters[i])) return false;
        if (x->fid < 0) return false;
        break;
    case E_TEST:
        if (x->fid < 0) return false;
        break;
    default: break;
    }
    if (!const_foldable(x->a) || !const_foldable(x->b) || !const_foldable(x->c)) return false;
    for (int i = 0; i < x->args.n; i++)
        if (!const_foldable(x->args.v[i])) return false;
    for (int i = 0; i < x->kwvals.n; i++)
        if (!const_foldable(x->kwvals.v[i])) return false;
    return true;
}

static int eval_slice(rstate *rs, frame *f, const node *n, value obj, value *out) {
    bool n0, n1, n2, bad = false;
    int64_t start = 0, stop = 0, step = 1;
    if (slice_bound(rs, n, f, n->b->a, &n0, &start, &bad) ||
        slice_bound(rs, n, f, n->b->b, &n1, &stop, &bad) ||
        slice_bound(rs, n, f, n->b->c, &n2, &step, &bad))
        return -1;
    // jinja2 compiles slices to plain Python subscription (no sandbox getitem): errors raise
    if (obj.k == V_UNDEF) return undef_fail(rs, n, obj);
    bool seq = obj.k == V_STR || (obj.k == V_LIST && (obj.l->kind == L_LIST || obj.l->kind == L_TUPLE));
    if ((!seq || bad) && rs->fold) {
        *out = v_undef("'%s object' has no element slice", v_typename(obj));
        return 0;
    }
    if (obj.k == V_LIST && obj.l->kind == L_RANGE)
        return tpl_fail(rs, n, "unsupported: slicing a range()");
    if (obj.k == V_DICT) return tpl_fail(rs, n, "unhashable type: 'slice'");
    if (!seq) return tpl_fail(rs, n, "'%s' object is not subscriptable", v_typename(obj));
    if (bad) return tpl_fail(rs, n, "slice indices must be integers or None or have an __index__ method");
    if (n2) step = 1;
    if (step == 0) return tpl_fail(rs, n, "slice step cannot be zero");
    int64_t len = obj.k == V_STR ? (int64_t)str_ncp(obj.s) : (int64_t)obj.l->n;
    if (step > 0) {
        if (n0) start = 0;
        else if (start < 0 && (start += len) < 0) start = 0;
        else if (start > len) start = len;
        if (n1) stop = len;
        else if (stop < 0 && (stop += len) < 0) stop = 0;
        else if (stop > len) stop = len;
    } else {
        if (n0) start = len - 1;
        else if (start < 0 && (start += len) < 0) start = -1;
        else if (start >= len) start = len - 1;
        if (n1) stop = -1;
        else if (stop < 0 && (stop += len) < 0) stop = -1;
        else if (stop >= len) stop = len - 1;
    }
    if (obj.k == V_STR) {
        const char *s = obj.s->b;
        size_t sl = obj.s->len;
        if (step == 1) {
            if (stop <= start) *out = v_str("", 0);
            else {
                size_t a = u8_offset(s, sl, (size_t)start), b = u8_offset(s, sl, (size_t)stop);
                *out = v_str(s + a, b - a);
            }
            return 0;
        }
        size_t *offs = malloc((size_t)(len + 1) * sizeof *offs);
        size_t k = 0;
        for (size_t i = 0; i < sl;) {
            offs[k++] = i;
            u8_next(s, sl, &i);
        }
        offs[k] = sl;
        sbuf b = {0};
        for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step)
            sb_put(&b, s + offs[i], offs[i + 1] - offs[i]);
        free(offs);
        *out = v_str_take(&b);
        return 0;
    }
    hlist *l = list_new(obj.l->kind, 0);
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step)
        list_push(l, v_incref(obj.l->v[i]));
    *out = v_list(l);
    return 0;
}

// ---------------------------------------------------------------- iteration and length

int v_iterate(rstate *rs, const node *at, value v, hlist **out) {
    hlist *l = list_new(L_LIST, 0);
    switch (v.k) {
    case V_UNDEF: break;
    case V_LIST:
        if (v.l->kind == L_GEN && v.l->consumed) break;
        for (size_t i = 0; i < v.l->n; i++) list_push(l, v_incref(v.l->v[i]));
        if (v.l->kind == L_GEN) v.l->consumed = 1;
        break;
    case V_DICT:
        for (size_t i = 0; i < v.d->n; i++) list_push(l, v_incref(v.d->k[i]));
        break;
    case V_STR:
        for (size_t i = 0; i < v.s->len;) {
            size_t st = i;
            u8_next(v.s->b, v.s->len, &i);
            list_push(l, v_str(v.s->b + st, i - st));
        }
        break;
    default:
        v_decref(v_list(l));
        return tpl_fail(rs, at, "'%s' object is not iterable", v_typename(v));
    }
    *out = l;
    return 0;
}

int v_len(rstate *rs, const node *at, value v, int64_t *out) {
    switch (v.k) {
    case V_UNDEF: *out = 0; return 0;
    case V_STR: *out = (int64_t)str_ncp(v.s); return 0;
    case V_DICT: *out = (int64_t)v.d->n; return 0;
    case V_LIST:
        if (v.l->kind != L_GEN) {
            *out = (int64_t)v.l->n;
            return 0;
        }
        break;
    default: break;
    }
    return tpl_fail(rs, at, "object of type '%s' has no len()", v_typename(v));
}

int contains(rstate *rs, const node *at, value needle, value hay, bool *out) {
    *out = false;
    switch (hay.k) {
    case V_UNDEF: return 0;
    case V_STR:
        if (needle.k != V_STR)
            return tpl_fail(rs, at, "'in <string>' requires string as left operand, not %s",
                            v_typename(needle));
        *out = needle.s->len == 0 || memmem(hay.s->b, hay.s->len, needle.s->b, needle.s->len);
        return 0;
    case V_DICT:
        if (!v_hashable(needle))
            return tpl_fail(rs, at, "unhashable type: '%s'", v_typename(needle));
        *out = dict_get(hay.d, needle) != NULL;
        return 0;
    case V_LIST:
        if (hay.l->kind == L_GEN) {
            if (hay.l->consumed) return 0;
            hay.l->consumed = 1;
        }
        for (size_t i = 0; i < hay.l->n && !*out; i++) *out = v_eq(hay.l->v[i], needle);
        return 0;
    default:
        return tpl_fail(rs, at, "argument of type '%s' is not iterable", v_typename(hay));
    }
}

// ---------------------------------------------------------------- arithmetic

static bool is_num(value v) { return v.k == V_BOOL || v.k == V_INT || v.k == V_FLOAT; }
static double as_f(value v) { return v.k == V_FLOAT ? v.f : (double)v.i; }

static const char *op_sym(int op) {
    switch (op) {
    case OP_ADD: return "+";
    case OP_SUB: return "-";
    case OP_MUL: return "*";
    case OP_DIV: return "/";
    case OP_FLOORDIV: return "//";
    case OP_MOD: return "%";
    case OP_POW: return "** or pow()";
    default: return "?";
    }
}

static void float_divmod(double vx, double wx, double *fd, double *md) {
    double mod = fmod(vx, wx), div = (vx - mod) / wx;
    if (mod) {
        if ((wx < 0) != (mod < 0)) {
            mod += wx;
            div -= 1.0;
        }
    } else {
        mod = copysign(0.0, wx);
    }
    if (div) {
        *fd = floor(div);
        if (div - *fd > 0.5) *fd += 1.0;
    } else {
        *fd = copysign(0.0, vx / wx);
    }
    *md = mod;
}

value v_escape(value v) {
    sbuf in = {0}, b = {0};
    atoll_error e;
    if (v.k == V_STR && v.s->markup) return v_incref(v);
    if (v_str_into(v, &in, &e)) sb_puts(&in, "");
    for (size_t i = 0; i < in.n; i++) {
        switch (in.p[i]) {
        case '&': sb_puts(&b, "&amp;"); break;
        case '<': sb_puts(&b, "&lt;"); break;
        case '>': sb_puts(&b, "&gt;"); break;
        case '\'': sb_puts(&b, "&#39;"); break;
        case '"': sb_puts(&b, "&#34;"); break;
        default: sb_putc(&b, in.p[i]);
        }
    }
    free(in.p);
    value r = v_str_take(&b);
    r.s->markup = 1;
    return r;
}

static int repeat(rstate *rs, const node *at, value seq, int64_t n, value *out) {
    if (n < 0) n = 0;
    size_t unit = seq.k == V_STR ? seq.s->len : seq.l->n;
    if (unit && (uint64_t)n > (256u << 20) / unit)
        return tpl_fail(rs, at, "unsupported: repetition result larger than 256 MiB");
    if (seq.k == V_STR) {
        sbuf b = {0};
        for (int64_t i = 0; i < n; i++) sb_put(&b, seq.s->b, seq.s->len);
        *out = v_str_take(&b);
        if (seq.s->markup) out->s->markup = 1;
        return 0;
    }
    hlist *l = list_new(seq.l->kind, 0);
    for (int64_t i = 0; i < n; i++)
        for (size_t j = 0; j < seq.l->n; j++) list_push(l, v_incref(seq.l->v[j]));
    *out = v_list(l);
    return 0;
}

int binop(rstate *rs, const node *at, int op, value a, value b, value *out) {
    if (a.k == V_UNDEF) return undef_fail(rs, at, a);
    if (b.k == V_UNDEF) return undef_fail(rs, at, b);
    if (is_num(a) && is_num(b)) {
        bool ints = a.k != V_FLOAT && b.k != V_FLOAT;
        if (ints) {
            int64_t x = a.i, y = b.i, r;
            switch (op) {
            case OP_ADD:
                if (__builtin_add_overflow(x, y, &r)) goto overflow;
                *out = v_int(r);
                return 0;
            case OP_SUB:
                if (__builtin_sub_overflow(x, y, &r)) goto overflow;
                *out = v_int(r);
                return 0;
            case OP_MUL:
                if (__builtin_mul_overflow(x, y, &r)) goto overflow;
                *out = v_int(r);
                return 0;
            case OP_DIV:
                if (y == 0) return tpl_fail(rs, at, "division by zero");
                *out = v_float((double)x / (double)y);
                return 0;
            case OP_FLOORDIV:
            case OP_MOD: {
                if (y == 0)
                    return tpl_fail(rs, at, "integer %s by zero",
                                    op == OP_MOD ? "modulo" : "division or modulo");
                if (x == INT64_MIN && y == -1) goto overflow;
                int64_t q = x / y, m = x % y;
                if (m != 0 && ((m < 0) != (y < 0))) {
                    q -= 1;
                    m += y;
                }
                *out = v_int(op == OP_MOD ? m : q);
                return 0;
            }
            case OP_POW:
                if (y < 0) break;  // float result
                r = 1;
                for (int64_t i = 0; i < y; i++) {
                    if (__builtin_mul_overflow(r, x, &r)) goto overflow;
                    if (r == 0 || r == 1) break;
                    if (r == -1) {
                        r = ((y - i - 1) % 2 == 0) ? -1 : 1;
                        break;
                    }
                }
                *out = v_int(r);
                return 0;
            }
        }
        double x = as_f(a), y = as_f(b), fd, md;
        switch (op) {
        case OP_ADD: *out = v_float(x + y); return 0;
        case OP_SUB: *out = v_float(x - y); return 0;
        case OP_MUL: *out = v_float(x * y); return 0;
        case OP_DIV:
            if (y == 0) return tpl_fail(rs, at, "float division by zero");
            *out = v_float(x / y);
            return 0;
        case OP_FLOORDIV:
        case OP_MOD:
            if (y == 0) return tpl_fail(rs, at, "float %s by zero", op == OP_MOD ? "modulo" : "floor division");
            float_divmod(x, y, &fd, &md);
            *out = v_float(op == OP_MOD ? md : fd);
            return 0;
        case OP_POW:
            if (x == 0 && y < 0)
                return tpl_fail(rs, at, "0.0 cannot be raised to a negative power");
            if (x < 0 && y != floor(y) && isfinite(y))
                return tpl_fail(rs, at, "unsupported: a negative number raised to a fractional power (complex result)");
            *out = v_float(pow(x, y));
            if (isinf(out->f) && isfinite(x) && isfinite(y))
                return tpl_fail(rs, at, "numerical result out of range");
            return 0;
        }
    }
    if (op == OP_ADD && a.k == V_STR && b.k == V_STR) {
        if (a.s->markup || b.s->markup) {
            value ea = v_escape(a), eb = v_escape(b);
            sbuf s = {0};
            sb_put(&s, ea.s->b, ea.s->len);
            sb_put(&s, eb.s->b, eb.s->len);
            v_decref(ea);
            v_decref(eb);
            *out = v_str_take(&s);
            out->s->markup = 1;
            return 0;
        }
        sbuf s = {0};
        sb_put(&s, a.s->b, a.s->len);
        sb_put(&s, b.s->b, b.s->len);
        *out = v_str_take(&s);
        return 0;
    }
    if (op == OP_ADD && a.k == V_LIST && b.k == V_LIST && a.l->kind == b.l->kind &&
        (a.l->kind == L_LIST || a.l->kind == L_TUPLE)) {
        hlist *l = list_new(a.l->kind, a.l->n + b.l->n);
        for (size_t i = 0; i < a.l->n; i++) list_push(l, v_incref(a.l->v[i]));
        for (size_t i = 0; i < b.l->n; i++) list_push(l, v_incref(b.l->v[i]));
        *out = v_list(l);
        return 0;
    }
    if (op == OP_MUL) {
        value seq = a, cnt = b;
        if (a.k == V_INT || a.k == V_BOOL) seq = b, cnt = a;
        if ((cnt.k == V_INT || cnt.k == V_BOOL) &&
            (seq.k == V_STR || (seq.k == V_LIST && (seq.l->kind == L_LIST || seq.l->kind == L_TUPLE))))
            return repeat(rs, at, seq, cnt.i, out);
    }
    if (op == OP_MOD && a.k == V_STR)
        return tpl_fail(rs, at, "unsupported: printf-style string formatting with %%");
    return tpl_fail(rs, at, "unsupported operand type(s) for %s: '%s' and '%s'", op_sym(op),
                    v_typename(a), v_typename(b));
overflow:
    return tpl_fail(rs, at, "unsupported: integer result beyond 64 bits");
}

int to_pystr(rstate *rs, const node *at, value v, sbuf *b) {
    if (v_str_into(v, b, rs->e)) return at_fail(rs, at);
    return 0;
}

// ---------------------------------------------------------------- expressions

static int eval_args(rstate *rs, frame *f, const node *n, value **args, value **kwv) {
    *args = calloc((size_t)n->args.n + 1, sizeof(value));
    *kwv = calloc((size_t)n->kwvals.n + 1, sizeof(value));
    for (int i = 0; i < n->args.n; i++)
        if (eval(rs, f, n->args.v[i], &(*args)[i])) return -1;
    for (int i = 0; i < n->kwvals.n; i++)
        if (eval(rs, f, n->kwvals.v[i], &(*kwv)[i])) return -1;
    return 0;
}

static void free_args(const node *n, value *args, value *kwv) {
    if (args)
        for (int i = 0; i < n->args.n; i++) v_decref(args[i]);
    if (kwv)
        for (int i = 0; i < n->kwvals.n; i++) v_decref(kwv[i]);
    free(args);
    free(kwv);
}

static int compare(rstate *rs, const node *at, int op, value a, value b, bool *res) {
    int c;
    switch (op) {
    case OP_EQ: *res = v_eq(a, b); return 0;
    case OP_NE: *res = !v_eq(a, b); return 0;
    case OP_IN: return contains(rs, at, a, b, res);
    case OP_NOTIN:
        if (contains(rs, at, a, b, res)) return -1;
        *res = !*res;
        return 0;
    }
    if (v_cmp(a, b, &c, rs->e)) return at_fail(rs, at);
    if (c == 2) *res = false;
    else if (op == OP_LT) *res = c < 0;
    else if (op == OP_LTEQ) *res = c <= 0;
    else if (op == OP_GT) *res = c > 0;
    else *res = c >= 0;
    return 0;
}

int eval(rstate *rs, frame *f, const node *n, value *out) {
    value a = v_undef0(), b = v_undef0();
    int rc = 0;
    if (++rs->depth > 400) {
        rs->depth--;
        return tpl_fail(rs, n, "maximum recursion depth exceeded");
    }
    switch (n->kind) {
    case E_CONST: *out = v_incref(n->cval); break;
    case E_NAME: rc = lookup(rs, f, n->name, out); break;
    case E_GETATTR:
        if (!(rc = eval(rs, f, n->a, &a))) rc = get_attr(rs, n, a, n->name, out);
        break;
    case E_GETITEM:
        if ((rc = eval(rs, f, n->a, &a))) break;
        if (n->b->kind == E_SLICE) {
            rc = eval_slice(rs, f, n, a, out);
            break;
        }
        if (!(rc = eval(rs, f, n->b, &b))) rc = get_item(rs, n, a, b, out);
        break;
    case E_CALL: {
        value *args = NULL, *kwv = NULL;
        if (!(rc = eval(rs, f, n->a, &a)) && !(rc = eval_args(rs, f, n, &args, &kwv)))
            rc = call_value(rs, f, n, a, args, n->args.n, n->kwnames, kwv, n->kwvals.n, out);
        free_args(n, args, kwv);
        break;
    }
    case E_FILTER:
    case E_TEST: {
        value *args = NULL, *kwv = NULL;
        if (!(rc = eval(rs, f, n->a, &a)) && !(rc = eval_args(rs, f, n, &args, &kwv))) {
            if (n->kind == E_FILTER) {
                rc = apply_filter(rs, f, n, n->fid, n->name, a, args, n->args.n, n->kwnames, kwv,
                                  n->kwvals.n, out);
            } else {
                bool r = false;
                rc = apply_test(rs, f, n, n->fid, n->name, a, args, n->args.n, n->kwnames, kwv,
                                n->kwvals.n, &r);
                if (!rc) *out = v_bool(r);
            }
        }
        free_args(n, args, kwv);
        break;
    }
    case E_UNARY:
        if ((rc = eval(rs, f, n->a, &a))) break;
        if (n->op == OP_NOT) *out = v_bool(!v_truthy(a));
        else if (a.k == V_UNDEF) rc = undef_fail(rs, n, a);
        else if (a.k == V_INT || a.k == V_BOOL) {
            if (n->op == OP_NEG && a.i == INT64_MIN) rc = tpl_fail(rs, n, "unsupported: integer result beyond 64 bits");
            else *out = v_int(n->op == OP_NEG ? -a.i : a.i);
        } else if (a.k == V_FLOAT) *out = v_float(n->op == OP_NEG ? -a.f : a.f);
        else rc = tpl_fail(rs, n, "bad operand type for unary %s: '%s'", n->op == OP_NEG ? "-" : "+", v_typename(a));
        break;
    case E_BIN:
        if (!(rc = eval(rs, f, n->a, &a)) && !(rc = eval(rs, f, n->b, &b)))
            rc = binop(rs, n, n->op, a, b, out);
        break;
    case E_CMP: {
        if ((rc = eval(rs, f, n->a, &a))) break;
        bool res = true;
        for (int i = 0; i < n->nops && res; i++) {
            if ((rc = eval(rs, f, n->args.v[i], &b))) break;
            if ((rc = compare(rs, n, n->op_list[i], a, b, &res))) break;
            v_decref(a);
            a = b;
            b = v_undef0();
        }
        if (!rc) *out = v_bool(res);
        break;
    }
    case E_AND:
    case E_OR:
        if ((rc = eval(rs, f, n->a, &a))) break;
        if (v_truthy(a) == (n->kind == E_OR)) {
            *out = a;
            a = v_undef0();
        } else {
            rc = eval(rs, f, n->b, out);
        }
        break;
    case E_COND:
        if ((rc = eval(rs, f, n->a, &a))) break;
        if (v_truthy(a)) rc = eval(rs, f, n->b, out);
        else if (n->c) rc = eval(rs, f, n->c, out);
        else
            *out = v_undef("the inline if-expression on line %d evaluated to false and no else "
                           "section was defined.", n->line);
        break;
    case E_CONCAT: {
        sbuf s = {0};
        for (int i = 0; i < n->args.n && !rc; i++) {
            value x;
            if ((rc = eval(rs, f, n->args.v[i], &x))) break;
            rc = to_pystr(rs, n, x, &s);
            v_decref(x);
        }
        if (rc) free(s.p);
        else *out = v_str_take(&s);
        break;
    }
    case E_LIST:
    case E_TUPLE: {
        hlist *l = list_new(n->kind == E_LIST ? L_LIST : L_TUPLE, (size_t)n->args.n);
        for (int i = 0; i < n->args.n && !rc; i++) {
            value x;
            if (!(rc = eval(rs, f, n->args.v[i], &x))) list_push(l, x);
        }
        if (rc) v_decref(v_list(l));
        else *out = v_list(l);
        break;
    }
    case E_DICT: {
        hdict *d = dict_new((size_t)n->args.n);
        for (int i = 0; i < n->args.n && !rc; i++) {
            value k, v;
            if ((rc = eval(rs, f, n->args.v[i], &k))) break;
            if (!v_hashable(k)) {
                rc = tpl_fail(rs, n->args.v[i], "unhashable type: '%s'", v_typename(k));
                v_decref(k);
                break;
            }
            if ((rc = eval(rs, f, n->kwvals.v[i], &v))) {
                v_decref(k);
                break;
            }
            dict_set(d, k, v);
        }
        if (rc) v_decref(v_dict(d));
        else *out = v_dict(d);
        break;
    }
    default: rc = tpl_fail(rs, n, "internal error: unexpected node %d in an expression", n->kind);
    }
    v_decref(a);
    v_decref(b);
    rs->depth--;
    return rc;
}
