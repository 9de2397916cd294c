// runtime/main.c — the atoll executable: starts the SPMD world (a singleton
// run is a world of one), reads the command line and config on rank 0,
// broadcasts the effective configuration and runs the subcommand everywhere.
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/commands.h"
#include "runtime/model/default_model.h"

static void print_usage(FILE *f) {
    fprintf(f, "usage: atoll COMMAND [options]   (atoll COMMAND --help for its options)\n\ncommands:\n");
    command_print_list(f);
}

// Rank 0: parse flags and --config. Returns 0 to run, 1 to exit with
// status *exit_code (help printed or an error reported).
static int parse_on_rank0(const command *cmd, int argc, char **argv, atoll_config *c, int *exit_code) {
    int help = 0;
    atoll_error e = {{0}};
    if (config_parse_args(c, cmd->key_mask, argc, argv, &help, &e)) {
        fprintf(stderr, "atoll %s: %s\n", cmd->name, e.msg);
        *exit_code = 2;
        return 1;
    }
    if (help) {
        printf("usage: %s\n\n%s\n\n", cmd->usage, cmd->summary);
        config_print_help(stdout, cmd->key_mask);
        *exit_code = 0;
        return 1;
    }
    // Commands that take a model use the default one when none is given.
    if (!c->model[0] && (cmd->key_mask & (CMD_GENERATE | CMD_CHAT | CMD_TOKENIZE | CMD_DETOKENIZE))) {
        char why[PATH_MAX + 160];
        const char *path = default_model_path(why, sizeof why);
        if (!path) {
            fprintf(stderr, "atoll %s: %s\n", cmd->name, why);
            *exit_code = 2;
            return 1;
        }
        config_set(c, "model", path, NULL);
    }
    return 0;
}

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN);
    world_info w;
    world_init(&argc, &argv, &w);

    const char *name = argc > 1 ? argv[1] : NULL;
    const command *cmd = name ? command_find(name) : NULL;
    if (!cmd) {
        int asked_help = name && (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 ||
                                  strcmp(name, "help") == 0);
        if (w.rank == 0) {
            if (name && !asked_help) fprintf(stderr, "atoll: unknown command '%s'\n\n", name);
            print_usage(asked_help ? stdout : stderr);
        }
        world_finalize();
        return asked_help ? 0 : 2;
    }

    atoll_config config;
    config_defaults(&config);
    int status[2] = {0, 0};  // {stop, exit code}
    if (w.rank == 0) status[0] = parse_on_rank0(cmd, argc - 2, argv + 2, &config, &status[1]);
    CHECK_MPI(MPI_Bcast(status, 2, MPI_INT, 0, MPI_COMM_WORLD));
    if (status[0]) {
        config_free(&config);
        world_finalize();
        return status[1];
    }

    size_t len = 0;
    void *packed = w.rank == 0 ? config_serialize(&config, &len) : NULL;
    if (w.rank == 0 && !packed) fatal("out of memory serializing the configuration");
    world_bcast_bytes(&packed, &len);
    atoll_error e = {{0}};
    if (w.rank != 0 && config_deserialize(&config, packed, len, &e))
        fatal("configuration from rank 0 is unreadable: %s", e.msg);
    free(packed);

    static const struct { const char *name; log_level level; } levels[] = {
        {"error", LOG_LEVEL_ERROR}, {"warning", LOG_LEVEL_WARN},
        {"info", LOG_LEVEL_INFO}, {"debug", LOG_LEVEL_DEBUG},
    };
    int known = 0;
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
        if (strcmp(config.log_level, levels[i].name) == 0) {
            log_set_level(levels[i].level);
            known = 1;
        }
    if (!known) LOG_RANK0(LOG_LEVEL_WARN, "log_level '%s' is unknown; using info", config.log_level);
    config_log_effective(&config, cmd->key_mask);

    int rc = cmd->run(&w, &config);
    config_free(&config);
    world_finalize();
    return rc;
}
