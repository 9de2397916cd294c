// runtime/model/weight_files.c — opening single-file and sharded checkpoints.
#include "runtime/model/weight_files.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int weight_files_add(weight_files *w, const char *path, atoll_error *e) {
    safetensors_file *grown = realloc(w->files, (w->n_files + 1) * sizeof *grown);
    if (!grown) return error_set(e, "out of memory");
    w->files = grown;
    if (safetensors_open(&w->files[w->n_files], path, e)) return -1;
    w->n_files++;
    return 0;
}

// Opens every distinct shard named in the index's weight_map.
static int weight_files_open_index(weight_files *w, const char *dir, const char *index_path,
                                   atoll_error *e) {
    json_error_t jerr;
    json_t *root = json_load_file(index_path, 0, &jerr);
    if (!root)
        return error_set(e, "%s: not valid JSON (line %d: %s)", index_path, jerr.line, jerr.text);
    json_t *map = json_object_get(root, "weight_map");
    if (!json_is_object(map)) {
        json_decref(root);
        return error_set(e, "%s: no 'weight_map' object", index_path);
    }
    const char *tensor;
    json_t *file;
    int rc = 0;
    json_object_foreach(map, tensor, file) {
        if (!json_is_string(file) || strchr(json_string_value(file), '/')) {
            rc = error_set(e, "%s: weight_map entry for '%s' must be a file name in the model directory",
                           index_path, tensor);
            break;
        }
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, json_string_value(file));
        int seen = 0;
        for (int i = 0; i < w->n_files && !seen; i++) seen = strcmp(w->files[i].path, path) == 0;
        if (!seen && (rc = weight_files_add(w, path, e))) break;
    }
    json_decref(root);
    return rc;
}

int weight_files_open(weight_files *w, const char *dir, atoll_error *e) {
    memset(w, 0, sizeof *w);
    char path[4096];
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
    int rc;
    if (access(path, R_OK) == 0) {
        rc = weight_files_open_index(w, dir, path, e);
    } else {
        snprintf(path, sizeof path, "%s/model.safetensors", dir);
        if (access(path, R_OK) != 0)
            return error_set(e, "%s: no model.safetensors or model.safetensors.index.json", dir);
        rc = weight_files_add(w, path, e);
    }
    if (rc) weight_files_close(w);
    return rc;
}

void weight_files_close(weight_files *w) {
    for (int i = 0; i < w->n_files; i++) safetensors_close(&w->files[i]);
    free(w->files);
    memset(w, 0, sizeof *w);
}

const safetensors_tensor *weight_files_find(const weight_files *w, const char *name,
                                            const safetensors_file **file) {
    for (int i = 0; i < w->n_files; i++) {
        const safetensors_tensor *t = safetensors_find(&w->files[i], name);
        if (t) {
            if (file) *file = &w->files[i];
            return t;
        }
    }
    return NULL;
}
