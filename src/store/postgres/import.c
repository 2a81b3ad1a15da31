/*
 * PostgreSQL backend: bulk import and export (docs/STORE.md, "PostgreSQL").
 *
 * Import: an import holds one pooled connection for its whole life and stages its lines
 * in a TEMP table of that session with COPY … FROM STDIN, STAGE_BATCH rows at a time. A
 * line's duplicate must be reported when the line arrives (with the line it repeats, as
 * on SQLite), before its batch reaches the database, so the import keeps the values it
 * has staged in a hash table of its own (memory about the size of the values; the
 * request's body limit bounds it). Apply runs
 * SQLite's set-wise statements against the staged table in ONE transaction on the same
 * connection under one new item clock, after locking the list's row: a crash or an error
 * leaves the old item set, a commit the new one.
 *
 * Export: one short REPEATABLE READ, READ ONLY transaction streams the list's current
 * items (single-row mode) into an unlinked temporary file as JSON lines; the transaction
 * ends before the first line goes to the client, which then reads from the file at its
 * own pace. So an export is an exact snapshot and a slow reader pins nothing in the
 * database.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/util.h"
#include "store/postgres/pg.h"
#include "store/rules.h"

/* Rows per COPY. */
#define STAGE_BATCH 10000

/* One staged value and its line; the table is open addressing, at most half full. */
typedef struct {
  char *value;
  int64_t line;
  uint64_t hash;
} seen_value;

typedef struct {
  sg_store_import base; /* first: the generic handle */
  sg__pg *st;
  PGconn *c;
  sg_buf copy; /* COPY text of the rows not yet sent */
  size_t in_batch;
  seen_value *seen;
  size_t n_seen, cap_seen;
} pg_import;

static uint64_t fnv1a(const char *s) {
  uint64_t h = 14695981039346656037ULL;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return h;
}

/* The slot of value (its own, or the empty one where it would go). */
static seen_value *seen_slot(seen_value *t, size_t cap, const char *value, uint64_t h) {
  for (size_t i = h & (cap - 1);; i = (i + 1) & (cap - 1))
    if (!t[i].value || (t[i].hash == h && strcmp(t[i].value, value) == 0)) return &t[i];
}

/* Records value at line: 1 when it was new, 0 when already there (*first: its line),
 * -1 when out of memory. */
static int seen_add(pg_import *imp, const char *value, int64_t line, int64_t *first) {
  if (2 * (imp->n_seen + 1) > imp->cap_seen) {
    size_t cap = imp->cap_seen ? imp->cap_seen * 2 : 1024;
    seen_value *t = calloc(cap, sizeof *t);
    if (!t) return -1;
    for (size_t i = 0; i < imp->cap_seen; i++)
      if (imp->seen[i].value)
        *seen_slot(t, cap, imp->seen[i].value, imp->seen[i].hash) = imp->seen[i];
    free(imp->seen);
    imp->seen = t;
    imp->cap_seen = cap;
  }
  uint64_t h = fnv1a(value);
  seen_value *e = seen_slot(imp->seen, imp->cap_seen, value, h);
  if (e->value) {
    *first = e->line;
    return 0;
  }
  if (!(e->value = strdup(value))) return -1;
  e->line = line;
  e->hash = h;
  imp->n_seen++;
  return 1;
}

void sg__pg_import_free(sg_store_import *handle) {
  pg_import *imp = (pg_import *)handle;
  if (!imp) return;
  if (imp->c) {
    /* The staged rows go with the TEMP table; the connection goes back clean. */
    PGresult *r = PQexec(imp->c, "DROP TABLE IF EXISTS staged");
    PQclear(r);
    sg__pg_release(imp->st, imp->c);
  }
  for (size_t i = 0; i < imp->cap_seen; i++) free(imp->seen[i].value);
  free(imp->seen);
  sg_buf_free(&imp->copy);
  free(imp);
}

/* Staging lives in TEMP tables, which PostgreSQL removes with their session. */
void sg__pg_import_cleanup(sg_store *st) { (void)st; }

