// runtime/template/parser.c — builds the AST from the token stream with
// jinja2's grammar and operator precedence (parse_tuple, condexpr, or, and,
// not, compare, + -, ~, * / // %, **, unary, postfix, filters and tests),
// the statements the subset supports, and errors naming unsupported tags,
// filters and tests with their line:column.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/template/tpl.h"

typedef struct {
    token *t;
    size_t nt, i;
    tpl_ast *ast;
    atoll_error *e;
    int loop_depth;
    int depth;  // expression / statement nesting
} parser;

#define MAX_DEPTH 200

static token *cur(parser *P) { return &P->t[P->i]; }
static token *look(parser *P) { return &P->t[P->i + 1 < P->nt ? P->i + 1 : P->i]; }
static void adv(parser *P) {
    if (P->i + 1 < P->nt) P->i++;
}

static const char *describe(token *t) {
    static char buf[96];
    switch (t->type) {
    case T_DATA: return "template data";
    case T_VAR_BEGIN: return "'{{'";
    case T_VAR_END: return "end of print statement '}}'";
    case T_BLOCK_BEGIN: return "'{%'";
    case T_BLOCK_END: return "end of statement block '%}'";
    case T_NAME: snprintf(buf, sizeof buf, "'%.80s'", t->s); return buf;
    case T_STRING: return "string";
    case T_INT: return "integer";
    case T_FLOAT: return "float";
    case T_EOF: return "end of template";
    default: {
        static const char *ops[] = {"+", "-", "/", "//", "*", "%", "**", "~", "[", "]", "(", ")",
                                    "{", "}", "==", "!=", ">", ">=", "<", "<=", "=", ".", ":",
                                    "|", ",", ";"};
        snprintf(buf, sizeof buf, "'%s'", ops[t->op]);
        return buf;
    }
    }
}

