/*
 * SQLite backend: backups and restores (sg_store_backup, sg_store_restore_sqlite in
 * store.h; docs/STORE.md "Backups").
 *
 * A backup is one SQLite file: a `VACUUM INTO` copy of the store, taken in one read
 * transaction (so it holds exactly the writes committed before it began, while writers go
 * on), plus a table `backup_artifacts(hash, bytes)` with every artifact that copy names.
 * On SQLite the edge directory is the only durable copy of the artifacts, so a backup
 * without them could not serve again. Restoring checks the file (an SQLite database that
 * passes quick_check, of a schema this binary knows, with that table), writes each
 * artifact after checking it against its hash, then puts the database in place without
 * the table, under a temporary name renamed last: a restore killed half-way leaves no
 * store behind, and can simply be run again.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "store/sqlite/sqlite_store.h"

static int fail(char *err, size_t errsz, const char *what, sqlite3 *db) {
  snprintf(err, errsz, "%s%s%s", what, db ? ": " : "", db ? sqlite3_errmsg(db) : "");
  return -1;
}

/* Embeds the artifacts the copy at path names; *n gets how many. */
static int embed(const char *path, int64_t keep, sg_store_artifact_fetch fetch, void *ctx,
                 size_t *n, uint64_t *bytes, char *err, size_t errsz) {
  sqlite3 *db = NULL;
  sqlite3_stmt *q = NULL, *ins = NULL;
  int rc = -1;
  *n = 0;
  *bytes = 0;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
    fail(err, errsz, "cannot open the copy", db);
    goto out;
  }
  if (sqlite3_exec(db,
                   "PRAGMA journal_mode=DELETE; PRAGMA synchronous=FULL; BEGIN;"
                   "CREATE TABLE backup_artifacts(hash TEXT PRIMARY KEY, bytes BLOB NOT NULL);",
                   NULL, NULL, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, SG__SQ_IN_USE_SQL, -1, &q, NULL) != SQLITE_OK ||
      sqlite3_bind_int64(q, 1, keep) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO backup_artifacts VALUES (?, ?)", -1, &ins,
                         NULL) != SQLITE_OK) {
    fail(err, errsz, "cannot prepare the copy", db);
    goto out;
  }
  int step;
  while ((step = sqlite3_step(q)) == SQLITE_ROW) {
    const char *hash = (const char *)sqlite3_column_text(q, 0);
    void *data = NULL;
    size_t len = 0;
    if (!hash) continue;
    if (fetch(hash, &data, &len, ctx)) {
      snprintf(err, errsz, "artifact %.80s is not readable on the edge (%s)", hash,
               strerror(errno));
      goto out;
    }
    sqlite3_bind_text(ins, 1, hash, -1, SQLITE_TRANSIENT);
    sqlite3_bind_blob64(ins, 2, data, len, free);
    int s = sqlite3_step(ins);
    sqlite3_reset(ins);
    if (s != SQLITE_DONE) {
      fail(err, errsz, "cannot write an artifact into the copy", db);
      goto out;
    }
    (*n)++;
    *bytes += len;
  }
  if (step != SQLITE_DONE || sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
    fail(err, errsz, "cannot finish the copy", db);
    goto out;
  }
  rc = 0;
out:
  sqlite3_finalize(q);
  sqlite3_finalize(ins);
  sqlite3_close(db);
  return rc;
}

sg_err sg__sqlite_backup(sg_store *base, const char *path, sg_store_artifact_fetch fetch, void *ctx,
                         json_t **summary, char *err, size_t errsz) {
  sg__sq *st = sg__sq_of(base);
  struct stat sb;
  *summary = NULL;
  if (lstat(path, &sb) == 0) {
    snprintf(err, errsz, "%s exists: a backup never overwrites a file", path);
    return SG_E_INVALID_REQUEST;
  }
  char tmp[PATH_MAX];
  if (snprintf(tmp, sizeof tmp, "%s.tmp-%d", path, (int)getpid()) >= (int)sizeof tmp) {
    snprintf(err, errsz, "backup path too long");
    return SG_E_INVALID_REQUEST;
  }
  unlink(tmp);
  int64_t t0 = sg_mono_ms();
  /* One read transaction on a reader: writers go on meanwhile (WAL). */
  sg__sq *r = sg__sq_reader_acquire(st);
  sqlite3_stmt *s = NULL;
  int ok = sqlite3_prepare_v2(r->db, "VACUUM INTO ?", -1, &s, NULL) == SQLITE_OK;
  if (ok) {
    sqlite3_bind_text(s, 1, tmp, -1, SQLITE_TRANSIENT);
    ok = sqlite3_step(s) == SQLITE_DONE;
  }
  if (!ok) fail(err, errsz, "cannot copy the database", r->db);
  sqlite3_finalize(s);
  sg__sq_reader_release(r);
  size_t n = 0;
  uint64_t art_bytes = 0;
  if (!ok || embed(tmp, base->keep_versions, fetch, ctx, &n, &art_bytes, err, errsz) ||
      sg_fsync_path(tmp) || rename(tmp, path) || sg_fsync_parent(path)) {
    if (ok && !err[0]) snprintf(err, errsz, "cannot write %s: %s", path, strerror(errno));
    unlink(tmp);
    return SG_E_INTERNAL;
  }
  if (stat(path, &sb)) sb.st_size = 0;
  *summary = json_pack("{s:s,s:I,s:I,s:I,s:f}", "backup", path, "bytes", (json_int_t)sb.st_size,
                       "artifacts", (json_int_t)n, "artifactBytes", (json_int_t)art_bytes,
                       "seconds", (double)(sg_mono_ms() - t0) / 1000.0);
  return *summary ? SG_E_OK : SG_E_INTERNAL;
}

