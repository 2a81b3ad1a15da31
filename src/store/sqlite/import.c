/*
 * SQLite backend: bulk import (staging + one-transaction apply), export cursors and the
 * pruning of item history.
 *
 * Staging: each import owns a scratch database file <data-dir>/import-tmp/<random>.db
 * opened on its own connection with journaling and fsync off (it is thrown away on any
 * failure), so the request thread stages rows while other requests use the store. The
 * staged table's UNIQUE(value) finds duplicate lines as they arrive. Apply: the main
 * connection ATTACHes the file and computes everything set-wise in ONE write
 * transaction under one new item clock: match by value, resolve parentValue, mark what
 * changed, end old rows, insert new rows. With the main database in WAL mode the
 * transaction is atomic for it (the scratch file is not, and need not be): a crash leaves
 * the old item set or the new one.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "store/sqlite/sqlite_store.h"

/* Staged rows per scratch transaction. */
#define STAGE_BATCH 20000

typedef struct {
  sg_store_import base; /* first: the generic handle */
  sqlite3 *db;
  sqlite3_stmt *ins;
  char path[4400];
  size_t in_batch;
} sq_import;

static void scratch_dir(const sg__sq *st, char *out, size_t outsz) {
  snprintf(out, outsz, "%s/import-tmp", st->dir);
}

void sg__sqlite_import_cleanup(sg_store *base) {
  sg__sq *st = sg__sq_of(base);
  char dir[4200], path[4500];
  scratch_dir(st, dir, sizeof dir);
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)))
    if (strstr(e->d_name, ".db")) {
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      unlink(path);
    }
  closedir(d);
}

void sg__sqlite_import_free(sg_store_import *handle) {
  sq_import *imp = (sq_import *)handle;
  if (!imp) return;
  if (imp->ins) sqlite3_finalize(imp->ins);
  if (imp->db) sqlite3_close(imp->db);
  if (*imp->path) unlink(imp->path);
  free(imp);
}

