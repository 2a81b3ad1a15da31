/*
 * PostgreSQL backend: the durable copy of every artifact (docs/DESIGN.md §6; docs/STORE.md,
 * "Artifact copies"), and the edge outbox walk of `admin edge rebuild`.
 *
 * A copy is a header row (artifact_copies: hash, size, chunk count, write time) and its
 * bytes in chunks of CHUNK bytes (artifact_chunks), written in one transaction: a copy is
 * either whole or absent. The publish pipeline commits it before the version can go
 * staged, so a crash never leaves a staged version without its copy. Chunks are sent and
 * read in binary (no hex doubling) and stored uncompressed (STORAGE EXTERNAL: artifacts
 * are mostly incompressible, and TOAST compression would only cost time).
 *
 * The two tables are created on first write, under an advisory lock, rather than by a
 * numbered migration: they depend on nothing else in the schema, and a reader treats
 * "no such table" as "no copies", so the order of schema changes does not matter.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "store/postgres/pg.h"

/* Bytes per chunk: large enough that a 100 MB artifact is 25 rows, small enough that one
 * row (and one bind buffer) stays far below PostgreSQL's 1 GB field limit. */
#define CHUNK ((size_t)4 << 20)
/* Whole attempts of a copy's transaction before the publish gives up (the write is
 * idempotent, so a retry after a lost connection is safe). */
#define PUT_ATTEMPTS 3
#define TABLES_LOCK "7430298412"

static const char q_exists[] = "SELECT to_regclass('artifact_chunks') IS NOT NULL AS present";
static const char q_create[] =
    "CREATE TABLE IF NOT EXISTS artifact_copies(hash TEXT COLLATE \"C\" PRIMARY KEY,"
    " size BIGINT NOT NULL, chunks INTEGER NOT NULL, written_at BIGINT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS artifact_chunks(hash TEXT COLLATE \"C\" NOT NULL"
    " REFERENCES artifact_copies(hash) ON DELETE CASCADE, n INTEGER NOT NULL,"
    " data BYTEA NOT NULL, PRIMARY KEY(hash, n));"
    "ALTER TABLE artifact_chunks ALTER COLUMN data SET STORAGE EXTERNAL";

static void log_failure(const char *what, PGconn *c) {
  /* libpq messages end with a newline; JSON logs keep one line per event. */
  char one[512];
  snprintf(one, sizeof one, "%s", PQerrorMessage(c));
  for (char *p = one; *p; p++)
    if (*p == '\n' || *p == '"' || *p == '\\') *p = ' ';
  fprintf(stderr, "{\"level\":\"error\",\"msg\":\"postgres %s\",\"detail\":\"%s\"}\n", what, one);
}

/* 1 when the tables exist, 0 when not, -1 on an error. */
static int tables_exist(PGconn *c) {
  PGresult *r = sg__pg_q(c, q_exists, 0, NULL);
  if (!r) return -1;
  int col = sg__pg_col(r, "present");
  int yes = col < 0 ? -1 : PQntuples(r) == 1 && strcmp(PQgetvalue(r, 0, col), "t") == 0;
  PQclear(r);
  return yes;
}

/* Creates the tables inside the caller's transaction; processes racing here serialise on
 * the lock and the later ones find the tables made. */
static int ensure_tables(PGconn *c) {
  int have = tables_exist(c);
  if (have) return have < 0 ? -1 : 0;
  if (sg__pg_x(c, "SELECT pg_advisory_xact_lock(" TABLES_LOCK ")", 0, NULL)) return -1;
  PGresult *r = PQexec(c, q_create); /* several statements: the simple protocol */
  int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
  if (!ok) log_failure("artifact tables", c);
  PQclear(r);
  return ok ? 0 : -1;
}

/* ---- put ------------------------------------------------------------------------------ */

typedef struct {
  const char *hash;
  const uint8_t *data;
  size_t len;
} put_ctx;

