/*
 * `suggestd admin backup --to FILE` and `suggestd admin restore --from FILE` (docs/STORE.md,
 * "Backups"): the SQLite store and the artifacts it names, in one file, and back into an
 * empty data dir. After a restore, `suggestd admin edge rebuild` writes every edge record
 * from the restored store (a fresh edge, or one that is newer than the backup).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "search/artifact.h"

/* sg_store_artifact_fetch: the artifact's bytes from the edge, checked against its hash. */
static int fetch(const char *hash, void **data, size_t *len, void *ctx) {
  sg_artifact *a = NULL;
  if (sg_edge_artifact_load(ctx, hash, &a)) return -1;
  size_t n;
  const void *p = sg_artifact_bytes(a, &n);
  *data = malloc(n ? n : 1);
  if (*data) memcpy(*data, p, n);
  *len = n;
  sg_artifact_close(a);
  if (!*data) errno = ENOMEM;
  return *data ? 0 : -1;
}

static int print(json_t *o) {
  char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
  json_decref(o);
  if (!s) return sg__cli_fail("out of memory", NULL);
  printf("%s\n", s);
  free(s);
  return 0;
}

int sg__admin_backup(sg_store *st, sg_edge *e, const char *to) {
  char err[512];
  json_t *summary = NULL;
  if (!to || !*to) return sg__cli_fail("admin backup needs --to FILE", NULL);
  if (sg_store_backup(st, to, fetch, e, &summary, err, sizeof err) != SG_E_OK)
    return sg__cli_fail("backup failed: %s", err);
  json_object_set_new(summary, "next",
                      json_string("to restore: suggestd admin restore --from FILE --data-dir "
                                  "EMPTY_DIR, then suggestd admin edge rebuild --data-dir "
                                  "EMPTY_DIR"));
  return print(summary);
}

/* sg_store_artifact_sink: into the edge (which keeps an existing good copy). */
static int put(const char *hash, const void *data, size_t len, void *ctx) {
  return sg_edge_put_artifact(ctx, hash, data, len);
}

int sg__admin_restore(sg_args *a) {
  const char *from = sg_args_get(a, "from"), *dir = sg_args_get(a, "data-dir");
  if (!from) return sg__cli_fail("admin restore needs --from FILE", NULL);
  if (!dir || sg_args_get(a, "database"))
    return sg__cli_fail("admin restore restores an SQLite store into an empty --data-dir "
                        "(PostgreSQL: pg_restore, see docs/STORE.md \"Backups\")",
                        NULL);
  const char *edge_spec = sg_args_get(a, "edge");
  char path[PATH_MAX];
  if (!edge_spec) {
    snprintf(path, sizeof path, "%s/edge", dir);
    edge_spec = path;
  }
  sg_edge *e = NULL;
  if (sg_edge_open(edge_spec, &e)) return sg__cli_fail("cannot open edge store '%s'", edge_spec);
  char err[512];
  json_t *summary = NULL;
  sg_err rc = sg_store_restore_sqlite(from, dir, put, e, &summary, err, sizeof err);
  sg_edge_close(e);
  if (rc != SG_E_OK) return sg__cli_fail("restore failed: %s", err);
  json_object_set_new(summary, "next",
                      json_string("suggestd admin edge rebuild (with the same --data-dir and "
                                  "--edge) writes every edge record from the restored store"));
  return print(summary);
}
