/*
 * Command-line entry points of the compiler part (see src/main.c).
 *
 *   suggestd compile --input items.jsonl --output FILE [--default-locale en] [--locales en,fr]
 *       Validates and compiles a JSONL file of items (one JSON object a line with the
 *       fields id, value, displayValue, aliases, rank, parentId, locales; an item
 *       without an id gets "itm_<line number>"). Prints {"contentHash","itemCount","bytes"}.
 *   suggestd inspect FILE [--query Q] [--locale L]
 *       Prints the artifact's header as JSON, or with --query the JSON array of the items
 *       the query returns.
 *
 * Both print one JSON object on stdout and exit 0, or {"error": …} on stderr and exit 1.
 */
#ifndef SG_COMPILER_CLI_H
#define SG_COMPILER_CLI_H

int sg_cmd_compile(int argc, char **argv);
int sg_cmd_inspect(int argc, char **argv);

#endif