static int put_chunk(PGconn *c, const char *hash, int n, const uint8_t *p, size_t len) {
  char nb[24];
  const char *vals[] = {hash, sg__pg_int(n, nb), (const char *)p};
  int lens[] = {0, 0, (int)len};
  int fmts[] = {0, 0, 1};
  PGresult *r = PQexecParams(c, "INSERT INTO artifact_chunks(hash, n, data) VALUES($1, $2, $3)", 3,
                             NULL, vals, lens, fmts, 0);
  int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
  if (!ok) log_failure("artifact chunk", c);
  PQclear(r);
  return ok ? 0 : -1;
}

static sg_err put_fn(PGconn *c, void *arg) {
  put_ctx *x = arg;
  if (ensure_tables(c)) return SG_E_INTERNAL;
  int chunks = (int)((x->len + CHUNK - 1) / CHUNK);
  char size[24], nch[24], now[24];
  const char *p[] = {x->hash, sg__pg_int((int64_t)x->len, size), sg__pg_int(chunks, nch),
                     sg__pg_int(sg_now_s(), now)};
  /* A copy already stored under the hash is whole (it was committed with its chunks):
   * keep it and refresh its write time, as the edge does for a file it finds present. A
   * second writer of the same hash waits here on the row's lock until the first commits. */
  PGresult *r = sg__pg_q(c,
                         "INSERT INTO artifact_copies(hash, size, chunks, written_at)"
                         " VALUES($1, $2, $3, $4) ON CONFLICT(hash) DO UPDATE"
                         " SET written_at=EXCLUDED.written_at RETURNING xmax = 0 AS inserted, size",
                         4, p);
  static const char *const put_names[] = {"inserted", "size"};
  int col[2];
  if (!r || sg__pg_cols(r, put_names, col, 2) || PQntuples(r) != 1) {
    PQclear(r);
    return SG_E_INTERNAL;
  }
  bool inserted = strcmp(PQgetvalue(r, 0, col[0]), "t") == 0;
  bool same = sg__pg_i(r, 0, col[1]) == (int64_t)x->len;
  PQclear(r);
  if (!inserted && same) return SG_E_OK;
  if (!inserted) { /* cannot happen for a content hash; rewrite rather than trust it */
    if (sg__pg_x(c, "DELETE FROM artifact_chunks WHERE hash=$1", 1, p) ||
        sg__pg_x(c, "UPDATE artifact_copies SET size=$2, chunks=$3 WHERE hash=$1", 3, p))
      return SG_E_INTERNAL;
  }
  for (int i = 0; i < chunks; i++) {
    size_t off = (size_t)i * CHUNK;
    size_t n = x->len - off < CHUNK ? x->len - off : CHUNK;
    if (put_chunk(c, x->hash, i, x->data + off, n)) return SG_E_INTERNAL;
  }
  return SG_E_OK;
}

sg_err sg__pg_artifact_put(sg_store *st, const char *content_hash, const void *data, size_t len) {
  if (len > (size_t)INT32_MAX * CHUNK) return SG_E_INTERNAL;
  put_ctx x = {content_hash, data, len};
  sg_err rc = SG_E_INTERNAL;
  for (int i = 0; i < PUT_ATTEMPTS && rc != SG_E_OK; i++)
    rc = sg__pg_tx(sg__pg_of(st), SG__PG_RC, put_fn, &x);
  return rc;
}

/* ---- get ------------------------------------------------------------------------------ */

/* Not through sg__pg_tx: cb must see each byte once, and a retried body would repeat
 * them. One read-only snapshot, so a concurrent delete cannot tear the copy. */
