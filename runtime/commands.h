// runtime/commands.h — the subcommands of the atoll executable. Each runs on
// every rank after MPI is up and returns the process exit code (the same on
// every rank).
#ifndef ATOLL_COMMANDS_H
#define ATOLL_COMMANDS_H

#include "runtime/comm/world.h"
#include "runtime/config.h"

typedef struct {
    const char *name;
    unsigned key_mask;       // CMD_* bit of the config keys it accepts
    const char *summary;
    const char *usage;
    int (*run)(const world_info *w, const atoll_config *c);
} command;

const command *command_find(const char *name);
void command_print_list(FILE *f);

int cmd_generate(const world_info *w, const atoll_config *c);
int cmd_version(const world_info *w, const atoll_config *c);
int cmd_chat(const world_info *w, const atoll_config *c);
int cmd_tokenize(const world_info *w, const atoll_config *c);
int cmd_detokenize(const world_info *w, const atoll_config *c);

#endif
