// runtime/model/default_model.c — locating the default model (see default_model.h).
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "runtime/model/default_model.h"

const char *default_model_path(char *why, size_t why_len) {
    static char path[PATH_MAX + 64];
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        snprintf(why, why_len, "no --model given and the executable's location is unknown");
        return NULL;
    }
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) *slash = 0;  // the build folder
    slash = strrchr(exe, '/');
    if (slash) *slash = 0;  // the source tree above it
    snprintf(path, sizeof path, "%s/models/%s", exe, DEFAULT_MODEL_FILE);
    if (access(path, R_OK) == 0) return path;
    snprintf(why, why_len, "no --model given and the default model is not at %s: run launch/fetch-model.sh",
             path);
    return NULL;
}
