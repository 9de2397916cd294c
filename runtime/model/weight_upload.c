// runtime/model/weight_upload.c — tensors onto the backend (see weight_upload.h).
#include "runtime/model/weight_upload.h"

#include <stdint.h>

const void *weight_device_view(backend *be, const void *host, size_t bytes) {
    if (be->ops->view_host) return be->ops->view_host(be, host, bytes);
    void *dev = be->ops->alloc(be, bytes ? bytes : 1);
    if (dev) be->ops->copy_to_device(be, dev, host, bytes);
    return dev;
}

int weight_bind_matrix(backend *be, const void *host, size_t bytes, dtype type, int rows, int cols,
                       weight_matrix *out, const char *name, atoll_error *e) {
    out->data = weight_device_view(be, host, bytes);
    if (!out->data) return error_set(e, "out of device memory loading '%s'", name);
    out->type = type;
    out->rows = rows;
    out->cols = cols;
    return 0;
}

int weight_upload_vector(backend *be, const void *host, size_t bytes, dtype type, int len, float **out,
                         const char *name, atoll_error *e) {
    weight_matrix row = {weight_device_view(be, host, bytes), type, 1, len};
    int32_t zero = 0;
    int32_t *ids = be->ops->alloc(be, sizeof zero);
    *out = be->ops->alloc(be, (size_t)len * sizeof(float));
    int rc = 0;
    if (!row.data || !ids || !*out) {
        rc = error_set(e, "out of device memory loading '%s'", name);
    } else {
        be->ops->copy_to_device(be, ids, &zero, sizeof zero);
        be->ops->embedding(be, *out, &row, ids, 1);
        be->ops->synchronize(be);
    }
    if (ids) be->ops->free(be, ids);
    if (row.data && !be->ops->view_host) be->ops->free(be, (void *)row.data);
    if (rc && *out) {
        be->ops->free(be, *out);
        *out = NULL;
    }
    return rc;
}
