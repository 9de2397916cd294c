// runtime/template/symbols.c — jinja2's compile-time scoping (idtracking.py)
// reduced to what changes rendered text: for each scope (template, loop body,
// loop else, loop filter, macro, set block, with, generation) the names that
// jinja2 initialises as "missing" on entry — names first assigned in that
// scope, not inside an if, and unknown to enclosing scopes. Reading such a
// name before its assignment gives undefined even if the context has it.
// Everything else behaves like a dynamic lookup through the enclosing frames.
#include <stdlib.h>
#include <string.h>

#include "runtime/template/tpl.h"

enum { A_RESOLVE, A_ALIAS, A_UNDEF, A_PARAM };

typedef struct symbols symbols;
struct symbols {
    symbols *parent;
    int n, cap;
    const char **names;  // refs of this level (jinja2 ident l_<level>_<name>)
    int *act;            // load action of each ref
    int ns, caps;
    const char **stores;
};

static int find_local(const symbols *s, const char *name) {
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->names[i], name)) return i;
    return -1;
}

static bool find_ref(const symbols *s, const char *name) {
    for (; s; s = s->parent)
        if (find_local(s, name) >= 0) return true;
    return false;
}

static void define(symbols *s, const char *name, int act) {
    int i = find_local(s, name);
    if (i >= 0) {
        s->act[i] = act;
        return;
    }
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 8;
        s->names = realloc(s->names, (size_t)s->cap * sizeof(char *));
        s->act = realloc(s->act, (size_t)s->cap * sizeof(int));
    }
    s->names[s->n] = name;
    s->act[s->n++] = act;
}

static bool stored(const symbols *s, const char *name) {
    for (int i = 0; i < s->ns; i++)
        if (!strcmp(s->stores[i], name)) return true;
    return false;
}

static void add_store(symbols *s, const char *name) {
    if (stored(s, name)) return;
    if (s->ns == s->caps) {
        s->caps = s->caps ? s->caps * 2 : 8;
        s->stores = realloc(s->stores, (size_t)s->caps * sizeof(char *));
    }
    s->stores[s->ns++] = name;
}

static void sym_load(symbols *s, const char *name) {
    if (!find_ref(s, name)) define(s, name, A_RESOLVE);
}

static void sym_store(symbols *s, const char *name) {
    add_store(s, name);
    if (find_local(s, name) >= 0) return;
    define(s, name, s->parent && find_ref(s->parent, name) ? A_ALIAS : A_UNDEF);
}

static void sym_param(symbols *s, const char *name) {
    add_store(s, name);
    define(s, name, A_PARAM);
}

static symbols sym_copy(const symbols *s) {
    symbols c = {.parent = s->parent};
    for (int i = 0; i < s->n; i++) define(&c, s->names[i], s->act[i]);
    for (int i = 0; i < s->ns; i++) add_store(&c, s->stores[i]);
    return c;
}

static void sym_free(symbols *s) {
    free(s->names);
    free(s->act);
    free(s->stores);
}

static void branch_update(symbols *s, symbols *br, int nb) {
    const char **newst = NULL;
    int nn = 0;
    for (int b = 0; b < nb; b++)
        for (int i = 0; i < br[b].ns; i++)
            if (!stored(s, br[b].stores[i])) {
                newst = realloc(newst, (size_t)(nn + 1) * sizeof(char *));
                newst[nn++] = br[b].stores[i];
            }
    for (int b = 0; b < nb; b++) {
        for (int i = 0; i < br[b].n; i++) define(s, br[b].names[i], br[b].act[i]);
        for (int i = 0; i < br[b].ns; i++) add_store(s, br[b].stores[i]);
    }
    for (int i = 0; i < nn; i++)
        define(s, newst[i], s->parent && find_ref(s->parent, newst[i]) ? A_ALIAS : A_RESOLVE);
    free(newst);
}

static void visit(symbols *s, const node *n);

static void visit_list(symbols *s, const nlist *l) {
    for (int i = 0; i < l->n; i++) visit(s, l->v[i]);
}

static void store_target(symbols *s, const node *t, bool param) {
    if (t->kind == E_NAME) {
        if (param) sym_param(s, t->name);
        else sym_store(s, t->name);
    } else {
        for (int i = 0; i < t->args.n; i++) store_target(s, t->args.v[i], param);
    }
}

