// runtime/template/render.c — statements: output, if, for (jinja2's lazy
// LoopContext: loop.index/first/last/length/previtem/nextitem/cycle, loop
// filters, else, break/continue), set (names, tuples, namespace attributes,
// blocks), macros and calls, with, generation blocks; the global functions
// (raise_exception, strftime_now, namespace, dict, range) and the public
// chat_template API.
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/template/chat_template.h"
#include "runtime/template/tpl.h"

enum { R_OK = 0, R_BREAK = 1, R_CONTINUE = 2 };

struct chat_template {
    tpl_ast ast;
};

// ---------------------------------------------------------------- loops

void loop_decref(hloop *lp) {
    if (--lp->rc) return;
    v_decref(lp->items);
    v_decref(lp->cur);
    v_decref(lp->before);
    v_decref(lp->after);
    v_decref(lp->last_changed);
    free(lp);
}

void loop_finish(hloop *lp) { lp->rs = NULL; }

// next item of the source that passes the loop filter
static int fetch(hloop *lp, value *item, bool *has) {
    *has = false;
    hlist *src = lp->items.l;
    while (lp->pos < src->n) {
        value x = src->v[lp->pos++];
        if (!lp->fnode || !lp->fnode->c) {
            *item = v_incref(x);
            *has = true;
            return 0;
        }
        if (!lp->rs)
            return error_set(NULL, "x"), -1;
        rstate *rs = lp->rs;
        if (bind_target(rs, lp->tframe, lp->fnode->a, v_incref(x))) return -1;
        value t;
        if (eval(rs, lp->tframe, lp->fnode->c, &t)) return -1;
        bool ok = v_truthy(t);
        v_decref(t);
        if (ok) {
            *item = v_incref(x);
            *has = true;
            return 0;
        }
    }
    return 0;
}

static int peek(hloop *lp) {
    if (lp->has_after || lp->after_done) return 0;
    bool has;
    value x;
    if (fetch(lp, &x, &has)) return -1;
    if (has) {
        v_decref(lp->after);
        lp->after = x;
        lp->has_after = true;
    } else {
        lp->after_done = true;
    }
    return 0;
}

int loop_next(hloop *lp, value *item, bool *has) {
    if (lp->has_after) {
        *item = lp->after;
        lp->after = v_undef0();
        lp->has_after = false;
        *has = true;
    } else if (lp->after_done) {
        *has = false;
    } else if (fetch(lp, item, has)) {
        return -1;
    }
    if (!*has) return 0;
    lp->index0++;
    v_decref(lp->before);
    lp->before = lp->cur;
    lp->cur = v_incref(*item);
    return 0;
}

static int loop_length(rstate *rs, const node *at, hloop *lp, int64_t *out) {
    if (lp->length < 0) {
        if (!lp->fnode->c) {
            lp->length = (int64_t)lp->items.l->n;
        } else {
            if (!lp->rs) return tpl_fail(rs, at, "unsupported: loop.length of a finished filtered loop");
            hlist *rest = list_new(L_LIST, 0);
            for (;;) {
                bool has;
                value x;
                if (fetch(lp, &x, &has)) {
                    v_decref(v_list(rest));
                    return -1;
                }
                if (!has) break;
                list_push(rest, x);
            }
            lp->length = (int64_t)rest->n + lp->index0 + 1 + (lp->has_after ? 1 : 0);
            v_decref(lp->items);
            lp->items = v_list(rest);
            lp->pos = 0;
            lp->fnode = NULL;
        }
    }
    *out = lp->length;
    return 0;
}

