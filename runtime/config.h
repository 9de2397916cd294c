// runtime/config.h — atoll's configuration: one table of keys (name, type,
// default, help, commands that use it) drives the ini reader, the command
// line flags, validation, --help and the printout of the effective values.
// Flags override the ini file given with --config.
#ifndef ATOLL_CONFIG_H
#define ATOLL_CONFIG_H

#include <stdio.h>

#include "runtime/util/error.h"

typedef enum {
    CONFIG_STRING = 0,
    CONFIG_INT = 1,
    CONFIG_FLOAT = 2,
    CONFIG_BOOL = 3,
    CONFIG_TYPE_COUNT
} config_type;

// Commands a key applies to (bit mask).
enum {
    CMD_GENERATE = 1 << 0,
    CMD_VERSION = 1 << 1,
    CMD_CHAT = 1 << 2,
    CMD_TOKENIZE = 1 << 3,
    CMD_DETOKENIZE = 1 << 4,
    CMD_ALL = 0xffff,
};

typedef struct {
    char *config;        // ini file the other values were read from
    char *model;         // model directory or file
    char *prompt_ids;    // comma-separated token ids
    char *prompt;        // prompt text
    int chat;            // send the prompt through the chat template
    char *system;        // system message for the chat template
    char *text;          // text to tokenize
    char *file;          // file to tokenize
    int special;         // tokenize: add the model's special tokens
    char *ids;           // ids to detokenize
    long max_tokens;
    double temperature;
    long seed;
    char *logits_out;    // .npy path for the logits of each generated token
    long threads;
    long kv_block_size;
    long max_model_len;
    int ignore_eos;
    char *log_level;
} atoll_config;

typedef struct {
    const char *name;       // ini key; the flag is --name with '_' -> '-'
    config_type type;
    const char *default_value;
    const char *help;
    unsigned commands;      // CMD_* mask
    size_t offset;          // offsetof(atoll_config, field)
    double min, max;        // numeric range (inclusive) for CONFIG_INT/FLOAT
} config_key;

extern const config_key config_keys[];
extern const int config_key_count;

void config_defaults(atoll_config *c);
void config_free(atoll_config *c);
// Sets one key from its text value, validating type and range.
int config_set(atoll_config *c, const char *name, const char *value, atoll_error *e);
// Reads an ini file (keys at top level or in an [atoll] section).
int config_read_ini(atoll_config *c, const char *path, atoll_error *e);
// Parses "--key value" / "--key=value" / "--flag" / "--no-flag" for a command:
// reads --config first, then applies the flags over it. *help is set when
// --help/-h is present.
int config_parse_args(atoll_config *c, unsigned command, int argc, char **argv,
                      int *help, atoll_error *e);
// Serializes every key as "name\0value\0" pairs (for broadcast) and back.
char *config_serialize(const atoll_config *c, size_t *len);
int config_deserialize(atoll_config *c, const char *buf, size_t len, atoll_error *e);
void config_print_help(FILE *f, unsigned command);
void config_log_effective(const atoll_config *c, unsigned command);

#endif
