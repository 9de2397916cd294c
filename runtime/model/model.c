// runtime/model/model.c — binds a model directory's tensors to the layer
// structs, checking every shape against config.json; model_load hands GGUF
// files to gguf_model.c.
#include "runtime/model/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "runtime/model/gguf_model.h"
#include "runtime/model/hf_config.h"
#include "runtime/model/weight_upload.h"

typedef struct {
    model *m;
    const char *dir;
    atoll_error *e;
} loader;

static void shape_text(const safetensors_tensor *t, char *out, size_t n) {
    size_t used = snprintf(out, n, "[");
    for (int d = 0; d < t->n_dims && used < n; d++)
        used += snprintf(out + used, n - used, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
    if (used < n) snprintf(out + used, n - used, "]");
}

// Finds `name` and checks it has shape [rows, cols] (cols 0: a vector [rows]).
static const safetensors_tensor *loader_tensor(loader *l, const char *name, int rows, int cols,
                                               int optional) {
    const safetensors_file *file = NULL;
    const safetensors_tensor *t = weight_files_find(&l->m->files, name, &file);
    if (!t) {
        if (!optional)
            error_set(l->e, "%s: tensor '%s' is missing (needed by %s)", l->dir, name,
                      l->m->desc.hf_architecture);
        return NULL;
    }
    int want_dims = cols ? 2 : 1;
    if (t->n_dims != want_dims || t->shape[0] != rows || (cols && t->shape[1] != cols)) {
        char have[128];
        shape_text(t, have, sizeof have);
        if (cols)
            error_set(l->e, "%s: tensor '%s' has shape %s but config.json implies [%d, %d]",
                      file->path, name, have, rows, cols);
        else
            error_set(l->e, "%s: tensor '%s' has shape %s but config.json implies [%d]",
                      file->path, name, have, rows);
        return NULL;
    }
    return t;
}

static int loader_matrix(loader *l, const char *name, int rows, int cols, weight_matrix *out) {
    const safetensors_tensor *t = loader_tensor(l, name, rows, cols, 0);
    if (!t) return -1;
    return weight_bind_matrix(l->m->be, t->data, t->bytes, t->type, rows, cols, out, name, l->e);
}

// A vector as F32 on the device. Absent optional vectors leave *out NULL.
static int loader_vector(loader *l, const char *name, int len, int optional, float **out) {
    *out = NULL;
    const safetensors_tensor *t = loader_tensor(l, name, len, 0, optional);
    if (!t) return optional && !weight_files_find(&l->m->files, name, NULL) ? 0 : -1;
    return weight_upload_vector(l->m->be, t->data, t->bytes, t->type, len, out, name, l->e);
}

static int loader_layer(loader *l, int i, layer_weights *w) {
    const model_desc *d = &l->m->desc;
    const int q_dim = d->n_heads * d->head_dim, kv_dim = d->n_kv_heads * d->head_dim;
    const int hidden = d->hidden_size, ffn = d->intermediate_size;
    char p[96], n[160];
    snprintf(p, sizeof p, "model.layers.%d.", i);
#define NAME(suffix) (snprintf(n, sizeof n, "%s%s", p, suffix), n)
    if (loader_vector(l, NAME("input_layernorm.weight"), hidden, 0, &w->attn_norm) ||
        loader_matrix(l, NAME("self_attn.q_proj.weight"), q_dim, hidden, &w->wq) ||
        loader_matrix(l, NAME("self_attn.k_proj.weight"), kv_dim, hidden, &w->wk) ||
        loader_matrix(l, NAME("self_attn.v_proj.weight"), kv_dim, hidden, &w->wv) ||
        loader_matrix(l, NAME("self_attn.o_proj.weight"), hidden, q_dim, &w->wo) ||
        loader_vector(l, NAME("post_attention_layernorm.weight"), hidden, 0, &w->ffn_norm) ||
        loader_matrix(l, NAME("mlp.down_proj.weight"), hidden, ffn, &w->w_down))
        return -1;
    if (d->qkv_bias &&
        (loader_vector(l, NAME("self_attn.q_proj.bias"), q_dim, 0, &w->bq) ||
         loader_vector(l, NAME("self_attn.k_proj.bias"), kv_dim, 0, &w->bk) ||
         loader_vector(l, NAME("self_attn.v_proj.bias"), kv_dim, 0, &w->bv)))
        return -1;
    if (d->o_bias && loader_vector(l, NAME("self_attn.o_proj.bias"), hidden, 0, &w->bo)) return -1;
    if (d->qk_norm &&
        (loader_vector(l, NAME("self_attn.q_norm.weight"), d->head_dim, 0, &w->q_norm) ||
         loader_vector(l, NAME("self_attn.k_norm.weight"), d->head_dim, 0, &w->k_norm)))
        return -1;
    if (d->post_norms &&
        (loader_vector(l, NAME("post_self_attn_layernorm.weight"), hidden, 0, &w->post_attn_norm) ||
         loader_vector(l, NAME("post_mlp_layernorm.weight"), hidden, 0, &w->post_ffn_norm)))
        return -1;
    if (d->fused_gate_up) {
        w->n_gate_up = 1;
        if (loader_matrix(l, NAME("mlp.gate_up_proj.weight"), 2 * ffn, hidden, &w->gate_up[0]))
            return -1;
    } else {
        w->n_gate_up = 2;
        if (loader_matrix(l, NAME("mlp.gate_proj.weight"), ffn, hidden, &w->gate_up[0]) ||
            loader_matrix(l, NAME("mlp.up_proj.weight"), ffn, hidden, &w->gate_up[1]))
            return -1;
        if (d->mlp_bias &&
            (loader_vector(l, NAME("mlp.gate_proj.bias"), ffn, 0, &w->gate_up_bias[0]) ||
             loader_vector(l, NAME("mlp.up_proj.bias"), ffn, 0, &w->gate_up_bias[1])))
            return -1;
    }
    if (d->mlp_bias && loader_vector(l, NAME("mlp.down_proj.bias"), hidden, 0, &w->b_down)) return -1;
#undef NAME
    return 0;
}

static int loader_rope(loader *l) {
    backend *be = l->m->be;
    const int n = l->m->desc.rope_dim / 2;
    float host[4096];
    if (n > (int)(sizeof host / sizeof host[0]))
        return error_set(l->e, "%s: rotary dimension %d is too large", l->dir, 2 * n);
    model_desc_rope_inv_freq(&l->m->desc, host);
    l->m->rope_inv_freq = be->ops->alloc(be, n * sizeof(float));
    if (!l->m->rope_inv_freq) return error_set(l->e, "out of device memory");
    be->ops->copy_to_device(be, l->m->rope_inv_freq, host, n * sizeof(float));
    return 0;
}

int model_load(model *m, const char *dir, backend *be, atoll_error *e) {
    struct stat st;
    if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) return gguf_model_load(m, dir, be, e);
    memset(m, 0, sizeof *m);
    m->be = be;
    char path[4096];
    snprintf(path, sizeof path, "%s/config.json", dir);
    if (hf_config_load(&m->desc, path, e)) return -1;
    if (weight_files_open(&m->files, dir, e)) return -1;
    loader l = {m, dir, e};
    const model_desc *d = &m->desc;
    if (loader_matrix(&l, "model.embed_tokens.weight", d->vocab_size, d->hidden_size, &m->embed) ||
        loader_vector(&l, "model.norm.weight", d->hidden_size, 0, &m->final_norm))
        goto fail;
    // Check the checkpoint holds the last layer before sizing the layer
    // table by num_hidden_layers, so a wrong count is reported, not allocated.
    char last[96];
    snprintf(last, sizeof last, "model.layers.%d.input_layernorm.weight", d->n_layers - 1);
    if (!weight_files_find(&m->files, last, NULL)) {
        error_set(e, "%s: tensor '%s' is missing (config.json has num_hidden_layers %d)", dir, last,
                  d->n_layers);
        goto fail;
    }
    m->layers = calloc(d->n_layers, sizeof *m->layers);
    if (!m->layers) {
        error_set(e, "out of memory allocating %d layers", d->n_layers);
        goto fail;
    }
    for (int i = 0; i < d->n_layers; i++)
        if (loader_layer(&l, i, &m->layers[i])) goto fail;
    if (d->tie_word_embeddings && !weight_files_find(&m->files, "lm_head.weight", NULL))
        m->lm_head = m->embed;
    else if (loader_matrix(&l, "lm_head.weight", d->vocab_size, d->hidden_size, &m->lm_head))
        goto fail;
    if (loader_rope(&l)) goto fail;
    return 0;
fail:
    model_free(m);
    return -1;
}