int loop_attr(rstate *rs, const node *at, hloop *lp, const char *name, value *out, int *found) {
    *found = 1;
    int64_t len = 0;
    if (!strcmp(name, "index0")) *out = v_int(lp->index0);
    else if (!strcmp(name, "index")) *out = v_int(lp->index0 + 1);
    else if (!strcmp(name, "first")) *out = v_bool(lp->index0 == 0);
    else if (!strcmp(name, "depth")) *out = v_int(1);
    else if (!strcmp(name, "depth0")) *out = v_int(0);
    else if (!strcmp(name, "length") || !strcmp(name, "revindex") || !strcmp(name, "revindex0")) {
        if (loop_length(rs, at, lp, &len)) return -1;
        if (name[0] == 'l') *out = v_int(len);
        else if (!strcmp(name, "revindex")) *out = v_int(len - lp->index0);
        else *out = v_int(len - lp->index0 - 1);
    } else if (!strcmp(name, "last") || !strcmp(name, "nextitem")) {
        if (!lp->rs && !lp->has_after && !lp->after_done && lp->fnode && lp->fnode->c)
            return tpl_fail(rs, at, "unsupported: loop.%s of a finished filtered loop", name);
        if (lp->rs && peek(lp)) return -1;
        if (!lp->rs && !lp->has_after && !lp->after_done) {
            // finished loop without a filter: the source tells
            lp->after_done = lp->pos >= lp->items.l->n;
            if (!lp->after_done) {
                lp->after = v_incref(lp->items.l->v[lp->pos++]);
                lp->has_after = true;
            }
        }
        if (name[0] == 'l') *out = v_bool(!lp->has_after);
        else *out = lp->has_after ? v_incref(lp->after) : v_undef("there is no next item");
    } else if (!strcmp(name, "previtem")) {
        *out = lp->index0 > 0 ? v_incref(lp->before) : v_undef("there is no previous item");
    } else {
        *found = 0;
    }
    return 0;
}

// ---------------------------------------------------------------- assignment

int bind_target(rstate *rs, frame *f, const node *t, value v) {
    if (t->kind == E_NAME) {
        frame_set(f, t->name, v);
        return 0;
    }
    hlist *items;
    if (v.k != V_LIST && v.k != V_STR && v.k != V_DICT && v.k != V_UNDEF) {
        int rc = tpl_fail(rs, t, "cannot unpack non-iterable %s object", v_typename(v));
        v_decref(v);
        return rc;
    }
    int rc = v_iterate(rs, t, v, &items);
    v_decref(v);
    if (rc) return -1;
    if ((int)items->n != t->args.n) {
        if ((int)items->n > t->args.n)
            rc = tpl_fail(rs, t, "too many values to unpack (expected %d)", t->args.n);
        else
            rc = tpl_fail(rs, t, "not enough values to unpack (expected %d, got %d)", t->args.n,
                          (int)items->n);
        v_decref(v_list(items));
        return rc;
    }
    for (int i = 0; i < t->args.n && !rc; i++) rc = bind_target(rs, f, t->args.v[i], v_incref(items->v[i]));
    v_decref(v_list(items));
    return rc;
}

// ---------------------------------------------------------------- macros and calls

void macro_decref(hmacro *m) {
    if (--m->rc == 0) free(m);
}