sg_err sg__pg_import_begin(sg_store *base, sg_store_import **out) {
  sg__pg *st = sg__pg_of(base);
  pg_import *imp = calloc(1, sizeof *imp);
  if (!imp) return SG_E_INTERNAL;
  imp->base.ops = &sg__pg_store_ops;
  imp->st = st;
  sg_buf_init(&imp->copy, 0);
  if (!(imp->c = sg__pg_acquire(st))) {
    sg__pg_import_free(&imp->base);
    return SG_E_UNAVAILABLE;
  }
  PGresult *r =
      PQexec(imp->c, "DROP TABLE IF EXISTS staged;"
                     "CREATE TEMP TABLE staged(line BIGINT NOT NULL,"
                     " value TEXT COLLATE \"C\" NOT NULL, display_value TEXT NOT NULL,"
                     " aliases TEXT, rank BIGINT NOT NULL, parent_value TEXT COLLATE \"C\","
                     " locales TEXT, display_order BIGINT NOT NULL, description TEXT,"
                     " new_id TEXT NOT NULL,"
                     " old_seq BIGINT, old_id TEXT, old_created BIGINT, parent_id TEXT,"
                     " changed BOOLEAN NOT NULL DEFAULT true)");
  bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
  PQclear(r);
  if (!ok) {
    sg__pg_import_free(&imp->base);
    return SG_E_INTERNAL;
  }
  *out = &imp->base;
  return SG_E_OK;
}

/* Appends one COPY text field (NULL: \N) and its separator. */
static int copy_field(sg_buf *b, const char *v, char sep) {
  int rc = 0;
  if (!v) {
    rc |= sg_buf_puts(b, "\\N");
  } else {
    for (const char *p = v; *p; p++) {
      switch (*p) {
      case '\\': rc |= sg_buf_puts(b, "\\\\"); break;
      case '\t': rc |= sg_buf_puts(b, "\\t"); break;
      case '\n': rc |= sg_buf_puts(b, "\\n"); break;
      case '\r': rc |= sg_buf_puts(b, "\\r"); break;
      default: rc |= sg_buf_putc(b, *p);
      }
    }
  }
  return rc | sg_buf_putc(b, sep);
}

/* Sends the buffered rows with one COPY. */
static sg_err copy_flush(pg_import *imp) {
  if (!imp->copy.len) return SG_E_OK;
  PGresult *r = PQexec(imp->c, "COPY staged(line, value, display_value, aliases, rank,"
                               " parent_value, locales, display_order, description, new_id)"
                               " FROM STDIN");
  bool ok = PQresultStatus(r) == PGRES_COPY_IN;
  PQclear(r);
  if (ok) ok = PQputCopyData(imp->c, imp->copy.data, (int)imp->copy.len) == 1;
  if (PQputCopyEnd(imp->c, ok ? NULL : "staging failed") != 1) ok = false;
  while ((r = PQgetResult(imp->c))) {
    if (PQresultStatus(r) != PGRES_COMMAND_OK) ok = false;
    PQclear(r);
  }
  sg_buf_reset(&imp->copy);
  imp->in_batch = 0;
  if (ok) return SG_E_OK;
  return PQstatus(imp->c) == CONNECTION_BAD ? SG_E_UNAVAILABLE : SG_E_INTERNAL;
}

sg_err sg__pg_import_add(sg_store_import *handle, int64_t line, const json_t *item,
                         const char *parent_value) {
  pg_import *imp = (pg_import *)handle;
  const char *value = json_string_value(json_object_get(item, "value"));
  if (!value) return SG_E_INTERNAL;
  int64_t first;
  int added = seen_add(imp, value, line, &first);
  if (added < 0) return SG_E_INTERNAL;
  if (added == 0) return SG_E_DUPLICATE_VALUE;
  char id[32], ln[24], rank[24], order[24];
  sg_random_id("itm_", id, sizeof id);
  char *aliases = sg__store_json_text(json_object_get(item, "aliases"));
  char *locales = sg__store_json_text(json_object_get(item, "locales"));
  sg_buf *b = &imp->copy;
  int bad =
      copy_field(b, sg__pg_int(line, ln), '\t') || copy_field(b, value, '\t') ||
      copy_field(b, json_string_value(json_object_get(item, "displayValue")), '\t') ||
      copy_field(b, aliases, '\t') ||
      copy_field(b, sg__pg_int(json_integer_value(json_object_get(item, "rank")), rank), '\t') ||
      copy_field(b, parent_value, '\t') || copy_field(b, locales, '\t') ||
      copy_field(b, sg__pg_int(json_integer_value(json_object_get(item, "displayOrder")), order),
                 '\t') ||
      copy_field(b, json_string_value(json_object_get(item, "description")), '\t') ||
      copy_field(b, id, '\n');
  free(aliases);
  free(locales);
  if (bad) return SG_E_INTERNAL;
  return ++imp->in_batch >= STAGE_BATCH ? copy_flush(imp) : SG_E_OK;
}

