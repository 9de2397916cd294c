// runtime/model/gguf_model.c — loads a GGUF file into a `model`: the
// architecture's metadata keys -> model_desc, and llama.cpp's tensor names
// bound to the layer structs with every shape checked against the metadata.
// Matrices stay in the file's type (F32/F16/BF16 or block-quantized) and are
// read from the mapping; norms and biases are converted to F32 at load.
//
// GGUF shapes list ne[0] first: a [rows, cols] matrix is ne = [cols, rows].
// llama.cpp's converter permutes the rows of the Q and K projections of
// "llama" models so that ggml's plain rope, which rotates adjacent pairs
// (2i, 2i+1), computes what Hugging Face's rotate_half does on the original
// rows; attention scores are the same for any row order shared by Q and K,
// so atoll keeps the permuted rows and rotates adjacent pairs
// (rope_interleaved). "qwen2" is converted without permutation and uses
// rotate_half (ggml's NEOX rope).
#include "runtime/model/gguf_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/model/gguf.h"
#include "runtime/model/weight_upload.h"

typedef struct {
    const char *gguf_name;   // general.architecture
    const char *hf_name;     // the Hugging Face class it corresponds to
    arch_id arch;
    int qkv_bias;
    int rope_interleaved;
} gguf_arch;

static const gguf_arch gguf_archs[] = {
    {"llama", "LlamaForCausalLM", ARCH_LLAMA, 0, 1},
    {"qwen2", "Qwen2ForCausalLM", ARCH_QWEN2, 1, 0},
};
#define N_GGUF_ARCHS (sizeof gguf_archs / sizeof gguf_archs[0])
#define SUPPORTED_ARCHS "llama, qwen2"
#define SUPPORTED_TYPES "f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, q4_k, q5_k, q6_k, q8_k"

typedef struct {
    model *m;
    const gguf_file *g;
    const char *arch;        // key prefix
    atoll_error *e;
} gloader;

// ------------------------------------------------------------- metadata ----

// {arch}.suffix as a positive int; `def` when absent (def 0: required).
static int meta_int(gloader *l, const char *suffix, int def, int *out) {
    char key[128];
    snprintf(key, sizeof key, "%s.%s", l->arch, suffix);
    uint32_t v;
    int rc = gguf_read_u32(l->g, key, &v, l->e);
    if (rc < 0) return -1;
    if (rc == GGUF_ABSENT) {
        if (!def) return error_set(l->e, "%s: required key '%s' is missing", l->g->path, key);
        *out = def;
        return 0;
    }
    if (v == 0 || v > (1u << 30))
        return error_set(l->e, "%s: key '%s' is %u; it must be a positive integer", l->g->path, key, v);
    *out = (int)v;
    return 0;
}

// {arch}.suffix as a positive float; `def` when absent (def 0: required).
static int meta_float(gloader *l, const char *suffix, double def, double *out) {
    char key[128];
    snprintf(key, sizeof key, "%s.%s", l->arch, suffix);
    float v;
    int rc = gguf_read_f32(l->g, key, &v, l->e);
    if (rc < 0) return -1;
    if (rc == GGUF_ABSENT) {
        if (!(def > 0)) return error_set(l->e, "%s: required key '%s' is missing", l->g->path, key);
        *out = def;
        return 0;
    }
    if (!(v > 0) || v != v || v > 1e30f)
        return error_set(l->e, "%s: key '%s' is %g; it must be a positive number", l->g->path, key, v);
    *out = v;
    return 0;
}

static int token_id(gloader *l, const char *key) {
    int32_t v;
    atoll_error ignored;
    return gguf_read_i32(l->g, key, &v, &ignored) == 0 && v >= 0 ? v : -1;
}

