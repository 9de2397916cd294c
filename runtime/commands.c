// runtime/commands.c — the table of subcommands (see commands.h).
#include "runtime/commands.h"

#include <string.h>

static const command command_table[] = {
    {"generate", CMD_GENERATE, "generate from a prompt (token ids, text, or a chat message)",
     "atoll generate --model PATH (--prompt \"text\" [--chat] [--system \"...\"] | --prompt-ids 1,2,3) "
     "[--max-tokens N] [--temperature T] [--seed S] [--logits-out FILE.npy]",
     cmd_generate},
    {"chat", CMD_CHAT, "talk with the model on the terminal (/reset, /quit)",
     "atoll chat --model PATH [--system \"...\"] [--max-tokens N] [--temperature T]", cmd_chat},
    {"tokenize", CMD_TOKENIZE, "print the token ids of a text as a JSON array",
     "atoll tokenize --model PATH (--text \"...\" | --file F) [--special]", cmd_tokenize},
    {"detokenize", CMD_DETOKENIZE, "write the text of token ids to stdout, byte for byte",
     "atoll detokenize --model PATH --ids 1,2,3", cmd_detokenize},
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
