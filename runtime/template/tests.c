// runtime/template/tests.c — jinja2's builtin tests (`x is defined`,
// `is string`, `is mapping`, `is iterable`, `is in`, `is eq`...) with Python's
// isinstance semantics (bool is a number, undefined is iterable...).
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/template/tpl.h"

enum {
    T_DEFINED, T_UNDEFINED, T_NONE, T_BOOLEAN, T_FALSE, T_TRUE, T_INTEGER, T_FLOATT, T_NUMBER,
    T_STRINGT, T_MAPPING, T_ITERABLE, T_SEQUENCE, T_CALLABLE, T_SAMEAS, T_ESCAPED, T_IN, T_EQ,
    T_NE, T_LT, T_LE, T_GT, T_GE, T_ODD, T_EVEN, T_DIVISIBLEBY, T_LOWER, T_UPPER, T_FILTER,
    T_TEST
};

static const struct {
    const char *name;
    int id;
} test_names[] = {
    {"defined", T_DEFINED}, {"undefined", T_UNDEFINED}, {"none", T_NONE},
    {"boolean", T_BOOLEAN}, {"false", T_FALSE}, {"true", T_TRUE}, {"integer", T_INTEGER},
    {"float", T_FLOATT}, {"number", T_NUMBER}, {"string", T_STRINGT}, {"mapping", T_MAPPING},
    {"iterable", T_ITERABLE}, {"sequence", T_SEQUENCE}, {"callable", T_CALLABLE},
    {"sameas", T_SAMEAS}, {"escaped", T_ESCAPED}, {"in", T_IN}, {"eq", T_EQ},
    {"equalto", T_EQ}, {"==", T_EQ}, {"ne", T_NE}, {"!=", T_NE}, {"lt", T_LT},
    {"lessthan", T_LT}, {"<", T_LT}, {"le", T_LE}, {"<=", T_LE}, {"gt", T_GT},
    {"greaterthan", T_GT}, {">", T_GT}, {"ge", T_GE}, {">=", T_GE}, {"odd", T_ODD},
    {"even", T_EVEN}, {"divisibleby", T_DIVISIBLEBY}, {"lower", T_LOWER}, {"upper", T_UPPER},
    {"filter", T_FILTER}, {"test", T_TEST},
};

int test_id(const char *name) {
    for (size_t i = 0; i < sizeof test_names / sizeof test_names[0]; i++)
        if (!strcmp(test_names[i].name, name)) return test_names[i].id;
    return -1;
}

static int cmp_test(rstate *rs, const node *at, int op, value a, value b, bool *out) {
    int c;
    if (v_cmp(a, b, &c, rs->e)) return error_prefix(rs->e, "line %d:%d", at->line, at->col);
    if (c == 2) *out = false;
    else if (op == T_LT) *out = c < 0;
    else if (op == T_LE) *out = c <= 0;
    else if (op == T_GT) *out = c > 0;
    else *out = c >= 0;
    return 0;
}

