/*
 * suggestd: the thin binary. Parses the subcommand and hands the remaining words to the
 * part that owns it. Every part's entry point has the shape int f(int argc, char **argv)
 * and returns the process exit code.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "client/client.h"
#include "common/util.h"
#include "common/version.h"
#include "control/control.h"
#include "compiler/cli.h"
#include "runtime/runtime.h"

typedef int (*sg_cmd_fn)(int argc, char **argv);

typedef struct {
  const char *name;
  sg_cmd_fn fn;
  const char *help;
} sg_cmd;

static const sg_cmd commands[] = {
    {"serve", sg_cmd_serve, "control plane + runtime in one process"},
    {"control", sg_cmd_control, "the control plane alone"},
    {"runtime", sg_cmd_runtime, "the public /v1 API alone, on an edge store"},
    {"admin", sg_cmd_admin, "operator commands: workspaces, applications, keys"},
    {"compile", sg_cmd_compile, "compile a JSONL file of items into an artifact"},
    {"inspect", sg_cmd_inspect, "print an artifact's header or answer a query from it"},
    {"import", sg_cmd_import, "stream an NDJSON file of items into a list (--replace, --publish)"},
    {"export", sg_cmd_export, "download a list's items as NDJSON"},
    {"versions", sg_cmd_versions, "activate a superseded version again (rollback)"},
    {"version", NULL, "print the version (also --version)"},
    {NULL, NULL, NULL},
};

static void usage(FILE *f) {
  fprintf(f, "usage: suggestd <command> [flags]\n\ncommands:\n");
  for (const sg_cmd *c = commands; c->name; c++) fprintf(f, "  %-10s %s\n", c->name, c->help);
  fprintf(f, "\n`suggestd <command> --help` shows a command's flags. Every flag is mirrored by\n"
             "an environment variable SUGGESTD_<FLAG>. See README.md for the full reference.\n");
}

int main(int argc, char **argv) {
  if (argc >= 2 && (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0)) {
    printf("suggestd %s (git %s)\n", sg_version(), sg_version_git());
    return 0;
  }
  if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
      strcmp(argv[1], "help") == 0) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (sg_init() != 0) {
    fprintf(stderr, "{\"error\":\"cannot initialise libsodium\"}\n");
    return 1;
  }
  for (const sg_cmd *c = commands; c->name; c++) {
    if (!c->fn || strcmp(c->name, argv[1]) != 0) continue;
    if (sg__cli_wants_help(argc - 2, argv + 2)) return sg__cli_help(c->name, stdout) ? 2 : 0;
    return c->fn(argc - 2, argv + 2);
  }
  /* Through the JSON encoder, so a command word with quotes still gives valid JSON. */
  sg__cli_fail("unknown command '%s'; see suggestd --help", argv[1]);
  return 2;
}
