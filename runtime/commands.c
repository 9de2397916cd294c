// runtime/commands.c — the table of subcommands (see commands.h).
#include "runtime/commands.h"

#include <string.h>

static const command command_table[] = {
    {"generate", CMD_GENERATE, "generate tokens from a prompt",
     "atoll generate --model DIR --prompt-ids 1,2,3 [--max-tokens 32] [--temperature 0] [--seed S] "
     "[--logits-out FILE.npy]",
     cmd_generate},
    {"version", CMD_VERSION, "print the version", "atoll version", cmd_version},
};

const command *command_find(const char *name) {
    for (size_t i = 0; i < sizeof command_table / sizeof command_table[0]; i++)
        if (strcmp(command_table[i].name, name) == 0) return &command_table[i];
    return NULL;
}

void command_print_list(FILE *f) {
    for (size_t i = 0; i < sizeof command_table / sizeof command_table[0]; i++)
        fprintf(f, "  %-10s %s\n", command_table[i].name, command_table[i].summary);
}
