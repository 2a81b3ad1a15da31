/*
 * `suggestd <command> --help`: one usage text per subcommand, printed on stdout with exit
 * status 0. The flags here are the ones each command's sg_flag_spec table accepts;
 * tests/api/test_cli_help.py checks that every command answers --help and that every flag a
 * command accepts is named in its text.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

#define STORE_FLAGS                                                                                \
  "  --data-dir DIR            SQLite store DIR/suggestd.db and edge directory DIR/edge\n"         \
  "  --database URL            the store instead: a directory, a SQLite file (path ending in\n"    \
  "                            .db, or sqlite:///abs/x.db), or postgres://user@host:5432/db\n"     \
  "  --edge URL                the edge store instead: a directory, or\n"                          \
  "                            redis://[[user]:password@]host[:port][/db][?prefix=sg]\n"

#define LIMIT_FLAGS                                                                                \
  "  --keep-versions N                         versions per list whose artifacts are kept for\n"   \
  "                                            rollback: the active one and N - 1 before (2)\n"    \
  "  --max-lists-per-workspace N               lists a workspace may hold (10000)\n"               \
  "  --max-members-per-workspace N             active members of a workspace (1000)\n"             \
  "  --max-publishable-keys-per-application N  active publishable keys (100)\n"                    \
  "  --max-secret-keys-per-application N       active secret keys (20)\n"                          \
  "                            past a limit a create answers 409 limit_reached naming it\n"

#define FOOTER                                                                                     \
  "\nEvery flag is mirrored by an environment variable SUGGESTD_<FLAG> (upper case, '-' to\n"      \
  "'_'), used when the flag is absent. Flags may come before or after positional arguments.\n"

static const char serve_help[] =
    "usage: suggestd serve --data-dir DIR [flags]\n"
    "       suggestd serve --database URL --edge URL [flags]\n"
    "\nThe control plane (/api/v1, /dashboard) and the runtime (/v1) in one process.\n"
    "\nflags:\n" STORE_FLAGS "  --control-listen ADDR     control-plane address (127.0.0.1:8080)\n"
    "  --runtime-listen ADDR     runtime address (127.0.0.1:8081)\n"
    "  --metrics-listen ADDR     Prometheus metrics at http://ADDR/metrics (off)\n"
    "  --control-rate-key N      control-plane requests per minute per secret key (60; 0 off)\n"
    "  --control-rate-ip N       control-plane requests per minute per client IP (120; 0 off)\n"
    "  --control-per-ip-connections N  control-plane connections per client IP (64; 0 no cap)\n"
    "  --control-head-timeout S  seconds for a request line and headers to arrive (10)\n"
    "  --trusted-proxies CIDR,...  reverse proxies (e.g. 10.0.0.0/8,::1): from these peers\n"
    "                            the client address is the right-most untrusted hop of\n"
    "                            Forwarded / X-Forwarded-For, for the per-IP limits and the\n"
    "                            access logs (both listeners); they are exempt from the\n"
    "                            per-IP connection cap\n"
    "  --sync-publish-limit N    lists with more items publish asynchronously (10000)\n"
    "  --selection-rate N        selection reports per minute per publishable key (600)\n"
    "  --import-max-bytes N      cap of one import body (536870912)\n"
    "  --artifact-grace S        seconds before an unused artifact is deleted (60)\n"
    "  --publish-lease-seconds S how long a claim on a queued version lasts (30)\n"
    "  --recompile-per-minute N  after an upgrade, active artifacts of the previous format\n"
    "                            compiled again per minute, once every live runtime reads\n"
    "                            the current one (10; 0 never; docs/UPGRADING.md)\n"
    "  --session-idle-seconds S  a dashboard session ends after this long unused (43200)\n"
    "  --dashboard-secure-cookies  mark the session cookie Secure (behind TLS)\n"
    "  --signin-rate-ip N        dashboard sign-ins per minute per client IP (20; 0 off)\n"
    "  --signin-rate-email N     dashboard sign-ins per minute per email (10; 0 off)\n"
    "  --invite-rate N           member invitations per minute per workspace (10; 0 off)\n"
    "  --worker-queue N          requests waiting per worker pool (password hashing,\n"
    "                            preview artifact loads) before 503 server_busy (32)\n"
    "  --runtime-public-url URL  the runtime's origin as browsers reach it\n"
    "  --analytics on|off        count queries and selections for search analytics (on)\n"
    "  --analytics-retention-days N  days analytics are kept, then deleted (90)\n" LIMIT_FLAGS
    "\nADDR is host:port, [v6]:port or :port (port 0 picks a free one).\n" FOOTER;

static const char control_help[] =
    "usage: suggestd control --data-dir DIR [flags]\n"
    "       suggestd control --database URL --edge URL [flags]\n"
    "\nThe control plane alone (/api/v1 and /dashboard); a fleet runs it on PostgreSQL and\n"
    "Redis next to `suggestd runtime` processes. It takes the flags of `suggestd serve`\n"
    "except those of the runtime listener:\n"
    "\nflags:\n" STORE_FLAGS "  --control-listen ADDR     control-plane address (127.0.0.1:8080)\n"
    "  --metrics-listen ADDR     Prometheus metrics at http://ADDR/metrics (off)\n"
    "  --control-rate-key N, --control-rate-ip N, --control-per-ip-connections N,\n"
    "  --control-head-timeout S, --trusted-proxies CIDR,..., --sync-publish-limit N,\n"
    "  --import-max-bytes N,\n"
    "  --artifact-grace S, --publish-lease-seconds S, --recompile-per-minute N,\n"
    "  --session-idle-seconds S,\n"
    "  --dashboard-secure-cookies, --signin-rate-ip N, --signin-rate-email N,\n"
    "  --invite-rate N, --worker-queue N, --runtime-public-url URL, --runtime-listen ADDR,\n"
    "  --selection-rate N, --analytics on|off,\n"
    "  --analytics-retention-days N  as for serve (suggestd serve --help)\n" LIMIT_FLAGS FOOTER;

static const char runtime_help[] =
    "usage: suggestd runtime --data-dir DIR [flags]\n"
    "       suggestd runtime --edge URL --state-dir DIR [flags]\n"
    "\nThe public /v1 API alone, on an edge store; it never opens the database.\n"
    "\nflags:\n"
    "  --data-dir DIR            read the edge directory DIR/edge\n"
    "  --edge URL                the edge store instead: a directory or redis://host[:port]\n"
    "  --state-dir DIR           usage counters, selection events and fetched artifacts\n"
    "                            (required with a Redis edge store)\n"
    "  --runtime-listen ADDR     address (127.0.0.1:8081)\n"
    "  --selection-rate N        selection reports per minute per publishable key (600)\n"
    "  --threads N               HTTP worker threads (0: one per CPU)\n"
    "  --quiet                   no access log\n"
    "  --trusted-proxies CIDR,...  reverse proxies: from these peers the access log's\n"
    "                            clientIp is the right-most untrusted hop of Forwarded /\n"
    "                            X-Forwarded-For (as for serve)\n"
    "  --analytics on|off        count queries and selections for search analytics (on)\n"
    "  --metrics-listen ADDR     Prometheus metrics at http://ADDR/metrics (off)\n" FOOTER;

static const char compile_help[] =
    "usage: suggestd compile --input FILE --output FILE [flags]\n"
    "\nCompiles a JSONL file of items (one JSON object a line: id, value, displayValue,\n"
    "aliases, rank, parentId, locales) into an artifact offline. Prints\n"
    "{\"contentHash\",\"itemCount\",\"bytes\"}.\n"
    "\nflags:\n"
    "  --input FILE              the JSONL items\n"
    "  --output FILE             the artifact to write\n"
    "  --default-locale L        the default locale (en)\n"
    "  --locales L1,L2           supported locales, comma separated (the default locale)\n"
    "  --max-items N             refuse a file with more items (0: no cap)\n"
    "  --without-words           leave out the sections of tiers 3 and 4 (words in any order\n"
    "                            and run together): only to measure what they cost\n"
    "  --without-skip-tables     leave out the typo search's skip tables (same answers,\n"
    "                            slower): only to measure what they cost\n" FOOTER;

static const char inspect_help[] =
    "usage: suggestd inspect FILE [flags]\n"
    "\nPrints an artifact's header as JSON, or with --query the items the runtime would\n"
    "answer.\n"
    "\nflags:\n"
    "  --query Q                 answer this query from the artifact\n"
    "  --locale L                the locale of the query\n"
    "  --typo-tolerance P        default, off, or MIN1,MIN2 (as the list's queryPolicy)\n" FOOTER;

#define TRANSFER_FLAGS                                                                             \
  "  --control-url URL         the control plane, e.g. http://127.0.0.1:8080\n"                    \
  "  --secret-key-file F       a file holding the secret key (first line)\n"                       \
  "  --list L                  the list id (lst_...)\n"

static const char import_help[] =
    "usage: suggestd import --control-url URL --secret-key-file F --list L [flags] FILE\n"
    "\nStreams a file of items into a list (FILE - reads stdin). Items go live when the list\n"
    "is published (--publish, or POST /api/v1/lists/{id}/versions).\n"
    "\nflags:\n" TRANSFER_FLAGS
    "  --replace                 the file becomes the list's whole content\n"
    "  --publish                 publish a version after the import\n"
    "  --idempotency-key K       the Idempotency-Key of the import request\n"
    "  --format F                ndjson, json, csv or tsv (from the name and first bytes)\n"
    "  --value-column C          CSV/TSV column of value (value)\n"
    "  --display-column C        column of displayValue (displayValue)\n"
    "  --rank-column C           column of rank (rank)\n"
    "  --aliases-column C        column of aliases (aliases)\n"
    "  --aliases-separator S     separator of aliases in that column (|)\n"
    "  --parent-column C         column of parentValue (parentValue)\n"
    "  --order-column C          column of displayOrder (displayOrder)\n"
    "  --description-column C    column of description (description)\n"
    "  --delimiter D             field delimiter, one character or \\t (, for csv; tab for "
    "tsv)\n" FOOTER;

static const char export_help[] =
    "usage: suggestd export --control-url URL --secret-key-file F --list L [FILE]\n"
    "\nDownloads a list's current items as NDJSON into FILE (default: stdout).\n"
    "\nflags:\n" TRANSFER_FLAGS FOOTER;

static const char versions_help[] =
    "usage: suggestd versions activate N --control-url URL --secret-key-file F --list L\n"
    "\nMakes version N of the list active again (rollback): the active version becomes\n"
    "superseded and the runtime serves N within a second. N must be a version that was\n"
    "active and whose artifact is still kept (the control plane keeps the versions set by\n"
    "its keep-versions flag, 2 by default).\n"
    "Prints the version with its edgeSync.\n"
    "\nflags:\n" TRANSFER_FLAGS
    "  --if-match ETAG           only if the list's ETag is still ETAG\n" FOOTER;

static const char admin_head[] =
    "usage: suggestd admin <command> --data-dir DIR\n"
    "       suggestd admin <command> --database URL --edge URL\n"
    "\nOperator commands. Each prints one JSON object on stdout and exits 0, or prints\n"
    "{\"error\": ...} on stderr and exits non-zero. They work while a server runs.\n"
    "\ncommands:\n";

static const char admin_tail[] =
    "\nflags:\n" STORE_FLAGS LIMIT_FLAGS
    "  --to FILE                 backup: the file to write (an SQLite store and its artifacts)\n"
    "  --from FILE               restore: the backup to read into an empty --data-dir\n" FOOTER;

int sg__cli_help(const char *cmd, FILE *f) {
  static const struct {
    const char *name, *text;
  } texts[] = {
      {"serve", serve_help},     {"control", control_help},   {"runtime", runtime_help},
      {"compile", compile_help}, {"inspect", inspect_help},   {"import", import_help},
      {"export", export_help},   {"versions", versions_help}, {NULL, NULL},
  };
  if (strcmp(cmd, "admin") == 0) {
    fputs(admin_head, f);
    sg__admin_usage(f);
    fputs(admin_tail, f);
    return 0;
  }
  for (size_t i = 0; texts[i].name; i++)
    if (strcmp(texts[i].name, cmd) == 0) {
      fputs(texts[i].text, f);
      return 0;
    }
  return -1;
}

bool sg__cli_wants_help(int argc, char **argv) {
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0) return false;
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return true;
  }
  return false;
}
