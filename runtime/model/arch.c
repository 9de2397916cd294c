// runtime/model/arch.c — rows of the architecture table (see arch.h).
#include "runtime/model/arch.h"

#include <string.h>

static const arch_info arch_table[] = {
    // hf_name              arch        qkv_bias attn_bias qk_norm post fused inter partial
    {"LlamaForCausalLM", ARCH_LLAMA, 0, 0, 0, 0, 0, 0, 1.0},
    {"MistralForCausalLM", ARCH_LLAMA, 0, 0, 0, 0, 0, 0, 1.0},
    {"Qwen2ForCausalLM", ARCH_QWEN2, 1, 0, 0, 0, 0, 0, 1.0},
    {"Qwen3ForCausalLM", ARCH_QWEN3, 0, 0, 1, 0, 0, 0, 1.0},
    {"GlmForCausalLM", ARCH_GLM, 0, 1, 0, 0, 1, 1, 0.5},
    {"Glm4ForCausalLM", ARCH_GLM4, 0, 1, 0, 1, 1, 1, 0.5},
};

static const char *const arch_names[ARCH_COUNT] = {
    [ARCH_LLAMA] = "llama", [ARCH_QWEN2] = "qwen2", [ARCH_QWEN3] = "qwen3",
    [ARCH_GLM] = "glm", [ARCH_GLM4] = "glm4",
};

const char *arch_name(arch_id a) { return a >= 0 && a < ARCH_COUNT ? arch_names[a] : "?"; }

const arch_info *arch_find(const char *hf_name) {
    for (size_t i = 0; i < sizeof arch_table / sizeof arch_table[0]; i++)
        if (strcmp(arch_table[i].hf_name, hf_name) == 0) return &arch_table[i];
    return NULL;
}

const char *arch_supported_list(void) {
    static char list[512];
    if (!list[0])
        for (size_t i = 0; i < sizeof arch_table / sizeof arch_table[0]; i++) {
            if (i) strncat(list, ", ", sizeof list - strlen(list) - 1);
            strncat(list, arch_table[i].hf_name, sizeof list - strlen(list) - 1);
        }
    return list;
}
