/*
 * Process-level commands (serve, control, admin) and their shared helpers.
 */
#ifndef SG_CLI_CLI_H
#define SG_CLI_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "common/args.h"
#include "edge/edge.h"
#include "store/store.h"

int sg_cmd_serve(int argc, char **argv);
int sg_cmd_admin(int argc, char **argv);

/* `suggestd <cmd> --help` (src/cli/help.c): prints cmd's usage text on f; 0, or -1 for a
 * command without one. */
int sg__cli_help(const char *cmd, FILE *f);
/* True when the words after a subcommand ask for help (--help or -h before any "--"). */
bool sg__cli_wants_help(int argc, char **argv);
/* The admin commands, one usage line each (src/admin/admin.c). */
void sg__admin_usage(FILE *f);

/* Prints {"error": fmt % arg} on stderr and returns 1. */
int sg__cli_fail(const char *fmt, const char *arg);
/* Opens the store and/or the edge store named by --data-dir / --database / --edge
 * (pass NULL for what is not needed). Returns 0, or prints the error and returns 1. */
int sg__cli_open(sg_args *a, sg_store **st, sg_edge **edge);
/* `admin edge rebuild` (src/admin/edge_rebuild.c): prints its summary or the error; 0 or 1. */
int sg__admin_edge_rebuild(sg_store *st, sg_edge *e);
/* `admin backup --to FILE` and `admin restore --from FILE` (src/admin/backup.c). */
int sg__admin_backup(sg_store *st, sg_edge *e, const char *to);
int sg__admin_restore(sg_args *a);

#endif
