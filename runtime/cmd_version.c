// runtime/cmd_version.c — `atoll version`.
#include <stdio.h>

#include "runtime/commands.h"

int cmd_version(const world_info *w, const atoll_config *c) {
    if (w->rank == 0) printf("atoll %s\n", ATOLL_VERSION);
    return 0;
}