static int read_rope_scaling(gloader *l, model_desc *d) {
    char key[128];
    const char *type = NULL;
    snprintf(key, sizeof key, "%s.rope.scaling.type", l->arch);
    if (gguf_read_string(l->g, key, &type, l->e) < 0) return -1;
    double factor = 0;
    if (!type) {  // older files: {arch}.rope.scale_linear
        snprintf(key, sizeof key, "%s.rope.scale_linear", l->arch);
        if (!gguf_find(l->g, key)) return 0;
        if (meta_float(l, "rope.scale_linear", 0, &factor)) return -1;
        if (factor == 1.0) return 0;
        d->scaling.type = ROPE_SCALING_LINEAR;
        d->scaling.factor = factor;
        return 0;
    }
    if (strcmp(type, "none") == 0) return 0;
    if (strcmp(type, "linear") != 0)
        return error_set(l->e, "%s: %s is '%s', which is not supported (supported: none, linear)",
                         l->g->path, key, type);
    if (meta_float(l, "rope.scaling.factor", 0, &factor)) return -1;
    d->scaling.type = ROPE_SCALING_LINEAR;
    d->scaling.factor = factor;
    return 0;
}

static int read_desc(gloader *l) {
    model_desc *d = &l->m->desc;
    const gguf_file *g = l->g;
    memset(d, 0, sizeof *d);
    const char *name = NULL;
    if (gguf_read_string(g, "general.architecture", &name, l->e) < 0) return -1;
    if (!name)
        return error_set(l->e, "%s: required key 'general.architecture' is missing (supported: %s)",
                         g->path, SUPPORTED_ARCHS);
    const gguf_arch *a = NULL;
    for (size_t i = 0; i < N_GGUF_ARCHS && !a; i++)
        if (strcmp(gguf_archs[i].gguf_name, name) == 0) a = &gguf_archs[i];
    if (!a)
        return error_set(l->e, "%s: general.architecture '%.64s' is not supported (supported: %s)",
                         g->path, name, SUPPORTED_ARCHS);
    l->arch = a->gguf_name;
    d->arch = a->arch;
    snprintf(d->hf_architecture, sizeof d->hf_architecture, "%s", a->hf_name);
    d->qkv_bias = a->qkv_bias;
    d->rope_interleaved = a->rope_interleaved;

    double eps = 0, theta = 0;
    if (meta_int(l, "block_count", 0, &d->n_layers) ||
        meta_int(l, "embedding_length", 0, &d->hidden_size) ||
        meta_int(l, "feed_forward_length", 0, &d->intermediate_size) ||
        meta_int(l, "attention.head_count", 0, &d->n_heads) ||
        meta_int(l, "attention.head_count_kv", d->n_heads, &d->n_kv_heads) ||
        meta_int(l, "context_length", 2048, &d->max_position_embeddings) ||
        meta_float(l, "attention.layer_norm_rms_epsilon", 0, &eps) ||
        meta_float(l, "rope.freq_base", 10000.0, &theta))
        return -1;
    d->rms_norm_eps = (float)eps;
    d->rope_theta = theta;
    int value_dim = 0;
    if (meta_int(l, "attention.key_length", d->hidden_size / d->n_heads, &d->head_dim) ||
        meta_int(l, "attention.value_length", d->head_dim, &value_dim) ||
        meta_int(l, "rope.dimension_count", d->head_dim, &d->rope_dim))
        return -1;
    if (value_dim != d->head_dim)
        return error_set(l->e, "%s: %s.attention.value_length %d differs from key_length %d (not supported)",
                         g->path, l->arch, value_dim, d->head_dim);
    if (read_rope_scaling(l, d)) return -1;

    // Vocabulary: {arch}.vocab_size, else the tokenizer's token list, else
    // the embedding's rows.
    char key[128];
    snprintf(key, sizeof key, "%s.vocab_size", l->arch);
    const gguf_value *tokens = gguf_find(g, "tokenizer.ggml.tokens");
    const gguf_tensor *embd = gguf_find_tensor(g, "token_embd.weight");
    if (gguf_find(g, key)) {
        if (meta_int(l, "vocab_size", 0, &d->vocab_size)) return -1;
    } else if (tokens && tokens->type == GGUF_TYPE_ARRAY && tokens->arr.n > 0 && tokens->arr.n < (1u << 30)) {
        d->vocab_size = (int)tokens->arr.n;
    } else if (embd && embd->ne[1] > 0 && embd->ne[1] < (1 << 30)) {
        d->vocab_size = (int)embd->ne[1];
    } else {
        return error_set(l->e, "%s: cannot tell the vocabulary size: no %s, tokenizer.ggml.tokens or "
                         "token_embd.weight", g->path, key);
    }
    d->bos_token_id = token_id(l, "tokenizer.ggml.bos_token_id");
    d->eos_token_id = token_id(l, "tokenizer.ggml.eos_token_id");
    d->tie_word_embeddings = gguf_find_tensor(g, "output.weight") == NULL;

    if (d->n_heads % d->n_kv_heads)
        return error_set(l->e, "%s: %s.attention.head_count (%d) is not a multiple of head_count_kv (%d)",
                         g->path, l->arch, d->n_heads, d->n_kv_heads);
    if (d->head_dim % 2 || d->rope_dim % 2 || d->rope_dim > d->head_dim)
        return error_set(l->e, "%s: head dimension %d with %s.rope.dimension_count %d (both must be "
                         "even, the rotary part at most the head dimension)", g->path, d->head_dim,
                         l->arch, d->rope_dim);
    return 0;
}

