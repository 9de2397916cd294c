// runtime/template/tpl.h — internals shared by the chat-template engine:
// the value type (Python semantics), the token and AST types, and the entry
// points each file of runtime/template/ provides to the others.
#ifndef ATOLL_TEMPLATE_TPL_H
#define ATOLL_TEMPLATE_TPL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/util/error.h"

// ---------------------------------------------------------------- buffers
typedef struct {
    char *p;
    size_t n, cap;
} sbuf;

void sb_put(sbuf *b, const char *s, size_t n);
void sb_puts(sbuf *b, const char *s);
void sb_putc(sbuf *b, char c);
void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_cp(sbuf *b, uint32_t cp);  // appends one code point as UTF-8
char *sb_take(sbuf *b);            // NUL-terminated, caller frees; b is reset

// ---------------------------------------------------------------- unicode (ustr.c)
uint32_t u8_next(const char *s, size_t n, size_t *i);  // decodes at *i (valid UTF-8), advances
size_t u8_count(const char *s, size_t n);
size_t u8_offset(const char *s, size_t n, size_t cps);  // byte offset of code point index
bool u8_valid(const char *s, size_t n);
bool uc_isspace(uint32_t c);
bool uc_isprintable(uint32_t c);
bool uc_iscased(uint32_t c);
bool uc_islower(uint32_t c);
bool uc_isupper(uint32_t c);
int uc_map(int which, uint32_t c, uint32_t out[3]);  // which: 0 lower, 1 upper, 2 title
enum { UC_LOWER, UC_UPPER, UC_TITLE };

// ---------------------------------------------------------------- values
enum vkind {
    V_UNDEF,    // jinja2 Undefined; .s holds the message an error on it reports (may be NULL)
    V_NONE,
    V_BOOL,
    V_INT,
    V_FLOAT,
    V_STR,
    V_LIST,     // list, tuple, generator or dict view (hlist.kind)
    V_DICT,
    V_NS,       // namespace()
    V_MACRO,
    V_FUNC,     // a global function (.i = FN_*)
    V_METHOD,   // a bound method of a str/list/dict/loop value
    V_LOOP,     // the loop variable of a for loop
    V_MISSING,  // internal: a frame slot declared but not yet assigned
};
enum { L_LIST, L_TUPLE, L_GEN, L_KEYS, L_VALUES, L_ITEMS, L_RANGE };
enum { FN_RAISE, FN_STRFTIME, FN_NAMESPACE, FN_DICT, FN_RANGE, FN_LIPSUM, FN_CYCLER, FN_JOINER };

typedef struct hstr hstr;
typedef struct hlist hlist;
typedef struct hdict hdict;
typedef struct hns hns;
typedef struct hmacro hmacro;
typedef struct hmethod hmethod;
typedef struct hloop hloop;

typedef struct value {
    uint8_t k;
    union {
        int64_t i;
        double f;
        hstr *s;
        hlist *l;
        hdict *d;
        hns *ns;
        hmacro *m;
        hmethod *me;
        hloop *lp;
    };
} value;

struct hstr {
    int rc;
    uint8_t markup;  // produced by |safe or |escape (jinja2 Markup)
    size_t len;
    size_t ncp;  // code points, (size_t)-1 until computed
    char b[];    // NUL-terminated
};
struct hlist {
    int rc;
    uint8_t kind, consumed;
    size_t n, cap;
    value *v;
};
struct hdict {
    int rc;
    size_t n, cap;
    value *k, *v;
};
struct hns {
    int rc;
    hdict *attrs;
};
struct hmethod {
    int rc;
    value self;
    int id;
    const char *name;
};

static inline value v_undef0(void) { value v = {.k = V_UNDEF}; v.s = NULL; return v; }
static inline value v_none(void) { value v = {.k = V_NONE}; v.i = 0; return v; }
static inline value v_bool(bool b) { value v = {.k = V_BOOL}; v.i = b; return v; }
static inline value v_int(int64_t i) { value v = {.k = V_INT}; v.i = i; return v; }
static inline value v_float(double f) { value v = {.k = V_FLOAT}; v.f = f; return v; }
static inline value v_missing(void) { value v = {.k = V_MISSING}; v.i = 0; return v; }

