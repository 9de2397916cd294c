// runtime/model/rope.c — rotary frequencies with the rope_scaling variants,
// computed in float32 as transformers' modeling_rope_utils does.
#include <math.h>

#include "runtime/model/model_desc.h"

static const char *const rope_scaling_names[ROPE_SCALING_COUNT] = {
    [ROPE_SCALING_NONE] = "default", [ROPE_SCALING_LINEAR] = "linear",
    [ROPE_SCALING_LLAMA3] = "llama3",
};

const char *rope_scaling_name(rope_scaling_type t) {
    return t >= 0 && t < ROPE_SCALING_COUNT ? rope_scaling_names[t] : "?";
}

static float rope_llama3(const rope_scaling *s, float inv_freq) {
    const float factor = (float)s->factor;
    const float old_len = (float)s->original_max_position_embeddings;
    const float low = (float)s->low_freq_factor, high = (float)s->high_freq_factor;
    const float low_freq_wavelen = old_len / low, high_freq_wavelen = old_len / high;
    const float wavelen = 2.0f * (float)M_PI / inv_freq;
    float scaled = wavelen > low_freq_wavelen ? inv_freq / factor : inv_freq;
    int medium = !(wavelen < high_freq_wavelen) && !(wavelen > low_freq_wavelen);
    if (medium) {
        float smooth = (old_len / wavelen - low) / (high - low);
        scaled = (1.0f - smooth) * scaled / factor + smooth * scaled;
    }
    return scaled;
}

void model_desc_rope_inv_freq(const model_desc *d, float *inv_freq) {
    const int dim = d->rope_dim;
    for (int j = 0; j < dim / 2; j++) {
        float exponent = (float)(2 * j) / (float)dim;
        float f = 1.0f / powf((float)d->rope_theta, exponent);
        switch (d->scaling.type) {
        case ROPE_SCALING_LINEAR: f = f / (float)d->scaling.factor; break;
        case ROPE_SCALING_LLAMA3: f = rope_llama3(&d->scaling, f); break;
        default: break;
        }
        inv_freq[j] = f;
    }
}