// ---------------------------------------------------------------- tensors ---

static void ne_text(const gguf_tensor *t, char *out, size_t n) {
    size_t used = (size_t)snprintf(out, n, "[");
    for (int d = 0; d < t->n_dims && used < n; d++)
        used += (size_t)snprintf(out + used, n - used, "%s%lld", d ? ", " : "", (long long)t->ne[d]);
    if (used < n) snprintf(out + used, n - used, "]");
}

// Finds `name` and checks it is ne = [cols, rows] (rows 0: a vector [cols])
// of a type atoll computes with.
static const gguf_tensor *find_tensor(gloader *l, const char *name, int cols, int rows, int optional) {
    const gguf_tensor *t = gguf_find_tensor(l->g, name);
    if (!t) {
        if (!optional)
            error_set(l->e, "%s: tensor '%s' is missing (needed by %s)", l->g->path, name, l->arch);
        return NULL;
    }
    const int want_dims = rows ? 2 : 1;
    int ok = t->ne[0] == cols && (!rows || t->ne[1] == rows) && t->n_dims >= want_dims;
    for (int d = want_dims; d < GGUF_MAX_DIMS; d++) ok = ok && t->ne[d] == 1;
    if (!ok) {
        char have[128];
        ne_text(t, have, sizeof have);
        if (rows)
            error_set(l->e, "%s: tensor '%s' has shape %s but the %s.* metadata implies [%d, %d] "
                      "(GGUF order: columns first)", l->g->path, name, have, l->arch, cols, rows);
        else
            error_set(l->e, "%s: tensor '%s' has shape %s but the %s.* metadata implies [%d]",
                      l->g->path, name, have, l->arch, cols);
        return NULL;
    }
    if (t->type == DTYPE_COUNT) {
        error_set(l->e, "%s: tensor '%s' has type %s, which atoll cannot compute with (supported: %s)",
                  l->g->path, name, gguf_ggml_type_name(t->ggml_type), SUPPORTED_TYPES);
        return NULL;
    }
    return t;
}

// A [rows, cols] matrix (ne = [cols, rows]).
static int load_matrix(gloader *l, const char *name, int rows, int cols, weight_matrix *out) {
    const gguf_tensor *t = find_tensor(l, name, cols, rows, 0);
    if (!t) return -1;
    return weight_bind_matrix(l->m->be, t->data, t->bytes, t->type, rows, cols, out, name, l->e);
}

// A vector as F32 on the device. Absent optional vectors leave *out NULL.
static int load_vector(gloader *l, const char *name, int len, int optional, float **out) {
    *out = NULL;
    const gguf_tensor *t = find_tensor(l, name, len, 0, optional);
    if (!t) return optional && !gguf_find_tensor(l->g, name) ? 0 : -1;
    return weight_upload_vector(l->m->be, t->data, t->bytes, t->type, len, out, name, l->e);
}