static void model_free_vector(backend *be, float *v) {
    if (v) be->ops->free(be, v);
}

static void model_free_matrix(backend *be, weight_matrix *w) {
    if (w->data && !be->ops->view_host) be->ops->free(be, (void *)w->data);
}

void model_free(model *m) {
    backend *be = m->be;
    if (!be) return;
    for (int i = 0; m->layers && i < m->desc.n_layers; i++) {
        layer_weights *w = &m->layers[i];
        float *vectors[] = {w->attn_norm, w->bq, w->bk, w->bv, w->q_norm, w->k_norm, w->bo,
                            w->post_attn_norm, w->ffn_norm, w->gate_up_bias[0],
                            w->gate_up_bias[1], w->b_down, w->post_ffn_norm};
        for (size_t v = 0; v < sizeof vectors / sizeof vectors[0]; v++) model_free_vector(be, vectors[v]);
        weight_matrix *mats[] = {&w->wq, &w->wk, &w->wv, &w->wo, &w->gate_up[0], &w->gate_up[1], &w->w_down};
        for (size_t k = 0; k < sizeof mats / sizeof mats[0]; k++) model_free_matrix(be, mats[k]);
    }
    free(m->layers);
    model_free_vector(be, m->final_norm);
    model_free_vector(be, m->rope_inv_freq);
    if (m->lm_head.data != m->embed.data) model_free_matrix(be, &m->lm_head);
    model_free_matrix(be, &m->embed);
    weight_files_close(&m->files);
    if (m->gguf) {
        gguf_close(m->gguf);
        free(m->gguf);
    }
    memset(m, 0, sizeof *m);
}