sg_err sg__pg_import_line_of(sg_store_import *handle, const char *value, int64_t *line) {
  pg_import *imp = (pg_import *)handle;
  if (!imp->cap_seen) return SG_E_NOT_FOUND;
  seen_value *e = seen_slot(imp->seen, imp->cap_seen, value, fnv1a(value));
  if (!e->value) return SG_E_NOT_FOUND;
  *line = e->line;
  return SG_E_OK;
}

/* The apply, as on SQLite (src/store/sqlite/import.c explains each step). $1 list id,
 * $2 clock, $3 now. */
static const char q_match[] =
    "UPDATE staged s SET old_seq=i.seq, old_id=i.id, old_created=i.created_at FROM items i"
    " WHERE i.list_id=$1 AND i.value=s.value AND i.to_clock IS NULL";
static const char q_parent_staged[] =
    "UPDATE staged s SET parent_id=COALESCE(p.old_id, p.new_id) FROM staged p"
    " WHERE s.parent_value IS NOT NULL AND p.value=s.parent_value";
static const char q_parent_list[] =
    "UPDATE staged s SET parent_id=i.id FROM items i WHERE s.parent_value IS NOT NULL AND"
    " s.parent_id IS NULL AND i.list_id=$1 AND i.value=s.parent_value AND i.to_clock IS NULL";
static const char q_bad[] = "SELECT line FROM staged WHERE parent_value IS NOT NULL"
                            " AND parent_id IS NULL ORDER BY line";
static const char q_same[] =
    "UPDATE staged s SET changed=false FROM items i WHERE s.old_seq IS NOT NULL AND"
    " i.seq=s.old_seq AND i.value=s.value AND i.display_value=s.display_value"
    " AND i.aliases IS NOT DISTINCT FROM s.aliases AND i.rank=s.rank"
    " AND i.parent_id IS NOT DISTINCT FROM s.parent_id"
    " AND i.locales IS NOT DISTINCT FROM s.locales AND i.display_order=s.display_order"
    " AND i.description IS NOT DISTINCT FROM s.description";
static const char q_counts[] =
    "SELECT count(*) FILTER (WHERE old_seq IS NULL) AS created, count(*) FILTER (WHERE old_seq"
    " IS NOT NULL AND changed) AS updated, count(*) FILTER (WHERE old_seq IS NOT NULL AND NOT"
    " changed) AS unchanged FROM staged";
static const char q_delete[] =
    "UPDATE items SET to_clock=$2::bigint WHERE list_id=$1 AND to_clock IS NULL"
    " AND NOT EXISTS (SELECT 1 FROM staged s WHERE s.value=items.value)";
static const char q_end[] =
    "UPDATE items SET to_clock=$2::bigint WHERE list_id=$1 AND seq IN (SELECT old_seq FROM"
    " staged WHERE old_seq IS NOT NULL AND changed)";
static const char q_insert[] =
    "INSERT INTO items(id, list_id, value, display_value, aliases, rank, parent_id, locales,"
    " display_order, description, created_at, from_clock) SELECT COALESCE(old_id, new_id), $1,"
    " value, display_value, aliases, rank, parent_id, locales, display_order, description,"
    " COALESCE(old_created, $3::bigint), $2::bigint FROM staged WHERE changed"
    " ORDER BY display_order, COALESCE(old_id, new_id)";