sg_err sg__pg_artifact_get(sg_store *base, const char *content_hash, uint64_t *size,
                           sg_store_chunk_cb cb, void *ctx) {
  sg__pg *st = sg__pg_of(base);
  PGconn *c = sg__pg_acquire(st);
  if (!c) return SG_E_UNAVAILABLE;
  sg_err rc = SG_E_INTERNAL;
  PGresult *r = NULL;
  if (sg__pg_x(c, "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY", 0, NULL)) goto out;
  int have = tables_exist(c);
  if (have <= 0) {
    rc = have == 0 ? SG_E_NOT_FOUND : SG_E_INTERNAL;
    goto out;
  }
  const char *p[] = {content_hash, NULL};
  r = sg__pg_q(c, "SELECT size, chunks FROM artifact_copies WHERE hash=$1", 1, p);
  if (!r) goto out;
  static const char *const get_names[] = {"size", "chunks"};
  int col[2];
  if (sg__pg_cols(r, get_names, col, 2)) goto out;
  if (PQntuples(r) != 1) {
    rc = SG_E_NOT_FOUND;
    goto out;
  }
  int64_t total = sg__pg_i(r, 0, col[0]), chunks = sg__pg_i(r, 0, col[1]), seen = 0;
  PQclear(r);
  r = NULL;
  if (size) *size = (uint64_t)total;
  for (int64_t i = 0; i < chunks; i++) {
    char nb[24];
    p[1] = sg__pg_int(i, nb);
    /* Binary results: the bytes as stored, no hex decoding. */
    r = PQexecParams(c, "SELECT data FROM artifact_chunks WHERE hash=$1 AND n=$2", 2, NULL, p, NULL,
                     NULL, 1);
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) goto out; /* torn: INTERNAL */
    int dc = sg__pg_col(r, "data");
    if (dc < 0) goto out;
    int len = PQgetlength(r, 0, dc);
    seen += len;
    if (seen > total || cb(PQgetvalue(r, 0, dc), (size_t)len, ctx)) goto out;
    PQclear(r);
    r = NULL;
  }
  if (seen == total) rc = SG_E_OK;
out:
  PQclear(r);
  sg__pg_release(st, c); /* rolls back the read-only transaction */
  return rc;
}

/* ---- delete and list ------------------------------------------------------------------ */

static sg_err delete_fn(PGconn *c, void *arg) {
  int have = tables_exist(c);
  if (have <= 0) return have == 0 ? SG_E_NOT_FOUND : SG_E_INTERNAL;
  const char *p[] = {arg};
  PGresult *r = sg__pg_q(c, "DELETE FROM artifact_copies WHERE hash=$1", 1, p);
  if (!r) return SG_E_INTERNAL;
  int64_t n = sg__pg_changed(r);
  PQclear(r);
  return n ? SG_E_OK : SG_E_NOT_FOUND;
}

sg_err sg__pg_artifact_delete(sg_store *st, const char *content_hash) {
  return sg__pg_tx(sg__pg_of(st), SG__PG_RC, delete_fn, (void *)content_hash);
}

typedef struct {
  PGresult *res;
} list_ctx;

static sg_err list_fn(PGconn *c, void *arg) {
  list_ctx *x = arg;
  PQclear(x->res);
  x->res = NULL;
  int have = tables_exist(c);
  if (have <= 0) return have == 0 ? SG_E_OK : SG_E_INTERNAL;
  x->res = sg__pg_q(c, "SELECT hash, written_at FROM artifact_copies", 0, NULL);
  return x->res ? SG_E_OK : SG_E_INTERNAL;
}

sg_err sg__pg_artifacts(sg_store *st, int (*cb)(const char *hex, int64_t written_at, void *ctx),
                        void *ctx) {
  list_ctx x = {NULL};
  sg_err rc = sg__pg_tx(sg__pg_of(st), SG__PG_RO, list_fn, &x);
  if (rc != SG_E_OK || !x.res) return rc;
  static const char *const names[] = {"hash", "written_at"};
  int col[2];
  if (sg__pg_cols(x.res, names, col, 2)) {
    PQclear(x.res);
    return SG_E_INTERNAL;
  }
  for (int i = 0; i < PQntuples(x.res); i++) {
    const char *h = PQgetvalue(x.res, i, col[0]);
    if (strncmp(h, "sha256:", 7) == 0 && cb(h + 7, sg__pg_i(x.res, i, col[1]), ctx)) break;
  }
  PQclear(x.res);
  return SG_E_OK;
}