static int load_layer(gloader *l, int i, layer_weights *w) {
    const model_desc *d = &l->m->desc;
    const int q_dim = d->n_heads * d->head_dim, kv_dim = d->n_kv_heads * d->head_dim;
    const int hidden = d->hidden_size, ffn = d->intermediate_size;
    char n[96];
#define NAME(suffix) (snprintf(n, sizeof n, "blk.%d.%s", i, suffix), n)
    w->n_gate_up = 2;
    if (load_vector(l, NAME("attn_norm.weight"), hidden, 0, &w->attn_norm) ||
        load_matrix(l, NAME("attn_q.weight"), q_dim, hidden, &w->wq) ||
        load_matrix(l, NAME("attn_k.weight"), kv_dim, hidden, &w->wk) ||
        load_matrix(l, NAME("attn_v.weight"), kv_dim, hidden, &w->wv) ||
        load_matrix(l, NAME("attn_output.weight"), hidden, q_dim, &w->wo) ||
        load_vector(l, NAME("ffn_norm.weight"), hidden, 0, &w->ffn_norm) ||
        load_matrix(l, NAME("ffn_gate.weight"), ffn, hidden, &w->gate_up[0]) ||
        load_matrix(l, NAME("ffn_up.weight"), ffn, hidden, &w->gate_up[1]) ||
        load_matrix(l, NAME("ffn_down.weight"), hidden, ffn, &w->w_down))
        return -1;
    if (d->qkv_bias &&
        (load_vector(l, NAME("attn_q.bias"), q_dim, 0, &w->bq) ||
         load_vector(l, NAME("attn_k.bias"), kv_dim, 0, &w->bk) ||
         load_vector(l, NAME("attn_v.bias"), kv_dim, 0, &w->bv)))
        return -1;
#undef NAME
    return 0;
}

static int load_rope(gloader *l) {
    backend *be = l->m->be;
    const int n = l->m->desc.rope_dim / 2;
    float host[4096];
    if (n > (int)(sizeof host / sizeof host[0]))
        return error_set(l->e, "%s: rotary dimension %d is too large", l->g->path, 2 * n);
    model_desc_rope_inv_freq(&l->m->desc, host);
    l->m->rope_inv_freq = be->ops->alloc(be, (n ? n : 1) * sizeof(float));
    if (!l->m->rope_inv_freq) return error_set(l->e, "out of device memory");
    be->ops->copy_to_device(be, l->m->rope_inv_freq, host, n * sizeof(float));
    return 0;
}

int gguf_model_load(model *m, const char *path, backend *be, atoll_error *e) {
    memset(m, 0, sizeof *m);
    m->be = be;
    m->gguf = calloc(1, sizeof *m->gguf);
    if (!m->gguf) return error_set(e, "out of memory");
    if (gguf_open(m->gguf, path, e)) {
        if (e && !gguf_is_gguf_file(path)) {
            const size_t n = strlen(e->msg);
            snprintf(e->msg + n, sizeof e->msg - n,
                     " (--model takes a Hugging Face model directory or a GGUF file)");
        }
        free(m->gguf);
        m->gguf = NULL;
        return -1;
    }
    gloader l = {m, m->gguf, "", e};
    const model_desc *d = &m->desc;
    if (read_desc(&l)) goto fail;
    if (load_matrix(&l, "token_embd.weight", d->vocab_size, d->hidden_size, &m->embed) ||
        load_vector(&l, "output_norm.weight", d->hidden_size, 0, &m->final_norm))
        goto fail;
    // The last layer must exist before the layer table is sized by
    // block_count, so a wrong count is reported, not allocated.
    char last[64];
    snprintf(last, sizeof last, "blk.%d.attn_norm.weight", d->n_layers - 1);
    if (!gguf_find_tensor(m->gguf, last)) {
        error_set(e, "%s: tensor '%s' is missing (%s.block_count is %d)", path, last, l.arch, d->n_layers);
        goto fail;
    }
    m->layers = calloc(d->n_layers, sizeof *m->layers);
    if (!m->layers) {
        error_set(e, "out of memory allocating %d layers", d->n_layers);
        goto fail;
    }
    for (int i = 0; i < d->n_layers; i++)
        if (load_layer(&l, i, &m->layers[i])) goto fail;
    if (d->tie_word_embeddings) m->lm_head = m->embed;
    else if (load_matrix(&l, "output.weight", d->vocab_size, d->hidden_size, &m->lm_head)) goto fail;
    if (load_rope(&l)) goto fail;
    return 0;
fail:
    model_free(m);
    return -1;
}