sg_err sg__sqlite_import_begin(sg_store *base, sg_store_import **out) {
  sg__sq *st = sg__sq_of(base);
  static const char schema[] =
      "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-16384;"
      "CREATE TABLE staged(line INTEGER PRIMARY KEY, value TEXT NOT NULL UNIQUE,"
      "  display_value TEXT NOT NULL, aliases TEXT, rank INTEGER NOT NULL,"
      "  parent_value TEXT, locales TEXT, display_order INTEGER NOT NULL, description TEXT,"
      "  new_id TEXT NOT NULL, old_seq INTEGER, old_id TEXT, old_created INTEGER,"
      "  parent_id TEXT, changed INTEGER NOT NULL DEFAULT 1);"
      "BEGIN;";
  static const char q_ins[] =
      "INSERT INTO staged(line, value, display_value, aliases, rank, parent_value, locales,"
      " display_order, description, new_id) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
  sq_import *imp = calloc(1, sizeof *imp);
  if (!imp) return SG_E_INTERNAL;
  imp->base.ops = &sg__sqlite_store_ops;
  char dir[4200], rnd[40];
  scratch_dir(st, dir, sizeof dir);
  sg_random_id("import-", rnd, sizeof rnd);
  snprintf(imp->path, sizeof imp->path, "%s/%s.db", dir, rnd);
  if (sg_mkdirs(dir, 0700) ||
      sqlite3_open_v2(imp->path, &imp->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
          SQLITE_OK ||
      sqlite3_exec(imp->db, schema, NULL, NULL, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(imp->db, q_ins, -1, &imp->ins, NULL) != SQLITE_OK) {
    sg__sqlite_import_free(&imp->base);
    return SG_E_INTERNAL;
  }
  *out = &imp->base;
  return SG_E_OK;
}

sg_err sg__sqlite_import_add(sg_store_import *handle, int64_t line, const json_t *item,
                             const char *parent_value) {
  sq_import *imp = (sq_import *)handle;
  char id[32];
  sg_random_id("itm_", id, sizeof id);
  char *aliases = sg__sq_json_text(json_object_get(item, "aliases"));
  char *locales = sg__sq_json_text(json_object_get(item, "locales"));
  sqlite3_stmt *s = imp->ins;
  sqlite3_bind_int64(s, 1, line);
  sg__sq_bind_item(s, 2, item, aliases, parent_value, locales);
  sg__sq_text(s, 10, id);
  int step = sqlite3_step(s);
  int ext = sqlite3_extended_errcode(imp->db);
  sqlite3_reset(s);
  sqlite3_clear_bindings(s);
  free(aliases);
  free(locales);
  if (step != SQLITE_DONE)
    return ext == SQLITE_CONSTRAINT_UNIQUE ? SG_E_DUPLICATE_VALUE : SG_E_INTERNAL;
  if (++imp->in_batch >= STAGE_BATCH) {
    imp->in_batch = 0;
    if (sqlite3_exec(imp->db, "COMMIT; BEGIN;", NULL, NULL, NULL) != SQLITE_OK)
      return SG_E_INTERNAL;
  }
  return SG_E_OK;
}

sg_err sg__sqlite_import_line_of(sg_store_import *handle, const char *value, int64_t *line) {
  sq_import *imp = (sq_import *)handle;
  /* Only asked after a duplicate, so the statement is not worth keeping prepared. */
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(imp->db, "SELECT line FROM staged WHERE value = ?", -1, &s, NULL) !=
      SQLITE_OK)
    return SG_E_INTERNAL;
  sg__sq_text(s, 1, value);
  int step = sqlite3_step(s);
  if (step == SQLITE_ROW) *line = sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  return step == SQLITE_ROW ? SG_E_OK : step == SQLITE_DONE ? SG_E_NOT_FOUND : SG_E_INTERNAL;
}

/* Runs one apply statement with ?1 = list id, ?2 = clock, ?3 = now; returns the changed
 * row count or -1. The statements touch the attached schema, so they are prepared per
 * import rather than kept in the statement cache. */
static int64_t exec_apply(sg__sq *st, const char *sql, const char *list_id, int64_t clock) {
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK) {
    fprintf(stderr, "{\"level\":\"error\",\"msg\":\"import prepare\",\"detail\":\"%s\"}\n",
            sqlite3_errmsg(st->db));
    return -1;
  }
  int n = sqlite3_bind_parameter_count(s);
  if (n >= 1) sg__sq_text(s, 1, list_id);
  if (n >= 2) sqlite3_bind_int64(s, 2, clock);
  if (n >= 3) sqlite3_bind_int64(s, 3, sg_now_s());
  int step = sqlite3_step(s);
  sqlite3_finalize(s);
  return step == SQLITE_DONE ? sqlite3_changes64(st->db) : -1;
}