int call_macro(rstate *rs, const node *at, hmacro *m, value *args, int nargs, char **kwn,
               value *kwv, int nkw, value *out) {
    const node *d = m->def;
    int np = d->args.n, ndef = d->kwvals.n;
    bool use_varargs = d->op & 1, use_kwargs = d->op & 2, use_caller = d->op & 4;
    if (nargs > np && !use_varargs)
        return tpl_fail(rs, at, "macro '%s' takes not more than %d argument(s)", d->name, np);
    if (rs->depth > 300) return tpl_fail(rs, at, "maximum recursion depth exceeded in macro '%s'", d->name);
    frame *f = frame_new(rs, m->closure, &d->sc);
    hdict *kw = dict_new(0);
    bool *set = calloc((size_t)np + 1, sizeof(bool));
    int rc = 0;
    for (int i = 0; i < nargs && i < np; i++) {
        frame_set(f, d->args.v[i]->name, v_incref(args[i]));
        set[i] = true;
    }
    value caller = v_undef("No caller defined");
    for (int k = 0; k < nkw && !rc; k++) {
        int i;
        for (i = 0; i < np; i++)
            if (!strcmp(d->args.v[i]->name, kwn[k])) break;
        if (i < np) {
            if (set[i]) rc = tpl_fail(rs, at, "macro '%s' got multiple values for argument '%s'", d->name, kwn[k]);
            frame_set(f, kwn[k], v_incref(kwv[k]));
            set[i] = true;
        } else if (!strcmp(kwn[k], "caller") && use_caller) {
            v_decref(caller);
            caller = v_incref(kwv[k]);
        } else if (use_kwargs) {
            dict_set(kw, v_strz(kwn[k]), v_incref(kwv[k]));
        } else {
            rc = tpl_fail(rs, at, "macro '%s' takes no keyword argument '%s'", d->name, kwn[k]);
        }
    }
    for (int i = 0; i < np && !rc; i++) {
        if (set[i]) continue;
        int di = i - (np - ndef);
        value v;
        if (di >= 0) {
            rs->depth++;
            rc = eval(rs, f, d->kwvals.v[di], &v);
            rs->depth--;
            if (rc) break;
        } else {
            v = v_undef("parameter '%s' was not provided", d->args.v[i]->name);
        }
        frame_set(f, d->args.v[i]->name, v);
    }
    free(set);
    if (rc) {
        v_decref(caller);
        v_decref(v_dict(kw));
        return -1;
    }
    hlist *va = list_new(L_TUPLE, 0);
    for (int i = np; i < nargs; i++) list_push(va, v_incref(args[i]));
    frame_set(f, "varargs", v_list(va));
    frame_set(f, "kwargs", v_dict(kw));
    frame_set(f, "caller", caller);
    sbuf buf = {0}, *saved = rs->out;
    rs->out = &buf;
    rs->depth += 10;
    rc = render_stmts(rs, f, &d->body);
    rs->depth -= 10;
    rs->out = saved;
    frame_release(f);
    if (rc < 0) {
        free(buf.p);
        return -1;
    }
    *out = v_str_take(&buf);
    return 0;
}

static int bind_args(rstate *rs, const node *at, const char *fname, value *args, int nargs,
                     char **kwn, value *kwv, int nkw, const char *const *names, int nnames,
                     value *slots) {
    for (int i = 0; i < nnames; i++) slots[i] = v_missing();
    if (nargs > nnames)
        return tpl_fail(rs, at, "%s() takes at most %d argument(s) (%d given)", fname, nnames, nargs);
    for (int i = 0; i < nargs; i++) slots[i] = args[i];
    for (int k = 0; k < nkw; k++) {
        int i;
        for (i = 0; i < nnames; i++)
            if (!strcmp(names[i], kwn[k])) break;
        if (i == nnames) return tpl_fail(rs, at, "%s() got an unexpected keyword argument '%s'", fname, kwn[k]);
        if (slots[i].k != V_MISSING)
            return tpl_fail(rs, at, "%s() got multiple values for argument '%s'", fname, kwn[k]);
        slots[i] = kwv[k];
    }
    return 0;
}

static int dict_from(rstate *rs, const node *at, value src, hdict *d) {
    if (src.k == V_DICT) {
        for (size_t i = 0; i < src.d->n; i++) dict_set(d, v_incref(src.d->k[i]), v_incref(src.d->v[i]));
        return 0;
    }
    hlist *items;
    if (src.k == V_UNDEF) return tpl_fail(rs, at, "%s", src.s ? src.s->b : "undefined value");
    if (v_iterate(rs, at, src, &items)) return -1;
    int rc = 0;
    for (size_t i = 0; i < items->n && !rc; i++) {
        value p = items->v[i];
        if (p.k != V_LIST || p.l->n != 2 || p.l->kind == L_GEN)
            rc = tpl_fail(rs, at, "dictionary update sequence element #%zu has the wrong length or type", i);
        else if (!v_hashable(p.l->v[0]))
            rc = tpl_fail(rs, at, "unhashable type: '%s'", v_typename(p.l->v[0]));
        else dict_set(d, v_incref(p.l->v[0]), v_incref(p.l->v[1]));
    }
    v_decref(v_list(items));
    return rc;
}