static int failt(parser *P, token *t, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int failt(parser *P, token *t, const char *fmt, ...) {
    char msg[800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return error_set(P->e, "line %d:%d: %s", t->line, t->col, msg);
}

static bool is_op(parser *P, int op) { return cur(P)->type == T_OP && cur(P)->op == op; }
static bool is_name(parser *P, const char *n) {
    return cur(P)->type == T_NAME && strcmp(cur(P)->s, n) == 0;
}
static bool skip_op(parser *P, int op) {
    if (!is_op(P, op)) return false;
    adv(P);
    return true;
}
static bool skip_name(parser *P, const char *n) {
    if (!is_name(P, n)) return false;
    adv(P);
    return true;
}
static int expect_op(parser *P, int op, const char *what) {
    if (skip_op(P, op)) return 0;
    return failt(P, cur(P), "expected '%s', got %s", what, describe(cur(P)));
}
static int expect_type(parser *P, int type, const char *what) {
    if (cur(P)->type == type) {
        adv(P);
        return 0;
    }
    if (cur(P)->type == T_EOF)
        return failt(P, cur(P), "unexpected end of template, expected %s", what);
    return failt(P, cur(P), "expected %s, got %s", what, describe(cur(P)));
}

static char *sdup(const char *s) {
    char *p = strdup(s);
    if (!p) abort();
    return p;
}

static node *nn(parser *P, int kind, token *at) {
    node *n = calloc(1, sizeof *n);
    if (!n) abort();
    n->kind = kind;
    n->line = at->line;
    n->col = at->col;
    n->fid = -1;
    tpl_ast *a = P->ast;
    if (a->nallocs == a->capallocs) {
        a->capallocs = a->capallocs ? a->capallocs * 2 : 64;
        a->allocs = realloc(a->allocs, a->capallocs * sizeof(void *));
        if (!a->allocs) abort();
    }
    a->allocs[a->nallocs++] = n;
    return n;
}

static void nl_push(nlist *l, node *n) {
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4;
        l->v = realloc(l->v, (size_t)l->cap * sizeof(node *));
        if (!l->v) abort();
    }
    l->v[l->n++] = n;
}

static node *parse_expression(parser *P, bool with_condexpr);
static node *parse_tuple(parser *P, int mode, const char *extra_end, bool explicit_parens);
static node *parse_unary(parser *P, bool with_filter);
static node *parse_primary(parser *P);
static node *parse_postfix(parser *P, node *n);
static node *parse_filter(parser *P, node *n, bool start_inline);
static int subparse(parser *P, nlist *body, const char *const *ends);

// ------------------------------------------------------------- expressions

static int parse_call_args(parser *P, node *n) {
    token *open = cur(P);
    if (expect_op(P, OP_LPAREN, "(")) return -1;
    bool require_comma = false;
    int cap = 0;
    while (!is_op(P, OP_RPAREN)) {
        if (require_comma) {
            if (expect_op(P, OP_COMMA, ",")) return -1;
            if (is_op(P, OP_RPAREN)) break;
        }
        if (is_op(P, OP_MUL) || is_op(P, OP_POW))
            return failt(P, cur(P), "unsupported: *args / **kwargs in a call");
        if (cur(P)->type == T_NAME && look(P)->type == T_OP && look(P)->op == OP_ASSIGN) {
            char *key = sdup(cur(P)->s);
            adv(P);
            adv(P);
            node *v = parse_expression(P, true);
            if (!v) {
                free(key);
                return -1;
            }
            if (n->kwvals.n == cap) {
                cap = cap ? cap * 2 : 4;
                n->kwnames = realloc(n->kwnames, (size_t)cap * sizeof(char *));
            }
            n->kwnames[n->kwvals.n] = key;
            nl_push(&n->kwvals, v);
        } else {
            if (n->kwvals.n)
                return failt(P, open, "invalid syntax for function call expression "
                                      "(positional argument after keyword argument)");
            node *v = parse_expression(P, true);
            if (!v) return -1;
            nl_push(&n->args, v);
        }
        require_comma = true;
    }
    return expect_op(P, OP_RPAREN, ")");
}

static node *parse_call(parser *P, node *callee) {
    node *n = nn(P, E_CALL, cur(P));
    n->a = callee;
    n->line = callee->line;  // errors point at the start of the call
    n->col = callee->col;
    if (parse_call_args(P, n)) return NULL;
    return n;
}

static char *dotted_name(parser *P) {
    if (cur(P)->type != T_NAME) {
        failt(P, cur(P), "expected a name, got %s", describe(cur(P)));
        return NULL;
    }
    sbuf b = {0};
    sb_puts(&b, cur(P)->s);
    adv(P);
    while (is_op(P, OP_DOT)) {
        adv(P);
        if (cur(P)->type != T_NAME) {
            free(b.p);
            failt(P, cur(P), "expected a name, got %s", describe(cur(P)));
            return NULL;
        }
        sb_putc(&b, '.');
        sb_puts(&b, cur(P)->s);
        adv(P);
    }
    return sb_take(&b);
}

static node *parse_filter(parser *P, node *n, bool start_inline) {
    while (is_op(P, OP_PIPE) || start_inline) {
        if (!start_inline) adv(P);
        token *at = cur(P);
        char *name = dotted_name(P);
        if (!name) return NULL;
        node *f = nn(P, E_FILTER, at);
        f->name = name;
        f->a = n;
        f->fid = filter_id(name);
        if (is_op(P, OP_LPAREN) && parse_call_args(P, f)) return NULL;
        n = f;
        start_inline = false;
    }
    return n;
}

static node *parse_test(parser *P, node *n) {
    token *at = cur(P);
    adv(P);  // 'is'
    bool negated = skip_name(P, "not");
    token *nt = cur(P);
    char *name = dotted_name(P);
    if (!name) return NULL;
    node *t = nn(P, E_TEST, nt);
    t->name = name;
    t->a = n;
    t->fid = test_id(name);
    token *c = cur(P);
    if (is_op(P, OP_LPAREN)) {
        if (parse_call_args(P, t)) return NULL;
    } else if ((c->type == T_NAME || c->type == T_STRING || c->type == T_INT ||
                c->type == T_FLOAT || (c->type == T_OP && (c->op == OP_LPAREN ||
                                                           c->op == OP_LBRACKET ||
                                                           c->op == OP_LBRACE))) &&
               !(c->type == T_NAME && (!strcmp(c->s, "else") || !strcmp(c->s, "or") ||
                                       !strcmp(c->s, "and")))) {
        if (c->type == T_NAME && !strcmp(c->s, "is")) {
            failt(P, c, "you cannot chain multiple tests with 'is'");
            return NULL;
        }
        node *arg = parse_primary(P);
        if (!arg) return NULL;
        arg = parse_postfix(P, arg);
        if (!arg) return NULL;
        nl_push(&t->args, arg);
    }
    if (negated) {
        node *nt2 = nn(P, E_UNARY, at);
        nt2->op = OP_NOT;
        nt2->a = t;
        return nt2;
    }
    return t;
}

static node *parse_filter_expr(parser *P, node *n) {
    for (;;) {
        if (!n) return NULL;
        if (is_op(P, OP_PIPE)) n = parse_filter(P, n, false);
        else if (is_name(P, "is")) n = parse_test(P, n);
        else if (is_op(P, OP_LPAREN)) n = parse_call(P, n);
        else return n;
    }
}

static node *parse_subscribed(parser *P) {
    token *at = cur(P);
    node *args[3] = {NULL, NULL, NULL};
    if (is_op(P, OP_COLON)) {
        adv(P);
    } else {
        node *n = parse_expression(P, true);
        if (!n) return NULL;
        if (!is_op(P, OP_COLON)) return n;
        adv(P);
        args[0] = n;
    }
    if (is_op(P, OP_COLON)) {
    } else if (!is_op(P, OP_RBRACKET) && !is_op(P, OP_COMMA)) {
        if (!(args[1] = parse_expression(P, true))) return NULL;
    }
    if (is_op(P, OP_COLON)) {
        adv(P);
        if (!is_op(P, OP_RBRACKET) && !is_op(P, OP_COMMA))
            if (!(args[2] = parse_expression(P, true))) return NULL;
    }
    node *s = nn(P, E_SLICE, at);
    s->a = args[0];
    s->b = args[1];
    s->c = args[2];
    return s;
}

static node *parse_postfix(parser *P, node *n) {
    for (;;) {
        if (!n) return NULL;
        token *at = cur(P);
        if (is_op(P, OP_DOT)) {
            adv(P);
            token *a = cur(P);
            if (a->type == T_NAME) {
                node *g = nn(P, E_GETATTR, at);
                g->a = n;
                g->name = sdup(a->s);
                adv(P);
                n = g;
            } else if (a->type == T_INT) {
                node *g = nn(P, E_GETITEM, at);
                g->a = n;
                g->b = nn(P, E_CONST, a);
                g->b->cval = v_int(a->ival);
                adv(P);
                n = g;
            } else {
                failt(P, a, "expected name or number after '.'");
                return NULL;
            }
        } else if (is_op(P, OP_LBRACKET)) {
            adv(P);
            nlist items = {0};
            while (!is_op(P, OP_RBRACKET)) {
                if (items.n && expect_op(P, OP_COMMA, ",")) {
                    free(items.v);
                    return NULL;
                }
                node *s = parse_subscribed(P);
                if (!s) {
                    free(items.v);
                    return NULL;
                }
                nl_push(&items, s);
            }
            adv(P);
            node *g = nn(P, E_GETITEM, at);
            g->a = n;
            if (items.n == 1) {
                g->b = items.v[0];
                free(items.v);
            } else {
                for (int i = 0; i < items.n; i++)
                    if (items.v[i]->kind == E_SLICE) {
                        free(items.v);
                        failt(P, at, "unsupported: multi-dimensional slicing");
                        return NULL;
                    }
                node *t = nn(P, E_TUPLE, at);
                t->args = items;
                g->b = t;
            }
            n = g;
        } else if (is_op(P, OP_LPAREN)) {
            n = parse_call(P, n);
        } else {
            return n;
        }
    }
}

static node *parse_list_or_dict(parser *P, bool dict) {
    token *at = cur(P);
    adv(P);
    node *n = nn(P, dict ? E_DICT : E_LIST, at);
    int close = dict ? OP_RBRACE : OP_RBRACKET;
    while (!is_op(P, close)) {
        if (n->args.n && expect_op(P, OP_COMMA, ",")) return NULL;
        if (is_op(P, close)) break;
        node *k = parse_expression(P, true);
        if (!k) return NULL;
        nl_push(&n->args, k);
        if (dict) {
            if (expect_op(P, OP_COLON, ":")) return NULL;
            node *v = parse_expression(P, true);
            if (!v) return NULL;
            nl_push(&n->kwvals, v);
        }
    }
    adv(P);
    return n;
}

static node *parse_primary(parser *P) {
    token *t = cur(P);
    if (++P->depth > MAX_DEPTH) {
        failt(P, t, "expression nested too deeply");
        return NULL;
    }
    node *n = NULL;
    if (t->type == T_NAME) {
        n = nn(P, E_CONST, t);
        if (!strcmp(t->s, "true") || !strcmp(t->s, "True")) n->cval = v_bool(true);
        else if (!strcmp(t->s, "false") || !strcmp(t->s, "False")) n->cval = v_bool(false);
        else if (!strcmp(t->s, "none") || !strcmp(t->s, "None")) n->cval = v_none();
        else {
            n->kind = E_NAME;
            n->name = sdup(t->s);
        }
        adv(P);
    } else if (t->type == T_STRING) {
        sbuf b = {0};
        while (cur(P)->type == T_STRING) {
            sb_put(&b, cur(P)->s, cur(P)->len);
            adv(P);
        }
        n = nn(P, E_CONST, t);
        n->cval = v_str_take(&b);
    } else if (t->type == T_INT || t->type == T_FLOAT) {
        n = nn(P, E_CONST, t);
        n->cval = t->type == T_INT ? v_int(t->ival) : v_float(t->fval);
        adv(P);
    } else if (is_op(P, OP_LPAREN)) {
        adv(P);
        n = parse_tuple(P, 1, NULL, true);
        if (n && expect_op(P, OP_RPAREN, ")")) n = NULL;
    } else if (is_op(P, OP_LBRACKET)) {
        n = parse_list_or_dict(P, false);
    } else if (is_op(P, OP_LBRACE)) {
        n = parse_list_or_dict(P, true);
    } else if (t->type == T_EOF) {
        failt(P, t, "unexpected end of template, expected an expression");
    } else {
        failt(P, t, "unexpected %s", describe(t));
    }
    P->depth--;
    return n;
}

static node *parse_unary(parser *P, bool with_filter) {
    token *at = cur(P);
    node *n;
    if (is_op(P, OP_SUB) || is_op(P, OP_ADD)) {
        int op = is_op(P, OP_SUB) ? OP_NEG : OP_POS;
        adv(P);
        if (++P->depth > MAX_DEPTH) {
            failt(P, at, "expression nested too deeply");
            return NULL;
        }
        node *x = parse_unary(P, false);
        P->depth--;
        if (!x) return NULL;
        n = nn(P, E_UNARY, at);
        n->op = op;
        n->a = x;
    } else {
        n = parse_primary(P);
    }
    n = parse_postfix(P, n);
    if (with_filter) n = parse_filter_expr(P, n);
    return n;
}

static node *binary(parser *P, token *at, int kind, int op, node *a, node *b) {
    node *n = nn(P, kind, at);
    n->op = op;
    n->a = a;
    n->b = b;
    return n;
}

static node *parse_pow(parser *P) {
    token *at = cur(P);
    node *l = parse_unary(P, true);
    while (l && is_op(P, OP_POW)) {
        adv(P);
        node *r = parse_unary(P, true);
        if (!r) return NULL;
        l = binary(P, at, E_BIN, OP_POW, l, r);
        at = cur(P);
    }
    return l;
}

static node *parse_math2(parser *P) {
    token *at = cur(P);
    node *l = parse_pow(P);
    while (l && cur(P)->type == T_OP &&
           (cur(P)->op == OP_MUL || cur(P)->op == OP_DIV || cur(P)->op == OP_FLOORDIV ||
            cur(P)->op == OP_MOD)) {
        int op = cur(P)->op;
        adv(P);
        node *r = parse_pow(P);
        if (!r) return NULL;
        l = binary(P, at, E_BIN, op, l, r);
        at = cur(P);
    }
    return l;
}

static node *parse_concat(parser *P) {
    token *at = cur(P);
    node *first = parse_math2(P);
    if (!first || !is_op(P, OP_TILDE)) return first;
    node *n = nn(P, E_CONCAT, at);
    nl_push(&n->args, first);
    while (skip_op(P, OP_TILDE)) {
        node *x = parse_math2(P);
        if (!x) return NULL;
        nl_push(&n->args, x);
    }
    return n;
}

static node *parse_math1(parser *P) {
    token *at = cur(P);
    node *l = parse_concat(P);
    while (l && cur(P)->type == T_OP && (cur(P)->op == OP_ADD || cur(P)->op == OP_SUB)) {
        int op = cur(P)->op;
        adv(P);
        node *r = parse_concat(P);
        if (!r) return NULL;
        l = binary(P, at, E_BIN, op, l, r);
        at = cur(P);
    }
    return l;
}

static node *parse_compare(parser *P) {
    token *at = cur(P);
    node *e = parse_math1(P);
    if (!e) return NULL;
    node *n = NULL;
    for (;;) {
        int op = -1;
        token *t = cur(P);
        if (t->type == T_OP && (t->op == OP_EQ || t->op == OP_NE || t->op == OP_LT ||
                                t->op == OP_LTEQ || t->op == OP_GT || t->op == OP_GTEQ)) {
            op = t->op;
            adv(P);
        } else if (is_name(P, "in")) {
            op = OP_IN;
            adv(P);
        } else if (is_name(P, "not") && look(P)->type == T_NAME && !strcmp(look(P)->s, "in")) {
            op = OP_NOTIN;
            adv(P);
            adv(P);
        } else {
            break;
        }
        node *r = parse_math1(P);
        if (!r) return NULL;
        if (!n) {
            n = nn(P, E_CMP, at);
            n->a = e;
        }
        n->op_list = realloc(n->op_list, (size_t)(n->nops + 1) * sizeof(int));
        n->op_list[n->nops++] = op;
        nl_push(&n->args, r);
    }
    return n ? n : e;
}

static node *parse_not(parser *P) {
    if (is_name(P, "not")) {
        token *at = cur(P);
        adv(P);
        if (++P->depth > MAX_DEPTH) {
            failt(P, at, "expression nested too deeply");
            return NULL;
        }
        node *x = parse_not(P);
        P->depth--;
        if (!x) return NULL;
        node *n = nn(P, E_UNARY, at);
        n->op = OP_NOT;
        n->a = x;
        return n;
    }
    return parse_compare(P);
}

static node *parse_and(parser *P) {
    token *at = cur(P);
    node *l = parse_not(P);
    while (l && skip_name(P, "and")) {
        node *r = parse_not(P);
        if (!r) return NULL;
        l = binary(P, at, E_AND, 0, l, r);
        at = cur(P);
    }
    return l;
}

static node *parse_or(parser *P) {
    token *at = cur(P);
    node *l = parse_and(P);
    while (l && skip_name(P, "or")) {
        node *r = parse_and(P);
        if (!r) return NULL;
        l = binary(P, at, E_OR, 0, l, r);
        at = cur(P);
    }
    return l;
}

static node *parse_condexpr(parser *P) {
    token *at = cur(P);
    node *e1 = parse_or(P);
    while (e1 && skip_name(P, "if")) {
        node *e2 = parse_or(P);
        if (!e2) return NULL;
        node *e3 = NULL;
        if (skip_name(P, "else")) {
            if (++P->depth > MAX_DEPTH) {
                failt(P, at, "expression nested too deeply");
                return NULL;
            }
            e3 = parse_condexpr(P);
            P->depth--;
            if (!e3) return NULL;
        }
        node *n = nn(P, E_COND, at);
        n->a = e2;
        n->b = e1;
        n->c = e3;
        e1 = n;
        at = cur(P);
    }
    return e1;
}

static node *parse_expression(parser *P, bool with_condexpr) {
    if (++P->depth > MAX_DEPTH) {
        failt(P, cur(P), "expression nested too deeply");
        return NULL;
    }
    node *n = with_condexpr ? parse_condexpr(P) : parse_or(P);
    P->depth--;
    return n;
}

static bool is_tuple_end(parser *P, const char *extra_end) {
    token *t = cur(P);
    if (t->type == T_VAR_END || t->type == T_BLOCK_END || t->type == T_EOF) return true;
    if (t->type == T_OP && t->op == OP_RPAREN) return true;
    return extra_end && t->type == T_NAME && !strcmp(t->s, extra_end);
}

// mode: 0 simplified (primaries, for assignment targets), 1 with condexpr, 2 without
static node *parse_tuple(parser *P, int mode, const char *extra_end, bool explicit_parens) {
    token *at = cur(P);
    nlist args = {0};
    bool is_tuple = false;
    for (;;) {
        if (args.n && expect_op(P, OP_COMMA, ",")) goto fail;
        if (is_tuple_end(P, extra_end)) break;
        node *x = mode == 0 ? parse_primary(P) : parse_expression(P, mode == 1);
        if (!x) goto fail;
        nl_push(&args, x);
        if (is_op(P, OP_COMMA)) is_tuple = true;
        else break;
    }
    if (!is_tuple) {
        if (args.n) {
            node *x = args.v[0];
            free(args.v);
            return x;
        }
        if (!explicit_parens) {
            failt(P, cur(P), "expected an expression, got %s", describe(cur(P)));
            goto fail;
        }
    }
    node *t = nn(P, E_TUPLE, at);
    t->args = args;
    return t;
fail:
    free(args.v);
    return NULL;
}

// ------------------------------------------------------------- statements

static bool can_assign(node *t) {
    if (t->kind == E_NAME) return true;
    if (t->kind != E_TUPLE) return false;
    for (int i = 0; i < t->args.n; i++)
        if (!can_assign(t->args.v[i])) return false;
    return true;
}

static node *parse_assign_target(parser *P, const char *extra_end) {
    token *at = cur(P);
    node *t = parse_tuple(P, 0, extra_end, false);
    if (!t) return NULL;
    if (!can_assign(t)) {
        failt(P, at, "can't assign to this expression");
        return NULL;
    }
    return t;
}

static int parse_statements(parser *P, nlist *body, const char *const *ends, bool drop_needle) {
    skip_op(P, OP_COLON);
    if (expect_type(P, T_BLOCK_END, "end of statement block '%}'")) return -1;
    token *start = cur(P);
    if (subparse(P, body, ends)) return -1;
    if (cur(P)->type == T_EOF) {
        sbuf b = {0};
        for (int i = 0; ends[i]; i++) sb_printf(&b, "%s'%s'", i ? " or " : "", ends[i]);
        int rc = failt(P, start, "unclosed block: the template ends before %s", b.p);
        free(b.p);
        return rc;
    }
    if (drop_needle) adv(P);
    return 0;
}

static node *parse_for(parser *P, token *at) {
    node *n = nn(P, S_FOR, at);
    if (!(n->a = parse_assign_target(P, "in"))) return NULL;
    if (!skip_name(P, "in")) {
        failt(P, cur(P), "expected 'in' in the for statement, got %s", describe(cur(P)));
        return NULL;
    }
    if (!(n->b = parse_tuple(P, 2, "recursive", false))) return NULL;
    if (skip_name(P, "if") && !(n->c = parse_expression(P, true))) return NULL;
    if (is_name(P, "recursive")) {
        failt(P, cur(P), "unsupported: recursive for loops");
        return NULL;
    }
    static const char *const e1[] = {"endfor", "else", NULL}, *const e2[] = {"endfor", NULL};
    P->loop_depth++;
    int rc = parse_statements(P, &n->body, e1, false);
    P->loop_depth--;
    if (rc) return NULL;
    bool is_else = !strcmp(cur(P)->s, "else");
    adv(P);
    if (is_else && parse_statements(P, &n->else_, e2, true)) return NULL;
    return n;
}

static node *parse_if(parser *P, token *at) {
    static const char *const ends[] = {"elif", "else", "endif", NULL}, *const e2[] = {"endif", NULL};
    node *result = nn(P, S_IF, at), *n = result;
    for (;;) {
        if (!(n->a = parse_tuple(P, 2, NULL, false))) return NULL;
        if (parse_statements(P, &n->body, ends, false)) return NULL;
        token *t = cur(P);
        adv(P);
        if (!strcmp(t->s, "elif")) {
            n = nn(P, S_IF, cur(P));
            nl_push(&result->elifs, n);
            continue;
        }
        if (!strcmp(t->s, "else") && parse_statements(P, &result->else_, e2, true)) return NULL;
        break;
    }
    return result;
}

static node *parse_set(parser *P, token *at) {
    if (cur(P)->type == T_NAME && look(P)->type == T_OP && look(P)->op == OP_DOT) {
        node *n = nn(P, S_NSSET, at);
        n->name = sdup(cur(P)->s);
        adv(P);
        adv(P);
        if (cur(P)->type != T_NAME) {
            failt(P, cur(P), "expected an attribute name, got %s", describe(cur(P)));
            return NULL;
        }
        n->name2 = sdup(cur(P)->s);
        adv(P);
        if (expect_op(P, OP_ASSIGN, "=")) return NULL;
        if (!(n->b = parse_tuple(P, 1, NULL, false))) return NULL;
        return n;
    }
    node *target = parse_assign_target(P, NULL);
    if (!target) return NULL;
    if (skip_op(P, OP_ASSIGN)) {
        node *n = nn(P, S_SET, at);
        n->a = target;
        if (!(n->b = parse_tuple(P, 1, NULL, false))) return NULL;
        return n;
    }
    node *n = nn(P, S_SETBLOCK, at);
    n->a = target;
    if (is_op(P, OP_PIPE)) {
        n->c = parse_filter(P, NULL, false);
        if (!n->c) return NULL;
    }
    static const char *const ends[] = {"endset", NULL};
    int saved = P->loop_depth;
    P->loop_depth = 0;
    int rc = parse_statements(P, &n->body, ends, true);
    P->loop_depth = saved;
    return rc ? NULL : n;
}

static node *parse_macro(parser *P, token *at) {
    node *n = nn(P, S_MACRO, at);
    if (cur(P)->type != T_NAME) {
        failt(P, cur(P), "expected a macro name, got %s", describe(cur(P)));
        return NULL;
    }
    n->name = sdup(cur(P)->s);
    adv(P);
    if (expect_op(P, OP_LPAREN, "(")) return NULL;
    while (!is_op(P, OP_RPAREN)) {
        if (n->args.n && expect_op(P, OP_COMMA, ",")) return NULL;
        if (cur(P)->type != T_NAME) {
            failt(P, cur(P), "expected a parameter name, got %s", describe(cur(P)));
            return NULL;
        }
        node *p = nn(P, E_NAME, cur(P));
        p->name = sdup(cur(P)->s);
        adv(P);
        if (skip_op(P, OP_ASSIGN)) {
            node *d = parse_expression(P, true);
            if (!d) return NULL;
            nl_push(&n->kwvals, d);
        } else if (n->kwvals.n) {
            failt(P, p->line ? cur(P) : cur(P), "non-default argument follows default argument");
            return NULL;
        }
        nl_push(&n->args, p);
    }
    adv(P);
    static const char *const ends[] = {"endmacro", NULL};
    int saved = P->loop_depth;
    P->loop_depth = 0;
    int rc = parse_statements(P, &n->body, ends, true);
    P->loop_depth = saved;
    return rc ? NULL : n;
}

static node *parse_with(parser *P, token *at) {
    node *n = nn(P, S_WITH, at);
    while (cur(P)->type != T_BLOCK_END) {
        if (n->args.n && expect_op(P, OP_COMMA, ",")) return NULL;
        node *t = parse_assign_target(P, NULL);
        if (!t) return NULL;
        if (expect_op(P, OP_ASSIGN, "=")) return NULL;
        node *v = parse_expression(P, true);
        if (!v) return NULL;
        nl_push(&n->args, t);
        nl_push(&n->kwvals, v);
    }
    static const char *const ends[] = {"endwith", NULL};
    return parse_statements(P, &n->body, ends, true) ? NULL : n;
}

static int parse_statement(parser *P, nlist *body) {
    token *t = cur(P);
    if (t->type != T_NAME) return failt(P, t, "tag name expected, got %s", describe(t));
    const char *w = t->s;
    if (++P->depth > MAX_DEPTH) return failt(P, t, "blocks nested too deeply");
    node *n = NULL;
    adv(P);
    if (!strcmp(w, "for")) n = parse_for(P, t);
    else if (!strcmp(w, "if")) n = parse_if(P, t);
    else if (!strcmp(w, "set")) n = parse_set(P, t);
    else if (!strcmp(w, "macro")) n = parse_macro(P, t);
    else if (!strcmp(w, "with")) n = parse_with(P, t);
    else if (!strcmp(w, "print")) {
        n = nn(P, S_OUTPUT, t);
        while (cur(P)->type != T_BLOCK_END) {
            if (n->args.n && expect_op(P, OP_COMMA, ",")) return -1;
            node *x = parse_expression(P, true);
            if (!x) return -1;
            nl_push(&n->args, x);
        }
    } else if (!strcmp(w, "break") || !strcmp(w, "continue")) {
        if (P->loop_depth == 0) return failt(P, t, "'%s' outside of a for loop", w);
        n = nn(P, w[0] == 'b' ? S_BREAK : S_CONTINUE, t);
    } else if (!strcmp(w, "generation")) {  // transformers' assistant-mask tag
        n = nn(P, S_SCOPE, t);
        static const char *const ends[] = {"endgeneration", NULL};
        int saved = P->loop_depth;
        P->loop_depth = 0;
        int rc = parse_statements(P, &n->body, ends, true);
        P->loop_depth = saved;
        if (rc) return -1;
    } else if (!strcmp(w, "block") || !strcmp(w, "extends") || !strcmp(w, "include") ||
               !strcmp(w, "import") || !strcmp(w, "from") || !strcmp(w, "autoescape") ||
               !strcmp(w, "filter") || !strcmp(w, "call")) {
        return failt(P, t, "unsupported tag '%s' (not part of the chat-template subset)", w);
    } else if (!strncmp(w, "end", 3) || !strcmp(w, "else") || !strcmp(w, "elif")) {
        return failt(P, t, "unexpected tag '%s' (no open block it could close)", w);
    } else {
        return failt(P, t, "unknown tag '%s'", w);
    }
    P->depth--;
    if (!n) return -1;
    nl_push(body, n);
    return 0;
}

static int subparse(parser *P, nlist *body, const char *const *ends) {
    for (;;) {
        token *t = cur(P);
        if (t->type == T_EOF) return 0;
        if (t->type == T_DATA) {
            node *n = nn(P, S_DATA, t);
            n->cval = v_str(t->s, t->len);
            nl_push(body, n);
            adv(P);
        } else if (t->type == T_VAR_BEGIN) {
            adv(P);
            node *x = parse_tuple(P, 1, NULL, false);
            if (!x) return -1;
            node *n = nn(P, S_OUTPUT, t);
            nl_push(&n->args, x);
            nl_push(body, n);
            if (expect_type(P, T_VAR_END, "end of print statement '}}'")) return -1;
        } else if (t->type == T_BLOCK_BEGIN) {
            adv(P);
            if (ends && cur(P)->type == T_NAME)
                for (int i = 0; ends[i]; i++)
                    if (!strcmp(cur(P)->s, ends[i])) return 0;
            if (parse_statement(P, body)) return -1;
            if (expect_type(P, T_BLOCK_END, "end of statement block '%}'")) return -1;
        } else {
            return failt(P, t, "unexpected %s", describe(t));
        }
    }
}

// Filters and tests jinja2 does not know are errors when compiled outside an
// if statement or conditional expression, and at run time (when reached)
// inside one; those jinja2 knows but the subset lacks are always errors.
static int check_names(parser *P, node *n, bool soft);
static int check_list(parser *P, nlist *l, bool soft) {
    for (int i = 0; i < l->n; i++)
        if (check_names(P, l->v[i], soft)) return -1;
    return 0;
}
static int check_names(parser *P, node *n, bool soft) {
    if (!n) return 0;
    if (n->kind == E_FILTER || n->kind == E_TEST) {
        const char *what = n->kind == E_FILTER ? "filter" : "test";
        token at = {.line = n->line, .col = n->col};
        if (n->fid == -2)
            return failt(P, &at, "unsupported %s '%s' (not part of the chat-template subset)",
                         what, n->name);
        if (n->fid == -1 && !soft) return failt(P, &at, "no %s named '%s'", what, n->name);
    }
    bool inner = soft;
    switch (n->kind) {
    case S_IF:
        if (check_names(P, n->a, true) || check_list(P, &n->body, true) ||
            check_list(P, &n->else_, true))
            return -1;
        for (int i = 0; i < n->elifs.n; i++)
            if (check_names(P, n->elifs.v[i]->a, true) || check_list(P, &n->elifs.v[i]->body, true))
                return -1;
        return 0;
    case E_COND: inner = true; break;
    case S_FOR:
        return check_names(P, n->a, soft) || check_names(P, n->b, soft) ||
                       check_names(P, n->c, false) || check_list(P, &n->body, false) ||
                       check_list(P, &n->else_, false)
                   ? -1
                   : 0;
    case S_MACRO:
    case S_SETBLOCK:
    case S_SCOPE:
        if (check_list(P, &n->kwvals, false) || check_names(P, n->c, false)) return -1;
        return check_list(P, &n->body, false);
    case S_WITH:
        if (check_list(P, &n->kwvals, soft)) return -1;
        return check_list(P, &n->body, false);
    default: break;
    }
    return check_names(P, n->a, inner) || check_names(P, n->b, inner) ||
                   check_names(P, n->c, inner) || check_list(P, &n->args, inner) ||
                   check_list(P, &n->kwvals, inner) || check_list(P, &n->body, inner)
               ? -1
               : 0;
}

int tpl_parse(const char *src, size_t n, tpl_ast *ast, atoll_error *e) {
    memset(ast, 0, sizeof *ast);
    token *toks;
    size_t nt;
    if (tpl_lex(src, n, &toks, &nt, e)) return -1;
    parser P = {.t = toks, .nt = nt, .ast = ast, .e = e};
    node *root = nn(&P, S_SCOPE, &toks[0]);
    int rc = subparse(&P, &root->body, NULL);
    if (!rc) rc = check_names(&P, root, false);
    tpl_free_tokens(toks, nt);
    if (rc) {
        tpl_ast_free(ast);
        return -1;
    }
    ast->root = root;
    tpl_analyze(ast);
    return 0;
}

static void free_scope(scope_info *s) {
    for (int i = 0; i < s->n; i++) free(s->undef[i]);
    free(s->undef);
}

void tpl_ast_free(tpl_ast *ast) {
    for (size_t i = 0; i < ast->nallocs; i++) {
        node *n = ast->allocs[i];
        free(n->name);
        free(n->name2);
        v_decref(n->cval);
        free(n->args.v);
        free(n->kwvals.v);
        if (n->kwnames)
            for (int k = 0; k < n->kwvals.n; k++) free(n->kwnames[k]);
        free(n->kwnames);
        free(n->body.v);
        free(n->else_.v);
        free(n->elifs.v);
        free(n->op_list);
        free_scope(&n->sc);
        free_scope(&n->sc2);
        free_scope(&n->sc3);
        free(n);
    }
    free(ast->allocs);
    memset(ast, 0, sizeof *ast);
}