sg_err sg__pg_import_apply(sg_store *base, sg_store_import *handle, const char *workspace_id,
                           const char *list_id, bool replace, size_t max_bad,
                           sg_import_counts *counts, json_t **bad_lines, int64_t *n_bad) {
  (void)base;
  pg_import *imp = (pg_import *)handle;
  PGconn *c = imp->c;
  memset(counts, 0, sizeof *counts);
  *bad_lines = NULL;
  *n_bad = 0;
  /* The last rows, an index for the matching, then one transaction for the apply. */
  sg_err frc = copy_flush(imp);
  if (frc != SG_E_OK) return frc;
  if (sg__pg_x(c, "CREATE UNIQUE INDEX ON staged(value)", 0, NULL) ||
      sg__pg_x(c, "BEGIN ISOLATION LEVEL READ COMMITTED", 0, NULL))
    return SG_E_INTERNAL;
  sg_err rc = sg__pg_list_writable(c, workspace_id, list_id);
  if (rc != SG_E_OK) goto end;
  rc = SG_E_INTERNAL;
  char clk[24], now[24];
  const char *p[] = {list_id, NULL, sg__pg_int(sg_now_s(), now)};
  if (sg__pg_x(c, q_match, 1, p) || sg__pg_x(c, "ANALYZE staged", 0, NULL) ||
      sg__pg_x(c, q_parent_staged, 0, NULL) || (!replace && sg__pg_x(c, q_parent_list, 1, p)))
    goto end;
  PGresult *r = sg__pg_q(c, q_bad, 0, NULL);
  if (!r) goto end;
  int cl = sg__pg_col(r, "line");
  if (cl < 0) {
    PQclear(r);
    goto end;
  }
  for (int i = 0; i < PQntuples(r); i++) {
    if (!*bad_lines) *bad_lines = json_array();
    if ((size_t)*n_bad < max_bad)
      json_array_append_new(*bad_lines, json_integer(sg__pg_i(r, i, cl)));
    (*n_bad)++;
  }
  PQclear(r);
  if (*n_bad) {
    rc = SG_E_INVALID_REQUEST;
    goto end;
  }
  if (sg__pg_x(c, q_same, 0, NULL) || !(r = sg__pg_q(c, q_counts, 0, NULL))) goto end;
  static const char *const count_names[] = {"created", "updated", "unchanged"};
  int cc[3];
  if (sg__pg_cols(r, count_names, cc, 3)) {
    PQclear(r);
    goto end;
  }
  counts->created = sg__pg_i(r, 0, cc[0]);
  counts->updated = sg__pg_i(r, 0, cc[1]);
  counts->unchanged = sg__pg_i(r, 0, cc[2]);
  PQclear(r);
  /* The clock the import's changes carry; taken (and the list row updated) only when
   * something changes, so an import that changes nothing leaves every snapshot alone. */
  if (!(r = sg__pg_q(c, "SELECT item_clock + 1 AS clock FROM lists WHERE id=$1", 1, p))) goto end;
  int ck = sg__pg_col(r, "clock");
  if (ck >= 0) p[1] = sg__pg_int(sg__pg_i(r, 0, ck), clk);
  PQclear(r);
  if (ck < 0) goto end;
  if (replace) {
    if (!(r = sg__pg_q(c, q_delete, 2, p))) goto end;
    counts->deleted = sg__pg_changed(r);
    PQclear(r);
  }
  /* Old rows end before the new ones go in: the unique indexes hold among current rows. */
  if (sg__pg_x(c, q_end, 2, p) || sg__pg_x(c, q_insert, 3, p)) goto end;
  if (counts->created + counts->updated + counts->deleted > 0 &&
      sg__pg_x(c, "UPDATE lists SET item_clock=$2::bigint WHERE id=$1", 2, p))
    goto end;
  rc = SG_E_OK;
end:;
  PGresult *fin = PQexec(c, rc == SG_E_OK ? "COMMIT" : "ROLLBACK");
  if (rc == SG_E_OK && PQresultStatus(fin) != PGRES_COMMAND_OK)
    rc = PQstatus(c) == CONNECTION_BAD ? SG_E_UNAVAILABLE : SG_E_INTERNAL;
  PQclear(fin);
  if (rc != SG_E_INVALID_REQUEST) {
    json_decref(*bad_lines);
    *bad_lines = NULL;
  }
  if (rc == SG_E_INTERNAL && PQstatus(c) == CONNECTION_BAD) rc = SG_E_UNAVAILABLE;
  return rc;
}

/* ---- export -------------------------------------------------------------------------------- */

typedef struct {
  sg_store_export base; /* first: the generic handle */
  FILE *f;
  char *line;
  size_t cap;
} pg_export;

void sg__pg_export_close(sg_store_export *handle) {
  pg_export *x = (pg_export *)handle;
  if (!x) return;
  if (x->f) fclose(x->f);
  free(x->line);
  free(x);
}