// jinja2's FrameSymbolVisitor: what a statement does to its own scope
static void visit(symbols *s, const node *n) {
    if (!n) return;
    switch (n->kind) {
    case E_NAME: sym_load(s, n->name); return;
    case S_SET:
        visit(s, n->b);
        store_target(s, n->a, false);
        return;
    case S_NSSET:
        visit(s, n->b);
        sym_load(s, n->name);
        return;
    case S_SETBLOCK: store_target(s, n->a, false); return;
    case S_FOR: visit(s, n->b); return;
    case S_MACRO: sym_store(s, n->name); return;
    case S_WITH: visit_list(s, &n->kwvals); return;
    case S_SCOPE: return;
    case S_IF: {
        visit(s, n->a);
        symbols br[3];
        br[0] = sym_copy(s);
        visit_list(&br[0], &n->body);
        br[1] = sym_copy(s);
        for (int i = 0; i < n->elifs.n; i++) visit(&br[1], n->elifs.v[i]);
        br[2] = sym_copy(s);
        visit_list(&br[2], &n->else_);
        branch_update(s, br, 3);
        for (int i = 0; i < 3; i++) sym_free(&br[i]);
        return;
    }
    default:
        visit(s, n->a);
        visit(s, n->b);
        visit(s, n->c);
        visit_list(s, &n->args);
        visit_list(s, &n->kwvals);
        visit_list(s, &n->body);
        return;
    }
}

static void record(symbols *s, scope_info *out) {
    for (int i = 0; i < s->n; i++)
        if (s->act[i] == A_UNDEF) {
            out->undef = realloc(out->undef, (size_t)(out->n + 1) * sizeof(char *));
            out->undef[out->n++] = strdup(s->names[i]);
        }
}

static void nested(symbols *s, const nlist *l);

static bool uses_name_n(const node *n, const char *name);
static bool uses_name(const nlist *l, const char *name) {
    for (int i = 0; i < l->n; i++)
        if (uses_name_n(l->v[i], name)) return true;
    return false;
}
static bool uses_name_n(const node *n, const char *name) {
    if (!n) return false;
    if (n->kind == E_NAME && !strcmp(n->name, name)) return true;
    return uses_name_n(n->a, name) || uses_name_n(n->b, name) || uses_name_n(n->c, name) ||
           uses_name(&n->args, name) || uses_name(&n->kwvals, name) || uses_name(&n->body, name) ||
           uses_name(&n->else_, name) || uses_name(&n->elifs, name);
}

static void nested_in(symbols *s, const node *n) {
    if (!n) return;
    switch (n->kind) {
    case S_IF:
        nested(s, &n->body);
        for (int i = 0; i < n->elifs.n; i++) nested(s, &n->elifs.v[i]->body);
        nested(s, &n->else_);
        return;
    case S_FOR: {
        node *f = (node *)n;
        symbols b = {.parent = s};
        store_target(&b, n->a, true);
        visit_list(&b, &n->body);
        sym_param(&b, "loop");
        record(&b, &f->sc);
        nested(&b, &n->body);
        sym_free(&b);
        symbols e = {.parent = s};
        visit_list(&e, &n->else_);
        record(&e, &f->sc2);
        nested(&e, &n->else_);
        sym_free(&e);
        symbols t = {.parent = s};
        store_target(&t, n->a, true);
        visit(&t, n->c);
        record(&t, &f->sc3);
        sym_free(&t);
        return;
    }
    case S_MACRO: {
        node *mn = (node *)n;
        mn->op = (uses_name(&n->body, "varargs") ? 1 : 0) | (uses_name(&n->body, "kwargs") ? 2 : 0) |
                 (uses_name(&n->body, "caller") ? 4 : 0);
        symbols m = {.parent = s};
        for (int i = 0; i < n->args.n; i++) sym_param(&m, n->args.v[i]->name);
        visit_list(&m, &n->kwvals);
        visit_list(&m, &n->body);
        sym_param(&m, "varargs");
        sym_param(&m, "kwargs");
        sym_param(&m, "caller");
        record(&m, &((node *)n)->sc);
        nested(&m, &n->body);
        sym_free(&m);
        return;
    }
    case S_WITH: {
        symbols w = {.parent = s};
        for (int i = 0; i < n->args.n; i++) store_target(&w, n->args.v[i], true);
        visit_list(&w, &n->body);
        record(&w, &((node *)n)->sc);
        nested(&w, &n->body);
        sym_free(&w);
        return;
    }
    case S_SETBLOCK:
    case S_SCOPE: {
        symbols b = {.parent = s};
        visit_list(&b, &n->body);
        record(&b, &((node *)n)->sc);
        nested(&b, &n->body);
        sym_free(&b);
        return;
    }
    default: return;
    }
}

static void nested(symbols *s, const nlist *l) {
    for (int i = 0; i < l->n; i++) nested_in(s, l->v[i]);
}

void tpl_analyze(tpl_ast *ast) {
    symbols root = {0};
    visit_list(&root, &ast->root->body);
    record(&root, &ast->root->sc);
    nested(&root, &ast->root->body);
    sym_free(&root);
}