sg_err sg_store_restore_sqlite(const char *from, const char *data_dir, sg_store_artifact_sink put,
                               void *ctx, json_t **summary, char *err, size_t errsz) {
  char dst[PATH_MAX], tmp[PATH_MAX];
  struct stat sb;
  *summary = NULL;
  err[0] = '\0';
  if (snprintf(dst, sizeof dst, "%s/suggestd.db", data_dir) >= (int)sizeof dst ||
      snprintf(tmp, sizeof tmp, "%s/suggestd.db.restore-tmp", data_dir) >= (int)sizeof tmp) {
    snprintf(err, errsz, "data dir path too long");
    return SG_E_INVALID_REQUEST;
  }
  if (lstat(dst, &sb) == 0) {
    snprintf(err, errsz, "%s already holds a store: restore only into an empty data dir", data_dir);
    return SG_E_INVALID_REQUEST;
  }
  if (sg_mkdirs(data_dir, 0700)) {
    snprintf(err, errsz, "cannot create %s: %s", data_dir, strerror(errno));
    return SG_E_INTERNAL;
  }
  sqlite3 *db = NULL;
  sqlite3_stmt *q = NULL;
  sg_err rc = SG_E_INVALID_REQUEST;
  size_t n = 0;
  int version = -1, known = 0;
  while (sg__sqlite_migrations[known]) known++;
  if (sqlite3_open_v2(from, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "PRAGMA quick_check", -1, &q, NULL) != SQLITE_OK ||
      sqlite3_step(q) != SQLITE_ROW || strcmp((const char *)sqlite3_column_text(q, 0), "ok") != 0) {
    fail(err, errsz, "not a readable suggestd backup", db);
    goto out;
  }
  sqlite3_finalize(q);
  q = NULL;
  if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &q, NULL) == SQLITE_OK &&
      sqlite3_step(q) == SQLITE_ROW)
    version = sqlite3_column_int(q, 0);
  sqlite3_finalize(q);
  q = NULL;
  if (version < 1 || version > known) {
    snprintf(err, errsz,
             "the backup's schema (version %d) is not one this binary knows (1..%d): restore "
             "it with the release that wrote it or a newer one",
             version, known);
    goto out;
  }
  if (sqlite3_prepare_v2(db, "SELECT hash, bytes FROM backup_artifacts ORDER BY hash", -1, &q,
                         NULL) != SQLITE_OK) {
    fail(err, errsz, "not a suggestd backup (no artifacts table)", db);
    goto out;
  }
  int step;
  while ((step = sqlite3_step(q)) == SQLITE_ROW) {
    const char *hash = (const char *)sqlite3_column_text(q, 0);
    const void *data = sqlite3_column_blob(q, 1);
    size_t len = (size_t)sqlite3_column_bytes(q, 1);
    char got[72];
    sg_sha256_tagged(data ? data : "", len, got);
    if (!hash || strcmp(got, hash) != 0) {
      snprintf(err, errsz, "the backup's copy of artifact %.80s does not match its hash",
               hash ? hash : "(null)");
      goto out;
    }
    if (put(hash, data ? data : "", len, ctx)) {
      snprintf(err, errsz, "cannot write artifact %.80s to the edge: %s", hash, strerror(errno));
      rc = SG_E_INTERNAL;
      goto out;
    }
    n++;
  }
  if (step != SQLITE_DONE) {
    fail(err, errsz, "cannot read the backup's artifacts", db);
    goto out;
  }
  sqlite3_finalize(q);
  q = NULL;
  unlink(tmp);
  rc = SG_E_INTERNAL;
  if (sqlite3_prepare_v2(db, "VACUUM INTO ?", -1, &q, NULL) != SQLITE_OK ||
      sqlite3_bind_text(q, 1, tmp, -1, SQLITE_TRANSIENT) != SQLITE_OK ||
      sqlite3_step(q) != SQLITE_DONE) {
    fail(err, errsz, "cannot copy the backup's database", db);
    goto out;
  }
  sqlite3_finalize(q);
  q = NULL;
  sqlite3_close(db);
  db = NULL;
  if (sqlite3_open_v2(tmp, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
      sqlite3_exec(db, "PRAGMA synchronous=FULL; DROP TABLE backup_artifacts; VACUUM;", NULL, NULL,
                   NULL) != SQLITE_OK) {
    fail(err, errsz, "cannot finish the restored database", db);
    goto out;
  }
  sqlite3_close(db);
  db = NULL;
  if (sg_fsync_path(tmp) || rename(tmp, dst) || sg_fsync_parent(dst)) {
    snprintf(err, errsz, "cannot put the database in place: %s", strerror(errno));
    goto out;
  }
  *summary =
      json_pack("{s:s,s:s,s:I}", "restored", from, "dataDir", data_dir, "artifacts", (json_int_t)n);
  rc = *summary ? SG_E_OK : SG_E_INTERNAL;
out:
  sqlite3_finalize(q);
  sqlite3_close(db);
  if (rc != SG_E_OK) unlink(tmp);
  return rc;
}