sg_err sg__sqlite_import_apply(sg_store *base, sg_store_import *handle, const char *workspace_id,
                               const char *list_id, bool replace, size_t max_bad,
                               sg_import_counts *counts, json_t **bad_lines, int64_t *n_bad) {
  sq_import *imp = (sq_import *)handle;
  sg__sq *st = sg__sq_of(base);
  /* Every current item matched by value: its row, id and createdAt. */
  static const char q_match[] =
      "UPDATE imp.staged SET (old_seq, old_id, old_created) = (SELECT seq, id, created_at"
      " FROM main.items i WHERE i.list_id=?1 AND i.value=staged.value AND i.to_clock IS NULL)";
  static const char q_parent_staged[] =
      "UPDATE imp.staged SET parent_id=(SELECT COALESCE(p.old_id, p.new_id) FROM imp.staged p"
      " WHERE p.value=staged.parent_value) WHERE parent_value IS NOT NULL";
  static const char q_parent_list[] =
      "UPDATE imp.staged SET parent_id=(SELECT id FROM main.items i WHERE i.list_id=?1"
      " AND i.value=staged.parent_value AND i.to_clock IS NULL)"
      " WHERE parent_value IS NOT NULL AND parent_id IS NULL";
  static const char q_bad[] = "SELECT line FROM imp.staged WHERE parent_value IS NOT NULL"
                              " AND parent_id IS NULL ORDER BY line";
  static const char q_same[] =
      "UPDATE imp.staged SET changed=0 WHERE old_seq IS NOT NULL AND EXISTS(SELECT 1 FROM"
      " main.items i WHERE i.seq=staged.old_seq AND i.value=staged.value"
      " AND i.display_value=staged.display_value AND i.aliases IS staged.aliases"
      " AND i.rank=staged.rank AND i.parent_id IS staged.parent_id"
      " AND i.locales IS staged.locales AND i.display_order=staged.display_order"
      " AND i.description IS staged.description)";
  static const char q_counts[] =
      "SELECT COALESCE(SUM(old_seq IS NULL), 0), COALESCE(SUM(old_seq IS NOT NULL AND changed), 0),"
      " COALESCE(SUM(old_seq IS NOT NULL AND NOT changed), 0) FROM imp.staged";
  static const char q_delete[] =
      "UPDATE main.items SET to_clock=?2 WHERE list_id=?1 AND to_clock IS NULL"
      " AND value NOT IN (SELECT value FROM imp.staged)";
  static const char q_end[] =
      "UPDATE main.items SET to_clock=?2 WHERE seq IN (SELECT old_seq FROM imp.staged"
      " WHERE old_seq IS NOT NULL AND changed) AND list_id=?1";
  static const char q_insert[] =
      "INSERT INTO main.items(id, list_id, value, display_value, aliases, rank, parent_id,"
      " locales, display_order, description, created_at, from_clock)"
      " SELECT COALESCE(old_id, new_id), ?1,"
      " value, display_value, aliases, rank, parent_id, locales, display_order, description,"
      " COALESCE(old_created, ?3), ?2 FROM imp.staged WHERE changed"
      /* In the order of the (display_order, id) index: with random ids, file order would
       * scatter the inserts over that index and the id index; this order appends. */
      " ORDER BY display_order, COALESCE(old_id, new_id)";
  static const char q_clock[] = "UPDATE main.lists SET item_clock=?2 WHERE id=?1";
  static const char q_cur_clock[] = "SELECT item_clock FROM main.lists WHERE id=?1";

  memset(counts, 0, sizeof *counts);
  *bad_lines = NULL;
  *n_bad = 0;
  /* Close the staging side first: the main connection takes the file over. */
  if (sqlite3_exec(imp->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) return SG_E_INTERNAL;
  sqlite3_finalize(imp->ins);
  imp->ins = NULL;
  sqlite3_close(imp->db);
  imp->db = NULL;

  sg_err rc = SG_E_INTERNAL;
  bool attached = false;
  pthread_mutex_lock(&st->mu);
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(st->db, "ATTACH ? AS imp", -1, &s, NULL) != SQLITE_OK) goto out;
  sqlite3_bind_text(s, 1, imp->path, -1, SQLITE_STATIC);
  attached = sqlite3_step(s) == SQLITE_DONE;
  sqlite3_finalize(s);
  if (!attached ||
      sqlite3_exec(st->db, "PRAGMA imp.journal_mode=OFF; PRAGMA imp.synchronous=OFF;", NULL, NULL,
                   NULL) != SQLITE_OK ||
      sg__sq_cache_kib(st, SG__SQ_IMPORT_CACHE_KIB) || sg__sq_begin(st))
    goto out;
  rc = sg__sq_list_writable(st, workspace_id, list_id);
  if (rc != SG_E_OK) goto end;
  rc = SG_E_INTERNAL;
  if (exec_apply(st, q_match, list_id, 0) < 0 || exec_apply(st, q_parent_staged, list_id, 0) < 0 ||
      (!replace && exec_apply(st, q_parent_list, list_id, 0) < 0))
    goto end;
  /* parentValue that names nothing: report the lines, change nothing. */
  if (sqlite3_prepare_v2(st->db, q_bad, -1, &s, NULL) != SQLITE_OK) goto end;
  int step;
  while ((step = sqlite3_step(s)) == SQLITE_ROW) {
    if (!*bad_lines) *bad_lines = json_array();
    if ((size_t)*n_bad < max_bad)
      json_array_append_new(*bad_lines, json_integer(sqlite3_column_int64(s, 0)));
    (*n_bad)++;
  }
  sqlite3_finalize(s);
  if (step != SQLITE_DONE) goto end;
  if (*n_bad) {
    rc = SG_E_INVALID_REQUEST;
    goto end;
  }
  if (exec_apply(st, q_same, list_id, 0) < 0) goto end;
  if (sqlite3_prepare_v2(st->db, q_counts, -1, &s, NULL) != SQLITE_OK) goto end;
  if (sqlite3_step(s) == SQLITE_ROW) {
    counts->created = sqlite3_column_int64(s, 0);
    counts->updated = sqlite3_column_int64(s, 1);
    counts->unchanged = sqlite3_column_int64(s, 2);
  }
  sqlite3_finalize(s);
  if (sqlite3_prepare_v2(st->db, q_cur_clock, -1, &s, NULL) != SQLITE_OK) goto end;
  sqlite3_bind_text(s, 1, list_id, -1, SQLITE_STATIC);
  int64_t clock = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) + 1 : -1;
  sqlite3_finalize(s);
  if (clock < 0) goto end;
  if (replace) {
    int64_t d = exec_apply(st, q_delete, list_id, clock);
    if (d < 0) goto end;
    counts->deleted = d;
  }
  /* Old rows end before the new ones go in: the unique indexes hold among current rows. */
  if (exec_apply(st, q_end, list_id, clock) < 0 || exec_apply(st, q_insert, list_id, clock) < 0)
    goto end;
  /* An import that changes nothing leaves the clock (and so every snapshot) alone. */
  if (counts->created + counts->updated + counts->deleted > 0 &&
      exec_apply(st, q_clock, list_id, clock) != 1)
    goto end;
  rc = SG_E_OK;