static int call_func(rstate *rs, const node *at, int fn, value *args, int nargs, char **kwn,
                     value *kwv, int nkw, value *out) {
    switch (fn) {
    case FN_RAISE: {
        if (nargs != 1 || nkw)
            return tpl_fail(rs, at, "raise_exception() takes exactly one argument");
        sbuf b = {0};
        if (to_pystr(rs, at, args[0], &b)) return -1;
        int rc = tpl_fail(rs, at, "raise_exception: %s", b.p ? b.p : "");
        free(b.p);
        return rc;
    }
    case FN_STRFTIME:
        if (nargs != 1 || nkw) return tpl_fail(rs, at, "strftime_now() takes exactly one argument");
        return strftime_now(rs, at, args[0], out);
    case FN_NAMESPACE:
    case FN_DICT: {
        if (nargs > 1)
            return tpl_fail(rs, at, "%s expected at most 1 positional argument, got %d",
                            fn == FN_DICT ? "dict" : "namespace", nargs);
        hdict *d = dict_new(0);
        if (nargs == 1 && dict_from(rs, at, args[0], d)) {
            v_decref(v_dict(d));
            return -1;
        }
        for (int k = 0; k < nkw; k++) dict_set(d, v_strz(kwn[k]), v_incref(kwv[k]));
        if (fn == FN_DICT) {
            *out = v_dict(d);
            return 0;
        }
        for (size_t i = 0; i < d->n; i++)
            if (d->k[i].k == V_STR && d->k[i].s->b[0] == '_') {
                int rc = tpl_fail(rs, at, "Chat templates cannot store underscore-prefixed attributes on a namespace, but got '%s'", d->k[i].s->b);
                v_decref(v_dict(d));
                return rc;
            }
        hns *ns = malloc(sizeof *ns);
        ns->rc = 1;
        ns->attrs = d;
        out->k = V_NS;
        out->ns = ns;
        return 0;
    }
    case FN_RANGE: {
        if (nkw) return tpl_fail(rs, at, "range() takes no keyword arguments");
        if (nargs < 1 || nargs > 3) return tpl_fail(rs, at, "range expected 1 to 3 arguments, got %d", nargs);
        int64_t a[3] = {0, 0, 1};
        for (int i = 0; i < nargs; i++) {
            if (args[i].k != V_INT && args[i].k != V_BOOL)
                return tpl_fail(rs, at, "'%s' object cannot be interpreted as an integer", v_typename(args[i]));
        }
        if (nargs == 1) a[1] = args[0].i;
        else {
            a[0] = args[0].i;
            a[1] = args[1].i;
            if (nargs == 3) a[2] = args[2].i;
        }
        if (a[2] == 0) return tpl_fail(rs, at, "range() arg 3 must not be zero");
        double cnt = a[2] > 0 ? (double)(a[1] - a[0]) / (double)a[2] : (double)(a[0] - a[1]) / (double)-a[2];
        if (cnt > 100000)
            return tpl_fail(rs, at, "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
        hlist *l = list_new(L_RANGE, 0);
        for (int64_t i = a[0]; a[2] > 0 ? i < a[1] : i > a[1]; i += a[2]) list_push(l, v_int(i));
        *out = v_list(l);
        return 0;
    }
    default: return tpl_fail(rs, at, "unsupported: the global function %s()", fn == FN_LIPSUM ? "lipsum" : fn == FN_CYCLER ? "cycler" : "joiner");
    }
    (void)bind_args;
}

int call_value(rstate *rs, frame *f, const node *at, value fn, value *args, int nargs,
               char **kwn, value *kwv, int nkw, value *out) {
    switch (fn.k) {
    case V_MACRO: return call_macro(rs, at, fn.m, args, nargs, kwn, kwv, nkw, out);
    case V_FUNC: return call_func(rs, at, (int)fn.i, args, nargs, kwn, kwv, nkw, out);
    case V_METHOD: return call_method(rs, f, at, fn.me, args, nargs, kwn, kwv, nkw, out);
    case V_UNDEF: return tpl_fail(rs, at, "%s", fn.s ? fn.s->b : "undefined value is not callable");
    default: return tpl_fail(rs, at, "'%s' object is not callable", v_typename(fn));
    }
}

// ---------------------------------------------------------------- strftime_now

int strftime_now(rstate *rs, const node *at, value fmt, value *out) {
    if (fmt.k != V_STR) return tpl_fail(rs, at, "strftime() argument 1 must be str, not %s", v_typename(fmt));
    struct tm tm;
    long usec = 0;
    const char *env = getenv("ATOLL_TEMPLATE_NOW");
    memset(&tm, 0, sizeof tm);
    if (env && *env) {
        int Y, M, D, h = 0, mi = 0, s = 0;
        if (sscanf(env, "%d-%d-%d%*[ T]%d:%d:%d", &Y, &M, &D, &h, &mi, &s) < 3)
            return tpl_fail(rs, at, "ATOLL_TEMPLATE_NOW must look like 2024-07-26T12:00:00, got '%s'", env);
        tm.tm_year = Y - 1900;
        tm.tm_mon = M - 1;
        tm.tm_mday = D;
        tm.tm_hour = h;
        tm.tm_min = mi;
        tm.tm_sec = s;
        tm.tm_isdst = -1;
        time_t t = timegm(&tm);  // normalises and fills wday/yday
        gmtime_r(&t, &tm);
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        localtime_r(&ts.tv_sec, &tm);
        usec = ts.tv_nsec / 1000;
    }
    // Python's datetime.strftime: %f microseconds, %z and %Z empty for a naive datetime
    sbuf f = {0};
    const char *p = fmt.s->b;
    for (size_t i = 0; i < fmt.s->len; i++) {
        if (p[i] == '%' && i + 1 < fmt.s->len) {
            char c = p[i + 1];
            if (c == 'f') {
                sb_printf(&f, "%06ld", usec);
                i++;
                continue;
            }
            if (c == 'z' || c == 'Z') {
                i++;
                continue;
            }
            sb_putc(&f, '%');
            sb_putc(&f, c);
            i++;
            continue;
        }
        if (p[i] == 0) {
            free(f.p);
            return tpl_fail(rs, at, "embedded null character in strftime format");
        }
        sb_putc(&f, p[i]);
    }
    char buf[4096];
    size_t n = f.n ? strftime(buf, sizeof buf, f.p, &tm) : 0;
    free(f.p);
    *out = v_str(buf, n);
    return 0;
}

// ---------------------------------------------------------------- statements

static int render_for(rstate *rs, frame *f, const node *n) {
    value it;
    if (eval(rs, f, n->b, &it)) return -1;
    hlist *items;
    int rc = v_iterate(rs, n->b, it, &items);
    v_decref(it);
    if (rc) return -1;
    hloop *lp = calloc(1, sizeof *lp);
    lp->rc = 1;
    lp->rs = rs;
    lp->items = v_list(items);
    lp->fnode = n;
    lp->tframe = n->c ? frame_new(rs, f, &n->sc3) : NULL;
    lp->index0 = -1;
    lp->length = -1;
    bool iterated = false;
    for (;;) {
        value item;
        bool has;
        if (loop_next(lp, &item, &has)) {
            rc = -1;
            break;
        }
        if (!has) break;
        iterated = true;
        frame *bf = frame_new(rs, f, &n->sc);
        if (bind_target(rs, bf, n->a, item)) {
            rc = -1;
            break;
        }
        lp->rc++;
        value lv = {.k = V_LOOP};
        lv.lp = lp;
        frame_set(bf, "loop", lv);
        rc = render_stmts(rs, bf, &n->body);
        frame_release(bf);
        if (rc < 0) break;
        if (rc == R_BREAK) {
            rc = 0;
            break;
        }
        rc = 0;
    }
    loop_finish(lp);
    loop_decref(lp);
    if (rc < 0) return -1;
    if (!iterated && n->else_.n) {
        frame *ef = frame_new(rs, f, &n->sc2);
        rc = render_stmts(rs, ef, &n->else_);
        frame_release(ef);
        if (rc < 0) return -1;
    }
    return 0;
}

static int apply_filter_chain(rstate *rs, frame *f, const node *flt, value in, value *out) {
    if (!flt) {
        *out = v_incref(in);
        return 0;
    }
    value x;
    if (flt->a) {
        if (apply_filter_chain(rs, f, flt->a, in, &x)) return -1;
    } else {
        x = v_incref(in);
    }
    value *args = calloc((size_t)flt->args.n + 1, sizeof(value)), *kwv = calloc((size_t)flt->kwvals.n + 1, sizeof(value));
    int rc = 0;
    for (int i = 0; i < flt->args.n && !rc; i++) rc = eval(rs, f, flt->args.v[i], &args[i]);
    for (int i = 0; i < flt->kwvals.n && !rc; i++) rc = eval(rs, f, flt->kwvals.v[i], &kwv[i]);
    if (!rc)
        rc = apply_filter(rs, f, flt, flt->fid, flt->name, x, args, flt->args.n, flt->kwnames, kwv,
                          flt->kwvals.n, out);
    for (int i = 0; i < flt->args.n; i++) v_decref(args[i]);
    for (int i = 0; i < flt->kwvals.n; i++) v_decref(kwv[i]);
    free(args);
    free(kwv);
    v_decref(x);
    return rc;
}

static int render_stmt(rstate *rs, frame *f, const node *n) {
    switch (n->kind) {
    case S_DATA: sb_put(rs->out, n->cval.s->b, n->cval.s->len); return 0;
    case S_OUTPUT:
        for (int i = 0; i < n->args.n; i++) {
            value v;
            rs->fold = const_foldable(n->args.v[i]);
            int rc = eval(rs, f, n->args.v[i], &v);
            rs->fold = false;
            if (rc) return -1;
            rc = to_pystr(rs, n->args.v[i], v, rs->out);
            v_decref(v);
            if (rc) return -1;
        }
        return 0;
    case S_IF: {
        value t;
        if (eval(rs, f, n->a, &t)) return -1;
        bool ok = v_truthy(t);
        v_decref(t);
        if (ok) return render_stmts(rs, f, &n->body);
        for (int i = 0; i < n->elifs.n; i++) {
            if (eval(rs, f, n->elifs.v[i]->a, &t)) return -1;
            ok = v_truthy(t);
            v_decref(t);
            if (ok) return render_stmts(rs, f, &n->elifs.v[i]->body);
        }
        return render_stmts(rs, f, &n->else_);
    }
    case S_FOR: return render_for(rs, f, n);
    case S_SET: {
        value v;
        if (eval(rs, f, n->b, &v)) return -1;
        return bind_target(rs, f, n->a, v);
    }
    case S_NSSET: {
        value ns, v;
        if (lookup(rs, f, n->name, &ns)) return -1;
        if (ns.k != V_NS) {
            v_decref(ns);
            return tpl_fail(rs, n, "cannot assign attribute on non-namespace object");
        }
        if (n->name2[0] == '_') {
            v_decref(ns);
            return tpl_fail(rs, n, "Chat templates cannot store underscore-prefixed attributes on a namespace, but got '%s'", n->name2);
        }
        if (eval(rs, f, n->b, &v)) {
            v_decref(ns);
            return -1;
        }
        dict_set(ns.ns->attrs, v_strz(n->name2), v);
        v_decref(ns);
        return 0;
    }
    case S_SETBLOCK: {
        frame *bf = frame_new(rs, f, &n->sc);
        sbuf buf = {0}, *saved = rs->out;
        rs->out = &buf;
        int rc = render_stmts(rs, bf, &n->body);
        rs->out = saved;
        if (rc < 0) {
            free(buf.p);
            return -1;
        }
        value s = v_str_take(&buf), v;
        rc = apply_filter_chain(rs, bf, n->c, s, &v);
        v_decref(s);
        frame_release(bf);
        if (rc) return -1;
        return bind_target(rs, f, n->a, v);
    }
    case S_MACRO: {
        hmacro *m = malloc(sizeof *m);
        m->rc = 1;
        m->def = n;
        m->closure = f;
        for (frame *c = f; c; c = c->parent) c->captured = true;
        value v = {.k = V_MACRO};
        v.m = m;
        frame_set(f, n->name, v);
        return 0;
    }
    case S_WITH: {
        value *vals = calloc((size_t)n->kwvals.n + 1, sizeof(value));
        int rc = 0, k;
        for (k = 0; k < n->kwvals.n && !rc; k++) rc = eval(rs, f, n->kwvals.v[k], &vals[k]);
        frame *wf = frame_new(rs, f, &n->sc);
        for (int i = 0; i < n->args.n && !rc; i++) {
            rc = bind_target(rs, wf, n->args.v[i], vals[i]);
            vals[i] = v_undef0();
        }
        for (int i = 0; i < n->kwvals.n; i++) v_decref(vals[i]);
        free(vals);
        if (!rc) rc = render_stmts(rs, wf, &n->body);
        frame_release(wf);
        return rc;
    }
    case S_SCOPE: {
        frame *sf = frame_new(rs, f, &n->sc);
        int rc = render_stmts(rs, sf, &n->body);
        frame_release(sf);
        return rc < 0 ? -1 : rc;
    }
    case S_BREAK: return R_BREAK;
    case S_CONTINUE: return R_CONTINUE;
    default: return tpl_fail(rs, n, "internal error: unexpected statement %d", n->kind);
    }
}

int render_stmts(rstate *rs, frame *f, const nlist *body) {
    for (int i = 0; i < body->n; i++) {
        int rc = render_stmt(rs, f, body->v[i]);
        if (rc) return rc;
    }
    return 0;
}

// ---------------------------------------------------------------- public API

int chat_template_parse(chat_template **t, const char *source, atoll_error *e) {
    *t = NULL;
    chat_template *ct = calloc(1, sizeof *ct);
    if (!ct) return error_set(e, "chat template: out of memory");
    if (tpl_parse(source, strlen(source), &ct->ast, e)) {
        free(ct);
        return error_prefix(e, "chat template");
    }
    *t = ct;
    return 0;
}

void chat_template_free(chat_template *t) {
    if (!t) return;
    tpl_ast_free(&t->ast);
    free(t);
}

static void add_func(hdict *g, const char *name, int fn) {
    value v = {.k = V_FUNC};
    v.i = fn;
    dict_set(g, v_strz(name), v);
}

int chat_template_render(const chat_template *t, json_t *context, char **out, size_t *len,
                         atoll_error *e) {
    *out = NULL;
    if (len) *len = 0;
    if (context && !json_is_object(context))
        return error_set(e, "chat template: the render context must be a JSON object");
    rstate rs = {0};
    rs.e = e;
    value ctx = context ? v_from_json(context) : v_dict(dict_new(0));
    rs.ctx = ctx.d;
    rs.globals = dict_new(8);
    add_func(rs.globals, "raise_exception", FN_RAISE);
    add_func(rs.globals, "strftime_now", FN_STRFTIME);
    add_func(rs.globals, "namespace", FN_NAMESPACE);
    add_func(rs.globals, "dict", FN_DICT);
    add_func(rs.globals, "range", FN_RANGE);
    add_func(rs.globals, "lipsum", FN_LIPSUM);
    add_func(rs.globals, "cycler", FN_CYCLER);
    add_func(rs.globals, "joiner", FN_JOINER);
    sbuf buf = {0};
    rs.out = &buf;
    const node *root = t->ast.root;
    frame *f = frame_new(&rs, NULL, &root->sc);
    int rc = render_stmts(&rs, f, &root->body);
    // frames may reference each other through macros: clear all, then free
    for (size_t i = 0; i < rs.nframes; i++) {
        hdict *d = rs.frames[i]->vars;
        rs.frames[i]->vars = NULL;
        v_decref(v_dict(d));
    }
    for (size_t i = 0; i < rs.nframes; i++) free(rs.frames[i]);
    free(rs.frames);
    v_decref(v_dict(rs.globals));
    v_decref(ctx);
    if (rc < 0) {
        free(buf.p);
        return error_prefix(e, "chat template");
    }
    if (len) *len = buf.n;
    *out = sb_take(&buf);
    return 0;
}