int apply_test(rstate *rs, frame *f, const node *at, int tid, const char *name, value v,
               value *args, int nargs, char **kwn, value *kwv, int nkw, bool *out) {
    (void)f;
    if (tid == -1) return tpl_fail(rs, at, "no test named '%s'", name);
    if (nkw) return tpl_fail(rs, at, "test '%s' takes no keyword arguments", name);
    (void)kwn;
    (void)kwv;
    int want = 0;
    switch (tid) {
    case T_SAMEAS: case T_IN: case T_EQ: case T_NE: case T_LT: case T_LE: case T_GT: case T_GE:
    case T_DIVISIBLEBY: want = 1; break;
    default: want = 0;
    }
    if (nargs != want)
        return tpl_fail(rs, at, "test '%s' takes %d argument(s), %d given", name, want, nargs);
    switch (tid) {
    case T_DEFINED: *out = v.k != V_UNDEF; return 0;
    case T_UNDEFINED: *out = v.k == V_UNDEF; return 0;
    case T_NONE: *out = v.k == V_NONE; return 0;
    case T_BOOLEAN: *out = v.k == V_BOOL; return 0;
    case T_FALSE: *out = v.k == V_BOOL && !v.i; return 0;
    case T_TRUE: *out = v.k == V_BOOL && v.i; return 0;
    case T_INTEGER: *out = v.k == V_INT; return 0;
    case T_FLOATT: *out = v.k == V_FLOAT; return 0;
    case T_NUMBER: *out = v.k == V_INT || v.k == V_FLOAT || v.k == V_BOOL; return 0;
    case T_STRINGT: *out = v.k == V_STR; return 0;
    case T_MAPPING: *out = v.k == V_DICT; return 0;
    case T_ITERABLE:
        *out = v.k == V_UNDEF || v.k == V_STR || v.k == V_LIST || v.k == V_DICT || v.k == V_LOOP;
        return 0;
    case T_SEQUENCE:
        *out = v.k == V_UNDEF || v.k == V_STR || v.k == V_DICT ||
               (v.k == V_LIST && v.l->kind != L_GEN);
        return 0;
    case T_CALLABLE:
        *out = v.k == V_MACRO || v.k == V_FUNC || v.k == V_METHOD || v.k == V_UNDEF || v.k == V_LOOP;
        return 0;
    case T_ESCAPED: *out = v.k == V_STR && v.s->markup; return 0;
    case T_SAMEAS: {
        value o = args[0];
        if ((v.k == V_NONE || v.k == V_BOOL) || (o.k == V_NONE || o.k == V_BOOL)) {
            *out = v.k == o.k && v.i == o.i;
            return 0;
        }
        if (v.k == V_INT && o.k == V_INT && v.i >= -5 && v.i <= 256) {
            *out = v.i == o.i;
            return 0;
        }
        if (v.k == o.k && (v.k == V_LIST || v.k == V_DICT || v.k == V_NS || v.k == V_MACRO)) {
            *out = v.k == V_LIST ? v.l == o.l : v.k == V_DICT ? v.d == o.d : v.k == V_NS ? v.ns == o.ns : v.m == o.m;
            return 0;
        }
        return tpl_fail(rs, at, "unsupported: 'sameas' on %s and %s (Python object identity)", v_typename(v), v_typename(o));
    }
    case T_IN: return contains(rs, at, v, args[0], out);
    case T_EQ: *out = v_eq(v, args[0]); return 0;
    case T_NE: *out = !v_eq(v, args[0]); return 0;
    case T_LT:
    case T_LE:
    case T_GT:
    case T_GE: return cmp_test(rs, at, tid, v, args[0], out);
    case T_ODD:
    case T_EVEN:
    case T_DIVISIBLEBY: {
        value r;
        if (binop(rs, at, OP_MOD, v, tid == T_DIVISIBLEBY ? args[0] : v_int(2), &r)) return -1;
        bool zero = r.k == V_FLOAT ? r.f == 0 : r.i == 0;
        *out = tid == T_ODD ? (r.k == V_FLOAT ? r.f == 1 : r.i == 1) : zero;
        v_decref(r);
        return 0;
    }
    case T_LOWER:
    case T_UPPER: {
        sbuf b = {0};
        if (to_pystr(rs, at, v, &b)) return -1;
        bool cased = false, ok = true;
        for (size_t i = 0; i < b.n;) {
            uint32_t c = u8_next(b.p, b.n, &i);
            if (tid == T_LOWER ? uc_isupper(c) : uc_islower(c)) ok = false;
            if (tid == T_LOWER ? uc_islower(c) : uc_isupper(c)) cased = true;
        }
        free(b.p);
        *out = ok && cased;
        return 0;
    }
    case T_FILTER:
    case T_TEST:
        *out = v.k == V_STR && (tid == T_FILTER ? filter_id(v.s->b) != -1 : test_id(v.s->b) != -1);
        return 0;
    }
    return tpl_fail(rs, at, "internal error: test '%s'", name);
}