end:
  rc = sg__sq_end(st, rc);
out:
  if (attached) sqlite3_exec(st->db, "DETACH imp", NULL, NULL, NULL);
  /* Back to the writer's own bound, which frees what the apply cached above it. */
  sg__sq_cache_kib(st, SG__SQ_CACHE_KIB);
  pthread_mutex_unlock(&st->mu);
  if (rc != SG_E_INVALID_REQUEST) {
    json_decref(*bad_lines);
    *bad_lines = NULL;
  }
  return rc;
}

/* ---- export -------------------------------------------------------------------------------- */

/* An export copies the list's current items, in export order, into a scratch database
 * of its own (next to the import staging files) in one short read of the store, then
 * streams from that copy at the client's pace. So the export stays an exact snapshot
 * while no read transaction on the store outlives the copy: a client that reads slowly
 * no longer pins a WAL snapshot, which kept every later write in the WAL (1.8 GB in 50 s
 * under imports). The copy costs disk space about the list's size, for the export's
 * lifetime; sg_store_import_cleanup removes copies left by a process that died. */
typedef struct {
  sg_store_export base; /* first: the generic handle */
  sqlite3 *db;
  sqlite3_stmt *q;
  char path[4400];
} sq_export;

void sg__sqlite_export_close(sg_store_export *handle) {
  sq_export *x = (sq_export *)handle;
  if (!x) return;
  if (x->q) sqlite3_finalize(x->q);
  if (x->db) sqlite3_close(x->db);
  if (*x->path) unlink(x->path);
  free(x);
}

/* Prepares sql on db, binds the text parameters (NULL-ended) and runs it to the end.
 * Returns the last step's code. */