/* Streams the rows of the export query into f, one compact JSON item per line. */
static sg_err copy_rows(PGconn *c, const char *list_id, FILE *f) {
  const char *p[] = {list_id};
  if (!PQsendQueryParams(c,
                         "SELECT i.id, i.value, i.display_value, i.aliases, i.rank, i.parent_id,"
                         " i.locales, i.display_order, i.created_at, i.description,"
                         /* A lookup by the unique live id (items_id) per row with a parent,
                          * not a join: after a killed import left its rows dead and the
                          * statistics stale, the planner joined by a scan of the table per
                          * row and an export of 1,000 items ran for minutes. */
                         " (SELECT p.value FROM items p WHERE p.id=i.parent_id AND"
                         " p.to_clock IS NULL AND p.list_id=i.list_id) AS parent_value"
                         " FROM items i WHERE i.list_id=$1 AND i.to_clock IS NULL"
                         " ORDER BY i.display_order, i.id",
                         1, NULL, p, NULL, NULL, 0) ||
      !PQsetSingleRowMode(c))
    return SG_E_INTERNAL;
  sg_err rc = SG_E_OK;
  PGresult *r;
  while ((r = PQgetResult(c))) {
    ExecStatusType s = PQresultStatus(r);
    if (s == PGRES_SINGLE_TUPLE && rc == SG_E_OK) {
      json_t *o = sg__pg_item_row(r, 0);
      int pc = sg__pg_col(r, "parent_value");
      const char *pv = pc < 0 ? NULL : sg__pg_s(r, 0, pc);
      if (!o || pc < 0) {
        rc = SG_E_INTERNAL;
      } else {
        json_object_set_new(o, "parentValue", pv ? json_string(pv) : json_null());
        if (json_dumpf(o, f, JSON_COMPACT | JSON_PRESERVE_ORDER) || fputc('\n', f) == EOF)
          rc = SG_E_INTERNAL;
      }
      json_decref(o);
    } else if (s != PGRES_SINGLE_TUPLE && s != PGRES_TUPLES_OK) {
      rc = PQstatus(c) == CONNECTION_BAD ? SG_E_UNAVAILABLE : SG_E_INTERNAL;
    }
    PQclear(r);
  }
  return rc;
}

sg_err sg__pg_export_open(sg_store *base, const char *workspace_id, const char *list_id,
                          sg_store_export **out) {
  sg__pg *st = sg__pg_of(base);
  pg_export *x = calloc(1, sizeof *x);
  if (!x) return SG_E_INTERNAL;
  x->base.ops = &sg__pg_store_ops;
  /* An unlinked file: the space returns to the system when the export ends, whatever
   * way the process ends. */
  if (!(x->f = tmpfile())) {
    free(x);
    return SG_E_INTERNAL;
  }
  PGconn *c = sg__pg_acquire(st);
  if (!c) {
    sg__pg_export_close(&x->base);
    return SG_E_UNAVAILABLE;
  }
  sg_err rc = SG_E_INTERNAL;
  if (sg__pg_x(c, "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY", 0, NULL)) goto done;
  if ((rc = sg__pg_list_exists(c, workspace_id, list_id)) != SG_E_OK) goto done;
  if ((rc = copy_rows(c, list_id, x->f)) != SG_E_OK) goto done;
  rc = sg__pg_x(c, "COMMIT", 0, NULL) ? SG_E_INTERNAL : SG_E_OK;
done:
  if (rc == SG_E_INTERNAL && PQstatus(c) == CONNECTION_BAD) rc = SG_E_UNAVAILABLE;
  sg__pg_release(st, c);
  if (rc != SG_E_OK || fflush(x->f) || fseek(x->f, 0, SEEK_SET)) {
    sg__pg_export_close(&x->base);
    return rc == SG_E_OK ? SG_E_INTERNAL : rc;
  }
  *out = &x->base;
  return SG_E_OK;
}

sg_err sg__pg_export_next(sg_store_export *handle, json_t **out) {
  pg_export *x = (pg_export *)handle;
  *out = NULL;
  ssize_t n = getline(&x->line, &x->cap, x->f);
  if (n < 0) return ferror(x->f) ? SG_E_INTERNAL : SG_E_OK;
  *out = json_loadb(x->line, (size_t)n, 0, NULL);
  return *out ? SG_E_OK : SG_E_INTERNAL;
}
