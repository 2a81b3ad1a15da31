/*
 * Process-level commands (serve, control, admin) and their shared helpers.
 */
#ifndef SG_CLI_CLI_H
#define SG_CLI_CLI_H

#include "common/args.h"
#include "edge/edge.h"
#include "store/store.h"

int sg_cmd_serve(int argc, char **argv);
int sg_cmd_admin(int argc, char **argv);

/* Prints {"error": fmt % arg} on stderr and returns 1. */
int sg__cli_fail(const char *fmt, const char *arg);
/* Opens the store and/or the edge store named by --data-dir / --database / --edge
 * (pass NULL for what is not needed). Returns 0, or prints the error and returns 1. */
int sg__cli_open(sg_args *a, sg_store **st, sg_edge **edge);
/* `admin edge rebuild` (src/admin/edge_rebuild.c): prints its summary or the error; 0 or 1. */
int sg__admin_edge_rebuild(sg_store *st, sg_edge *e);

#endif
