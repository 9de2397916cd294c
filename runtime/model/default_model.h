// runtime/model/default_model.h — where the default model lives: the file
// launch/fetch-model.sh stores in models/ at the top of the source tree,
// found from the running executable (build/atoll -> ../models/).
#ifndef ATOLL_MODEL_DEFAULT_MODEL_H
#define ATOLL_MODEL_DEFAULT_MODEL_H

#define DEFAULT_MODEL_FILE "SmolLM2-135M-Instruct.Q4_1.gguf"

// The default model's path (a static buffer), or NULL with a message
// saying where it was looked for and how to fetch it.
const char *default_model_path(char *why, size_t why_len);

#endif