static int run_on(sqlite3 *db, const char *sql, const char *const *params) {
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) return SQLITE_ERROR;
  for (int i = 0; params && params[i]; i++) sg__sq_text(s, i + 1, params[i]);
  int step;
  while ((step = sqlite3_step(s)) == SQLITE_ROW) {}
  sqlite3_finalize(s);
  return step;
}

sg_err sg__sqlite_export_open(sg_store *base, const char *workspace_id, const char *list_id,
                              sg_store_export **out) {
  sg__sq *st = sg__sq_of(base);
  static const char schema[] =
      "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-16384;"
      "CREATE TABLE x(id TEXT, value TEXT, display_value TEXT, aliases TEXT, rank INTEGER,"
      "  parent_id TEXT, locales TEXT, display_order INTEGER, created_at INTEGER,"
      "  description TEXT, parent_value TEXT);";
  static const char q_list[] = "SELECT 1 FROM src.lists WHERE id=?1 AND workspace_id=?2";
  static const char q_copy[] =
      "INSERT INTO x SELECT i.id, i.value, i.display_value, i.aliases, i.rank, i.parent_id,"
      " i.locales, i.display_order, i.created_at, i.description, p.value FROM src.items i"
      " LEFT JOIN"
      " src.items p ON p.id=i.parent_id AND p.list_id=i.list_id AND p.to_clock IS NULL"
      " WHERE i.list_id=?1 AND i.to_clock IS NULL ORDER BY i.display_order, i.id";
  static const char q_read[] = "SELECT * FROM x ORDER BY rowid";
  sq_export *x = calloc(1, sizeof *x);
  if (!x) return SG_E_INTERNAL;
  x->base.ops = &sg__sqlite_store_ops;
  sg_err rc = SG_E_INTERNAL;
  char dir[4200], rnd[40];
  scratch_dir(st, dir, sizeof dir);
  sg_random_id("export-", rnd, sizeof rnd);
  snprintf(x->path, sizeof x->path, "%s/%s.db", dir, rnd);
  const char *attach[] = {st->db_path, NULL};
  if (sg_mkdirs(dir, 0700) ||
      sqlite3_open_v2(x->path, &x->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
          SQLITE_OK)
    goto fail;
  sqlite3_busy_timeout(x->db, 10000);
  if (sqlite3_exec(x->db, schema, NULL, NULL, NULL) != SQLITE_OK ||
      run_on(x->db, "ATTACH DATABASE ?1 AS src", attach) != SQLITE_DONE)
    goto fail;
  /* One transaction: the check and the copy read one snapshot of the store. */
  if (sqlite3_exec(x->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) goto fail;
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(x->db, q_list, -1, &s, NULL) != SQLITE_OK) goto fail;
  sg__sq_text(s, 1, list_id);
  sg__sq_text(s, 2, workspace_id);
  int step = sqlite3_step(s);
  sqlite3_finalize(s);
  if (step != SQLITE_ROW) {
    rc = step == SQLITE_DONE ? SG_E_INVALID_LIST : SG_E_INTERNAL;
    goto fail;
  }
  const char *lid[] = {list_id, NULL};
  if (run_on(x->db, q_copy, lid) != SQLITE_DONE ||
      sqlite3_exec(x->db, "COMMIT; DETACH DATABASE src;", NULL, NULL, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(x->db, q_read, -1, &x->q, NULL) != SQLITE_OK)
    goto fail;
  *out = &x->base;
  return SG_E_OK;
fail:
  sg__sqlite_export_close(&x->base);
  return rc;
}

sg_err sg__sqlite_export_next(sg_store_export *handle, json_t **out) {
  sq_export *x = (sq_export *)handle;
  *out = NULL;
  int step = sqlite3_step(x->q);
  if (step == SQLITE_DONE) return SG_E_OK;
  if (step != SQLITE_ROW) return SG_E_INTERNAL;
  json_t *o = sg__sq_item_row(x->q);
  const char *pv = sg__sq_col(x->q, 10);
  json_object_set_new(o, "parentValue", pv ? json_string(pv) : json_null());
  *out = o;
  return SG_E_OK;
}