value v_incref(value v);  // returns v
void v_decref(value v);
value v_str(const char *s, size_t n);
value v_strz(const char *s);
value v_str_take(sbuf *b);  // consumes the buffer
value v_markup(const char *s, size_t n);
value v_undef(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
size_t str_ncp(hstr *s);

hlist *list_new(int kind, size_t cap);
void list_push(hlist *l, value v);  // steals v
value v_list(hlist *l);             // steals l
hdict *dict_new(size_t cap);
void dict_set(hdict *d, value k, value v);  // steals both; replaces an equal key in place
value *dict_get(hdict *d, value k);         // borrowed, NULL if absent
value *dict_gets(hdict *d, const char *k);  // string key
value v_dict(hdict *d);                     // steals d

bool v_truthy(value v);
bool v_eq(value a, value b);
// Python ordering: *res <0, 0, >0; fails (TypeError) when the types do not order.
int v_cmp(value a, value b, int *res, atoll_error *e);
const char *v_typename(value v);  // Python type name, as in error messages
// str(v) and repr(v) as Python writes them; fail for values whose text
// Python would print with a memory address (methods, generators, ...).
int v_str_into(value v, sbuf *b, atoll_error *e);
int v_repr_into(value v, sbuf *b, atoll_error *e);
value v_from_json(void *json);  // json_t*
// json.dumps(v, ensure_ascii, indent (NULL = None), separators, sort_keys)
typedef struct {
    bool ensure_ascii, sort_keys, has_indent;
    const char *indent;  // the indent string when has_indent
    size_t indent_len;
    const char *item_sep, *key_sep;
    size_t item_sep_len, key_sep_len;
} json_opts;
int v_tojson(value v, const json_opts *o, sbuf *b, atoll_error *e);
bool v_hashable(value v);

// ---------------------------------------------------------------- tokens and AST
enum tok {
    T_DATA, T_VAR_BEGIN, T_VAR_END, T_BLOCK_BEGIN, T_BLOCK_END,
    T_NAME, T_STRING, T_INT, T_FLOAT, T_OP, T_EOF
};
enum op {
    OP_ADD, OP_SUB, OP_DIV, OP_FLOORDIV, OP_MUL, OP_MOD, OP_POW, OP_TILDE,
    OP_LBRACKET, OP_RBRACKET, OP_LPAREN, OP_RPAREN, OP_LBRACE, OP_RBRACE,
    OP_EQ, OP_NE, OP_GT, OP_GTEQ, OP_LT, OP_LTEQ, OP_ASSIGN, OP_DOT, OP_COLON,
    OP_PIPE, OP_COMMA, OP_SEMICOLON,
    // used only in the AST
    OP_IN, OP_NOTIN, OP_NOT, OP_NEG, OP_POS
};
typedef struct {
    int type, op;
    int line, col;
    char *s;  // DATA, NAME, STRING text (owned by the token array)
    size_t len;
    int64_t ival;
    double fval;
} token;

int tpl_lex(const char *src, size_t n, token **toks, size_t *ntoks, atoll_error *e);
void tpl_free_tokens(token *t, size_t n);

enum nkind {
    // statements
    S_DATA, S_OUTPUT, S_IF, S_FOR, S_SET, S_SETBLOCK, S_NSSET, S_MACRO, S_BREAK,
    S_CONTINUE, S_WITH, S_SCOPE,
    // expressions
    E_CONST, E_NAME, E_GETATTR, E_GETITEM, E_SLICE, E_CALL, E_FILTER, E_TEST, E_UNARY,
    E_BIN, E_CMP, E_AND, E_OR, E_COND, E_CONCAT, E_LIST, E_TUPLE, E_DICT
};

typedef struct node node;
typedef struct {
    node **v;
    int n, cap;
} nlist;

// A scope (template, loop body, macro body...) lists the names jinja2
// initialises to "missing" when it is entered (see symbols.c).
typedef struct {
    char **undef;
    int n;
} scope_info;

struct node {
    int kind, op;
    int line, col;
    char *name;   // E_NAME, E_GETATTR attribute, filter/test name, S_MACRO, S_NSSET namespace
    char *name2;  // S_NSSET attribute
    value cval;   // E_CONST
    int fid;      // filter/test id (-1 unknown: a runtime error when reached)
    node *a, *b, *c;
    nlist args;      // call/filter/test args, list/tuple items, dict keys, output exprs, targets
    nlist kwvals;    // keyword argument values, dict values, with-values, macro defaults
    char **kwnames;  // keyword argument names
    nlist body, else_, elifs;
    scope_info sc, sc2, sc3;  // S_FOR: body, else, filter test; others: body
    int nops;                 // E_CMP: ops in op_list
    int *op_list;
    bool recursive;
};

typedef struct {
    node *root;  // S_SCOPE holding the template's statements
    void **allocs;
    size_t nallocs, capallocs;
} tpl_ast;

int tpl_parse(const char *src, size_t n, tpl_ast *ast, atoll_error *e);
void tpl_ast_free(tpl_ast *ast);
void tpl_analyze(tpl_ast *ast);  // fills the scope_info of every scope (symbols.c)

// ---------------------------------------------------------------- filters, tests, methods
int filter_id(const char *name);  // -1 unknown, -2 known to jinja2 but unsupported here
int test_id(const char *name);

// ---------------------------------------------------------------- rendering
typedef struct frame frame;
struct frame {
    frame *parent;
    hdict *vars;
    bool captured;  // a macro closes over it: keep its variables until the render ends
};

typedef struct rstate {
    hdict *ctx;      // the render context
    hdict *globals;  // builtins
    sbuf *out;
    atoll_error *e;
    int depth;
    bool fold;       // evaluating a constant {{ }} as jinja2 does at compile time
    frame **frames;  // every frame of this render, freed at its end
    size_t nframes, capframes;
} rstate;

struct hmacro {
    int rc;
    const node *def;
    frame *closure;
};

struct hloop {
    int rc;
    rstate *rs;       // NULL once the loop has ended
    value items;      // list being iterated (materialised source)
    size_t pos;       // next source index
    const node *fnode;  // the for node (filter test, target)
    frame *tframe;    // frame in which the filter test runs
    int64_t index0;
    int64_t length;   // -1 until known
    value cur, before, after;
    bool has_after, after_done;
    value last_changed;
    bool has_changed;
};

int tpl_fail(rstate *rs, const node *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int eval(rstate *rs, frame *f, const node *n, value *out);
int render_stmts(rstate *rs, frame *f, const nlist *body);
int call_value(rstate *rs, frame *f, const node *at, value fn, value *args, int nargs,
               char **kwn, value *kwv, int nkw, value *out);
int get_attr(rstate *rs, const node *at, value obj, const char *name, value *out);
int get_item(rstate *rs, const node *at, value obj, value key, value *out);
int apply_filter(rstate *rs, frame *f, const node *at, int fid, const char *name, value in,
                 value *args, int nargs, char **kwn, value *kwv, int nkw, value *out);
int apply_test(rstate *rs, frame *f, const node *at, int tid, const char *name, value in,
               value *args, int nargs, char **kwn, value *kwv, int nkw, bool *out);
// Python attribute lookup on builtin types: 1 found (a method or loop attribute), 0 not an
// attribute, -1 error; *unsafe set when the attribute exists but the sandbox forbids it.
int builtin_attr(rstate *rs, const node *at, value obj, const char *name, value *out,
                 bool *unsafe);
int call_method(rstate *rs, frame *f, const node *at, hmethod *m, value *args, int nargs,
                char **kwn, value *kwv, int nkw, value *out);
int loop_attr(rstate *rs, const node *at, hloop *lp, const char *name, value *out, int *found);
// iterates: fills a fresh list with the items of v (Python iter()); fails when not iterable
int v_iterate(rstate *rs, const node *at, value v, hlist **out);
int v_len(rstate *rs, const node *at, value v, int64_t *out);
int binop(rstate *rs, const node *at, int op, value a, value b, value *out);
int contains(rstate *rs, const node *at, value needle, value hay, bool *out);
frame *frame_new(rstate *rs, frame *parent, const scope_info *sc);
void frame_release(frame *f);  // drops its variables unless a macro captured it
void frame_set(frame *f, const char *name, value v);  // steals v
int lookup(rstate *rs, frame *f, const char *name, value *out);
int to_pystr(rstate *rs, const node *at, value v, sbuf *b);
int strftime_now(rstate *rs, const node *at, value fmt, value *out);
int call_macro(rstate *rs, const node *at, hmacro *m, value *args, int nargs, char **kwn,
               value *kwv, int nkw, value *out);
int loop_next(hloop *lp, value *item, bool *has);
int bind_target(rstate *rs, frame *f, const node *target, value v);
value v_escape(value v);
bool const_foldable(const node *x);  // markupsafe.escape of str(v)
void loop_finish(hloop *lp);
void loop_decref(hloop *lp);
void macro_decref(hmacro *m);

// string helpers (methods.c)
int str_strip(const char *s, size_t n, value chars, int which, size_t *start, size_t *end,
              atoll_error *e);
value str_case(const char *s, size_t n, int which, atoll_error *e, bool *ok);
value str_replace(const char *s, size_t n, const char *old, size_t on, const char *nw, size_t nn,
                  int64_t count);
void str_splitlines(const char *s, size_t n, bool keepends, hlist *out);

#endif
