/*
 * SQLite backend: versions and the publish pipeline's state transitions.
 *
 * A version row is created "queued" with its snapshot (snapshot_seq, item_count) and the
 * list's locale policy of that moment, then moves queued -> draft | staged | failed and
 * staged -> active | superseded | failed; active -> superseded when a newer one
 * activates. Every transition is a conditional UPDATE on the current state, so a stale
 * or repeated step (two runners, a restart) cannot move a version backwards.
 */
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "store/sqlite/sqlite_store.h"

#define VERSION_COLS SG__STORE_VERSION_COLS

/* Builds the API representation of the version row under s (VERSION_COLS order). */
static json_t *row_to_version(sqlite3_stmt *s) {
  sg__store_version_row r = {
      .number = sqlite3_column_int64(s, 0),
      .state = sg__sq_col(s, 1),
      .content_hash = sg__sq_col(s, 2),
      .item_count = sqlite3_column_int64(s, 3),
      .validation_errors = sg__sq_col(s, 4),
      .created_at = sqlite3_column_int64(s, 5),
      .has_activated_at = sqlite3_column_type(s, 6) != SQLITE_NULL,
      .activated_at = sqlite3_column_int64(s, 6),
      .failure_reason = sg__sq_col(s, 7),
  };
  return sg__store_version_record(&r);
}

/* Loads one version row (under the lock). SG_E_NOT_FOUND when absent. */
static sg_err load_version(sg__sq *st, const char *list_id, int64_t number, json_t **out) {
  static const char q[] =
      "SELECT " VERSION_COLS " FROM versions WHERE list_id=? AND version_number=?";
  sqlite3_stmt *s = sg__sq_prep(st, q);
  if (!s) return SG_E_INTERNAL;
  sg__sq_text(s, 1, list_id);
  sqlite3_bind_int64(s, 2, number);
  int step = sqlite3_step(s);
  sg_err rc = step == SQLITE_DONE ? SG_E_NOT_FOUND : SG_E_INTERNAL;
  if (step == SQLITE_ROW) {
    *out = row_to_version(s);
    rc = SG_E_OK;
  }
  sqlite3_reset(s);
  return rc;
}

/* Inserts version `number` of the list as queued (item count and snapshot clock of its
 * snapshot, the list's locale policy) and loads it into *version. 0, or -1 (the caller's
 * transaction then rolls back). */
static int insert_queued(sg__sq *st, const char *list_id, int64_t number, int64_t count,
                         int64_t snap, const char *policy, json_t **version) {
  static const char q_ins[] =
      "INSERT INTO versions(list_id, version_number, state, item_count, snapshot_seq,"
      " locale_policy, created_at) VALUES(?, ?, 'queued', ?, ?, ?, ?)";
  sqlite3_stmt *s = sg__sq_prep(st, q_ins);
  if (!s) return -1;
  sg__sq_text(s, 1, list_id);
  sqlite3_bind_int64(s, 2, number);
  sqlite3_bind_int64(s, 3, count);
  sqlite3_bind_int64(s, 4, snap);
  sg__sq_text(s, 5, policy);
  sqlite3_bind_int64(s, 6, sg_now_s());
  if (sg__sq_run(st, s) != 1) return -1;
  return load_version(st, list_id, number, version) == SG_E_OK ? 0 : -1;
}

sg_err sg__sqlite_version_create(sg_store *base, const char *workspace_id, const char *list_id,
                                 json_t **out) {
  sg__sq *st = sg__sq_of(base);
  static const char q_list[] =
      "SELECT next_version_number, default_locale, supported_locales FROM lists WHERE id=?";
  static const char q_bump[] =
      "UPDATE lists SET next_version_number=next_version_number+1 WHERE id=?";
  /* The snapshot is the list's item clock now (migration 3) and the current row count. */
  static const char q_snap[] =
      "SELECT l.item_clock, (SELECT COUNT(*) FROM items WHERE list_id=?1 AND to_clock IS NULL)"
      " FROM lists l WHERE l.id=?1";
  sg_err rc = SG_E_INTERNAL;
  char *policy = NULL;
  json_t *version = NULL;
  pthread_mutex_lock(&st->mu);
  if (sg__sq_begin(st)) goto out;
  rc = sg__sq_list_writable(st, workspace_id, list_id);
  if (rc != SG_E_OK) goto end;
  rc = SG_E_INTERNAL;
  sqlite3_stmt *s = sg__sq_prep(st, q_list);
  if (!s) goto end;
  sg__sq_text(s, 1, list_id);
  if (sqlite3_step(s) != SQLITE_ROW) {
    sqlite3_reset(s);
    goto end;
  }
  int64_t number = sqlite3_column_int64(s, 0);
  json_t *sup = json_loads(sg__sq_col(s, 2), 0, NULL);
  json_t *lp = json_pack("{s:s,s:o}", "defaultLocale", sg__sq_col(s, 1), "supportedLocales",
                         sup ? sup : json_array());
  sqlite3_reset(s);
  policy = lp ? json_dumps(lp, JSON_COMPACT) : NULL;
  json_decref(lp);
  if (!policy) goto end;
  if (!(s = sg__sq_prep(st, q_bump))) goto end;
  sg__sq_text(s, 1, list_id);
  if (sg__sq_run(st, s) != 1) goto end;
  if (!(s = sg__sq_prep(st, q_snap))) goto end;
  sg__sq_text(s, 1, list_id);
  if (sqlite3_step(s) != SQLITE_ROW) {
    sqlite3_reset(s);
    goto end;
  }
  int64_t snap = sqlite3_column_int64(s, 0), count = sqlite3_column_int64(s, 1);
  sqlite3_reset(s);
  if (insert_queued(st, list_id, number, count, snap, policy, &version) == 0) rc = SG_E_OK;
end:
  if ((rc = sg__sq_end(st, rc)) == SG_E_OK)
    *out = version;
  else
    json_decref(version);
out:
  pthread_mutex_unlock(&st->mu);
  free(policy);
  return rc;
}

sg_err sg__sqlite_version_get(sg_store *base, const char *workspace_id, const char *list_id,
                              int64_t number, json_t **out) {
  sg__sq *st = sg__sq_of(base);
  sg__sq *r = sg__sq_reader_acquire(st);
  /* One read transaction, so the statements below agree on one snapshot. */
  sqlite3_exec(r->db, "BEGIN", NULL, NULL, NULL);
  sg_err rc = sg__sq_list_exists(r, workspace_id, list_id);
  if (rc == SG_E_OK) rc = load_version(r, list_id, number, out);
  sqlite3_exec(r->db, "COMMIT", NULL, NULL, NULL);
  sg__sq_reader_release(r);
  return rc;
}

sg_err sg__sqlite_version_page(sg_store *base, const char *workspace_id, const char *list_id,
                               size_t limit, const json_t *after, json_t **data, bool *more) {
  sg__sq *st = sg__sq_of(base);
  static const char q_first[] = "SELECT " VERSION_COLS " FROM versions WHERE list_id=?1"
                                " ORDER BY version_number DESC LIMIT ?2";
  static const char q_after[] = "SELECT " VERSION_COLS " FROM versions WHERE list_id=?1"
                                " AND version_number < ?3 ORDER BY version_number DESC LIMIT ?2";
  *more = false;
  sg__sq *r = sg__sq_reader_acquire(st);
  /* One read transaction, so the statements below agree on one snapshot. */
  sqlite3_exec(r->db, "BEGIN", NULL, NULL, NULL);
  sg_err rc = sg__sq_list_exists(r, workspace_id, list_id);
  if (rc != SG_E_OK) goto out;
  rc = SG_E_INTERNAL;
  sqlite3_stmt *s = sg__sq_prep(r, after ? q_after : q_first);
  if (!s) goto out;
  sg__sq_text(s, 1, list_id);
  sqlite3_bind_int64(s, 2, (sqlite3_int64)limit + 1);
  if (after) sqlite3_bind_int64(s, 3, json_integer_value(json_array_get(after, 0)));
  json_t *arr = sg__sq_page_rows(s, limit, row_to_version, more);
  if (!arr) goto out;
  *data = arr;
  rc = SG_E_OK;
out:
  sqlite3_exec(r->db, "COMMIT", NULL, NULL, NULL);
  sg__sq_reader_release(r);
  return rc;
}

/* ---- the pipeline's side ------------------------------------------------------------------ */

static bool unresolved(const char *state) {
  return strcmp(state, SG_VERSION_QUEUED) == 0 || strcmp(state, SG_VERSION_STAGED) == 0;
}

/* Fills job from a row whose first columns are (state, snapshot_seq, item_count, attempts,
 * content_hash, locale_policy, workspace_id). */
static void read_job(sqlite3_stmt *s, const char *list_id, int64_t number, sg_version_job *job) {
  snprintf(job->list_id, sizeof job->list_id, "%s", list_id);
  job->number = number;
  snprintf(job->state, sizeof job->state, "%s", sg__sq_col(s, 0));
  job->snapshot_seq = sqlite3_column_int64(s, 1);
  job->item_count = (uint64_t)sqlite3_column_int64(s, 2);
  job->attempts = sqlite3_column_int(s, 3);
  const char *h = sg__sq_col(s, 4);
  snprintf(job->content_hash, sizeof job->content_hash, "%s", h ? h : "");
  job->locale_policy = json_loads(sg__sq_col(s, 5), 0, NULL);
  snprintf(job->workspace_id, sizeof job->workspace_id, "%s", sg__sq_col(s, 6));
}

sg_err sg__sqlite_snapshot_items(sg_store *base, const char *list_id, int64_t snapshot_seq,
                                 int64_t after_seq, size_t limit,
                                 int (*cb)(const sg_store_item_row *row, void *ctx), void *ctx,
                                 int64_t *last_seq, size_t *n) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] =
      "SELECT seq, id, value, display_value, parent_id, aliases, locales, rank, description"
      " FROM items"
      " WHERE list_id=?1 AND seq>?2 AND from_clock<=?3 AND (to_clock IS NULL OR to_clock>?3)"
      " ORDER BY seq LIMIT ?4";
  *last_seq = after_seq;
  *n = 0;
  sg_err rc = SG_E_INTERNAL;
  sg__sq *r = sg__sq_reader_acquire(st);
  if (sqlite3_exec(r->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) goto out;
  sqlite3_stmt *s = sg__sq_prep(r, q);
  if (!s) goto end;
  sg__sq_text(s, 1, list_id);
  sqlite3_bind_int64(s, 2, after_seq);
  sqlite3_bind_int64(s, 3, snapshot_seq);
  sqlite3_bind_int64(s, 4, (sqlite3_int64)limit);
  int step;
  rc = SG_E_OK;
  while ((step = sqlite3_step(s)) == SQLITE_ROW) {
    sg_store_item_row row = {
        .seq = sqlite3_column_int64(s, 0),
        .id = sg__sq_col(s, 1),
        .value = sg__sq_col(s, 2),
        .display_value = sg__sq_col(s, 3),
        .parent_id = sg__sq_col(s, 4),
        .aliases_json = sg__sq_col(s, 5),
        .locales_json = sg__sq_col(s, 6),
        .rank = sqlite3_column_int64(s, 7),
        .description = sg__sq_col(s, 8),
    };
    if (cb(&row, ctx)) {
      rc = SG_E_INTERNAL;
      break;
    }
    *last_seq = row.seq;
    (*n)++;
  }
  if (rc == SG_E_OK && step != SQLITE_DONE) rc = SG_E_INTERNAL;
  sqlite3_reset(s);
end:
  sqlite3_exec(r->db, "COMMIT", NULL, NULL, NULL);
out:
  sg__sq_reader_release(r);
  return rc;
}

/* Runs one conditional transition: sql may use ?1 list_id, ?2 number and ?3 text (may be
 * NULL); binding a parameter the statement lacks is a harmless SQLITE_RANGE.
 * SG_E_PRECONDITION_FAILED when no row was in a state the statement applies to. */
static sg_err transition(sg__sq *st, const char *sql, const char *list_id, int64_t number,
                         const char *text) {
  pthread_mutex_lock(&st->mu);
  sg_err rc = SG_E_INTERNAL;
  sqlite3_stmt *s = sg__sq_prep(st, sql);
  if (s) {
    sg__sq_text(s, 1, list_id);
    sqlite3_bind_int64(s, 2, number);
    sg__sq_text(s, 3, text);
    int changed = sg__sq_run(st, s);
    rc = changed == 1 ? SG_E_OK : changed == 0 ? SG_E_PRECONDITION_FAILED : SG_E_INTERNAL;
  }
  pthread_mutex_unlock(&st->mu);
  return rc;
}

sg_err sg__sqlite_version_set_draft(sg_store *base, const char *list_id, int64_t number,
                                    const json_t *validation_errors) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] = "UPDATE versions SET state='draft', validation_errors=?3"
                          " WHERE list_id=?1 AND version_number=?2 AND state='queued'"
                          "";
  char *enc = json_dumps(validation_errors, JSON_COMPACT | JSON_PRESERVE_ORDER);
  if (!enc) return SG_E_INTERNAL;
  sg_err rc = transition(st, q, list_id, number, enc);
  free(enc);
  return rc;
}

sg_err sg__sqlite_version_set_staged(sg_store *base, const char *list_id, int64_t number,
                                     const char *content_hash) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] = "UPDATE versions SET state='staged', content_hash=?3"
                          " WHERE list_id=?1 AND version_number=?2 AND state='queued'"
                          "";
  return transition(st, q, list_id, number, content_hash);
}

sg_err sg__sqlite_version_set_failed(sg_store *base, const char *list_id, int64_t number,
                                     const char *reason) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] = "UPDATE versions SET state='failed', failure_reason=?3"
                          " WHERE list_id=?1 AND version_number=?2"
                          " AND state IN ('queued', 'staged')";
  return transition(st, q, list_id, number, reason);
}

int sg__sq_make_active(sg__sq *st, const char *list_id, int64_t number, const char *hash,
                       int64_t now) {
  static const char q_retire[] = "UPDATE versions SET state='superseded'"
                                 " WHERE list_id=? AND state='active'";
  static const char q_on[] = "UPDATE versions SET state='active', activated_at=?3"
                             " WHERE list_id=?1 AND version_number=?2";
  static const char q_point[] =
      "UPDATE lists SET active_version_number=?2, active_content_hash=?3, updated_at=?4"
      " WHERE id=?1";
  sqlite3_stmt *s = sg__sq_prep(st, q_retire);
  if (!s) return -1;
  sg__sq_text(s, 1, list_id);
  if (sg__sq_run(st, s) < 0 || !(s = sg__sq_prep(st, q_on))) return -1;
  sg__sq_text(s, 1, list_id);
  sqlite3_bind_int64(s, 2, number);
  sqlite3_bind_int64(s, 3, now);
  if (sg__sq_run(st, s) != 1 || !(s = sg__sq_prep(st, q_point))) return -1;
  sg__sq_text(s, 1, list_id);
  sqlite3_bind_int64(s, 2, number);
  sg__sq_text(s, 3, hash);
  sqlite3_bind_int64(s, 4, now);
  return sg__sq_run(st, s) == 1 ? 0 : -1;
}

sg_err sg__sqlite_version_activate(sg_store *base, const char *workspace_id, const char *list_id,
                                   int64_t number, bool *activated, json_t **list_out) {
  sg__sq *st = sg__sq_of(base);
  static const char q_ver[] =
      "SELECT state, content_hash FROM versions WHERE list_id=? AND version_number=?";
  static const char q_cur[] = "SELECT active_version_number FROM lists WHERE id=?";
  static const char q_stale[] = "UPDATE versions SET state='superseded'"
                                " WHERE list_id=?1 AND version_number=?2";
  sg_err rc = SG_E_INTERNAL;
  char hash[80] = "";
  bool newer = false;
  int64_t now = sg_now_s();
  *activated = false;
  if (list_out) *list_out = NULL;
  pthread_mutex_lock(&st->mu);
  if (sg__sq_begin(st)) goto out;
  sqlite3_stmt *s = sg__sq_prep(st, q_ver);
  if (!s) goto end;
  sg__sq_text(s, 1, list_id);
  sqlite3_bind_int64(s, 2, number);
  int step = sqlite3_step(s);
  if (step == SQLITE_ROW) {
    bool staged = strcmp(sg__sq_col(s, 0), SG_VERSION_STAGED) == 0 && sg__sq_col(s, 1);
    if (staged)
      snprintf(hash, sizeof hash, "%s", sg__sq_col(s, 1));
    else
      rc = SG_E_PRECONDITION_FAILED;
  } else if (step == SQLITE_DONE) {
    rc = SG_E_NOT_FOUND;
  }
  sqlite3_reset(s);
  if (!*hash) goto end;
  if (!(s = sg__sq_prep(st, q_cur))) goto end;
  sg__sq_text(s, 1, list_id);
  if (sqlite3_step(s) != SQLITE_ROW) {
    sqlite3_reset(s);
    goto end;
  }
  newer = sqlite3_column_type(s, 0) == SQLITE_NULL || sqlite3_column_int64(s, 0) < number;
  sqlite3_reset(s);
  if (newer) {
    if (sg__sq_make_active(st, list_id, number, hash, now)) goto end;
  } else {
    if (!(s = sg__sq_prep(st, q_stale))) goto end;
    sg__sq_text(s, 1, list_id);
    sqlite3_bind_int64(s, 2, number);
    if (sg__sq_run(st, s) != 1) goto end;
  }
  if (!list_out || sg__sq_list_load(st, workspace_id, list_id, list_out) == SG_E_OK) rc = SG_E_OK;
end:
  if ((rc = sg__sq_end(st, rc)) == SG_E_OK) {
    *activated = newer;
  } else if (list_out) {
    json_decref(*list_out);
    *list_out = NULL;
  }
out:
  pthread_mutex_unlock(&st->mu);
  return rc;
}

/* Fills out[0..max) from a query selecting (list_id, workspace_id, version_number). */
sg_err sg__sqlite_versions_pending(sg_store *base, const char *list_id, int64_t before,
                                   sg_version_ref *out, size_t max, size_t *n) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] = "SELECT v.list_id, l.workspace_id, v.version_number FROM versions v"
                          " JOIN lists l ON l.id=v.list_id WHERE v.state IN ('queued', 'staged')"
                          " AND (?2 IS NULL OR v.list_id=?2) AND (?3=0 OR v.version_number<?3)"
                          " ORDER BY v.rowid LIMIT ?1";
  *n = 0;
  sg__sq *r = sg__sq_reader_acquire(st);
  sg_err rc = SG_E_INTERNAL;
  sqlite3_stmt *s = sg__sq_prep(r, q);
  if (s) {
    sqlite3_bind_int64(s, 1, (sqlite3_int64)max);
    sg__sq_text(s, 2, list_id);
    sqlite3_bind_int64(s, 3, before);
    int step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW && *n < max) {
      snprintf(out[*n].list_id, sizeof out[*n].list_id, "%s", sg__sq_col(s, 0));
      snprintf(out[*n].workspace_id, sizeof out[*n].workspace_id, "%s", sg__sq_col(s, 1));
      out[*n].number = sqlite3_column_int64(s, 2);
      (*n)++;
    }
    if (step == SQLITE_DONE || step == SQLITE_ROW) rc = SG_E_OK;
    sqlite3_reset(s);
  }
  sg__sq_reader_release(r);
  return rc;
}

sg_err sg__sqlite_artifacts_in_use(sg_store *base, json_t **out) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] = SG__SQ_IN_USE_SQL;
  sg__sq *r = sg__sq_reader_acquire(st);
  sqlite3_stmt *s = sg__sq_prep(r, q);
  sg_err rc = SG_E_INTERNAL;
  if (s) {
    sqlite3_bind_int64(s, 1, base->keep_versions);
    json_t *arr = json_array();
    int step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW)
      json_array_append_new(arr, json_string(sg__sq_col(s, 0)));
    sqlite3_reset(s);
    if (step == SQLITE_DONE) {
      *out = arr;
      rc = SG_E_OK;
    } else {
      json_decref(arr);
    }
  }
  sg__sq_reader_release(r);
  return rc;
}

/* ---- the publish queue across processes ------------------------------------------------ */

sg_err sg__sqlite_version_set_async(sg_store *base, const char *list_id, int64_t number) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] = "UPDATE versions SET queued_async=1"
                          " WHERE list_id=?1 AND version_number=?2 AND state='queued'";
  return transition(st, q, list_id, number, NULL);
}

/* True when a lease (owner, until_ms) keeps other processes away at now_ms. */
static bool leased_elsewhere(const char *owner, int64_t until_ms, int64_t now_ms) {
  return owner && strcmp(owner, sg__store_self_owner()) != 0 && until_ms >= now_ms &&
         !sg__store_owner_dead(owner);
}

sg_err sg__sqlite_version_claim(sg_store *base, const char *list_id, int64_t number,
                                int64_t lease_ms, sg_version_job *job) {
  sg__sq *st = sg__sq_of(base);
  static const char q_get[] =
      "SELECT v.state, v.snapshot_seq, v.item_count, v.attempts, v.content_hash,"
      " v.locale_policy, l.workspace_id, v.queued_async, v.lease_owner, v.lease_until_ms,"
      " EXISTS(SELECT 1 FROM versions n WHERE n.list_id=v.list_id AND"
      " n.version_number>v.version_number AND n.state IN ('queued', 'staged', 'active')),"
      " " SG__SQ_NOW_MS " FROM versions v JOIN lists l ON l.id=v.list_id"
      " WHERE v.list_id=? AND v.version_number=?";
  static const char q_coalesce[] =
      "UPDATE versions SET state='superseded', lease_owner=NULL, lease_until_ms=NULL"
      " WHERE list_id=?1 AND version_number=?2 AND state='queued'";
  static const char q_claim[] =
      "UPDATE versions SET attempts=attempts+1, lease_owner=?3, lease_until_ms=?4"
      " WHERE list_id=?1 AND version_number=?2";
  memset(job, 0, sizeof *job);
  int64_t now = 0; /* the lease's clock: SQLite's, read with the version */
  sg_err rc = SG_E_INTERNAL;
  pthread_mutex_lock(&st->mu);
  if (sg__sq_begin(st)) goto out;
  sqlite3_stmt *s = sg__sq_prep(st, q_get);
  if (!s) goto end;
  sg__sq_text(s, 1, list_id);
  sqlite3_bind_int64(s, 2, number);
  int step = sqlite3_step(s);
  if (step != SQLITE_ROW) {
    sqlite3_reset(s);
    if (step == SQLITE_DONE) rc = SG_E_NOT_FOUND;
    goto end;
  }
  read_job(s, list_id, number, job);
  bool async = sqlite3_column_int(s, 7) != 0;
  now = sqlite3_column_int64(s, 11);
  bool busy = leased_elsewhere(sg__sq_col(s, 8), sqlite3_column_int64(s, 9), now);
  bool newer = sqlite3_column_int(s, 10) != 0;
  sqlite3_reset(s);
  rc = SG_E_OK;
  if (!unresolved(job->state)) goto end;
  if (busy) {
    rc = SG_E_PUBLISH_IN_PROGRESS;
    goto end;
  }
  rc = SG_E_INTERNAL;
  bool coalesce = async && newer && strcmp(job->state, SG_VERSION_QUEUED) == 0;
  if (!(s = sg__sq_prep(st, coalesce ? q_coalesce : q_claim))) goto end;
  sg__sq_text(s, 1, list_id);
  sqlite3_bind_int64(s, 2, number);
  if (!coalesce) {
    sg__sq_text(s, 3, sg__store_self_owner());
    sqlite3_bind_int64(s, 4, now + lease_ms);
  }
  if (sg__sq_run(st, s) != 1) goto end;
  if (coalesce)
    snprintf(job->state, sizeof job->state, "%s", SG_VERSION_SUPERSEDED);
  else
    job->attempts++;
  rc = SG_E_OK;
end:
  if ((rc = sg__sq_end(st, rc)) != SG_E_OK && rc != SG_E_PUBLISH_IN_PROGRESS)
    sg_store_job_clear(job);
out:
  pthread_mutex_unlock(&st->mu);
  return rc;
}

sg_err sg__sqlite_version_leases_renew(sg_store *base, int64_t lease_ms) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] = "UPDATE versions SET lease_until_ms=" SG__SQ_NOW_MS "+?2"
                          " WHERE lease_owner=?1 AND state IN ('queued', 'staged')";
  pthread_mutex_lock(&st->mu);
  sg_err rc = SG_E_INTERNAL;
  sqlite3_stmt *s = sg__sq_prep(st, q);
  if (s) {
    sg__sq_text(s, 1, sg__store_self_owner());
    sqlite3_bind_int64(s, 2, lease_ms);
    if (sg__sq_run(st, s) >= 0) rc = SG_E_OK;
  }
  pthread_mutex_unlock(&st->mu);
  return rc;
}

sg_err sg__sqlite_version_release(sg_store *base, const char *list_id, int64_t number) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] = "UPDATE versions SET lease_owner=NULL, lease_until_ms=NULL"
                          " WHERE list_id=?1 AND version_number=?2 AND lease_owner=?3";
  sg_err rc = transition(st, q, list_id, number, sg__store_self_owner());
  return rc == SG_E_PRECONDITION_FAILED ? SG_E_OK : rc;
}

/* Candidates read per call: leases of live processes of this host are filtered here, not
 * in SQL, so a few more rows than one are read. */
#define NEXT_BATCH 64

sg_err sg__sqlite_version_next(sg_store *base, const char *after_workspace, int64_t fresh_s,
                               sg_version_ref *out, bool *found) {
  sg__sq *st = sg__sq_of(base);
  /* Workspaces after after_workspace first (false sorts before true), then wrapping. */
  static const char q[] =
      "SELECT v.list_id, l.workspace_id, v.version_number, v.lease_owner, v.lease_until_ms,"
      " " SG__SQ_NOW_MS " FROM versions v JOIN lists l ON l.id=v.list_id"
      " WHERE v.state IN ('queued', 'staged')"
      " AND (v.queued_async=1 OR v.state='staged' OR v.created_at<=?2)"
      " AND (v.lease_owner IS NULL OR v.lease_until_ms<" SG__SQ_NOW_MS " OR v.lease_owner LIKE ?4)"
      " ORDER BY l.workspace_id<=?1, l.workspace_id, v.rowid LIMIT ?5";
  char host[300];
  const char *me = sg__store_self_owner();
  const char *sp = strchr(me, ' ');
  int hl = sp ? (int)(sp - me) : (int)strlen(me);
  /* The host part is a hostname (no LIKE wildcards in practice; a stray one only widens
   * the candidates, which the check below filters anyway). */
  snprintf(host, sizeof host, "%.*s %%", hl, me);
  *found = false;
  sg__sq *r = sg__sq_reader_acquire(st);
  sg_err rc = SG_E_INTERNAL;
  sqlite3_stmt *s = sg__sq_prep(r, q);
  if (s) {
    sg__sq_text(s, 1, after_workspace ? after_workspace : "");
    sqlite3_bind_int64(s, 2, sg_now_s() - fresh_s);
    sg__sq_text(s, 4, host);
    sqlite3_bind_int64(s, 5, NEXT_BATCH);
    int step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {
      if (leased_elsewhere(sg__sq_col(s, 3), sqlite3_column_int64(s, 4),
                           sqlite3_column_int64(s, 5)))
        continue;
      snprintf(out->list_id, sizeof out->list_id, "%s", sg__sq_col(s, 0));
      snprintf(out->workspace_id, sizeof out->workspace_id, "%s", sg__sq_col(s, 1));
      out->number = sqlite3_column_int64(s, 2);
      *found = true;
      break;
    }
    if (step == SQLITE_DONE || step == SQLITE_ROW) rc = SG_E_OK;
    sqlite3_reset(s);
  }
  sg__sq_reader_release(r);
  return rc;
}

/* ---- the background recompile (docs/UPGRADING.md) ------------------------------------ */

sg_err sg__sqlite_active_versions(sg_store *base, const char *after, sg_active_version *out,
                                  size_t max, size_t *n) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] =
      "SELECT v.list_id, l.workspace_id, v.version_number, v.content_hash FROM versions v"
      " JOIN lists l ON l.id=v.list_id WHERE v.state='active' AND l.status<>'archived'"
      " AND v.content_hash IS NOT NULL AND v.list_id>?1 ORDER BY v.list_id LIMIT ?2";
  *n = 0;
  sg__sq *r = sg__sq_reader_acquire(st);
  sg_err rc = SG_E_INTERNAL;
  sqlite3_stmt *s = sg__sq_prep(r, q);
  if (s) {
    sg__sq_text(s, 1, after);
    sqlite3_bind_int64(s, 2, (sqlite3_int64)max);
    int step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW && *n < max) {
      sg_active_version *a = &out[*n];
      snprintf(a->list_id, sizeof a->list_id, "%s", sg__sq_col(s, 0));
      snprintf(a->workspace_id, sizeof a->workspace_id, "%s", sg__sq_col(s, 1));
      a->number = sqlite3_column_int64(s, 2);
      snprintf(a->content_hash, sizeof a->content_hash, "%s", sg__sq_col(s, 3));
      (*n)++;
    }
    if (step == SQLITE_DONE || step == SQLITE_ROW) rc = SG_E_OK;
    sqlite3_reset(s);
  }
  sg__sq_reader_release(r);
  return rc;
}

/* One integer from a statement with up to three bound values (under the lock). */
static int one_int(sg__sq *st, const char *q, const char *a, int64_t b, int64_t *out) {
  sqlite3_stmt *s = sg__sq_prep(st, q);
  if (!s) return -1;
  sg__sq_text(s, 1, a);
  sqlite3_bind_int64(s, 2, b);
  int step = sqlite3_step(s);
  if (step == SQLITE_ROW) *out = sqlite3_column_int64(s, 0);
  sqlite3_reset(s);
  return step == SQLITE_ROW ? 0 : -1;
}

sg_err sg__sqlite_version_recompile(sg_store *base, const char *list_id, int64_t from,
                                    json_t **out) {
  sg__sq *st = sg__sq_of(base);
  static const char q_from[] =
      "SELECT v.state, v.snapshot_seq, v.item_count, v.locale_policy, l.workspace_id, l.status,"
      " l.next_version_number FROM versions v JOIN lists l ON l.id=v.list_id"
      " WHERE v.list_id=?1 AND v.version_number=?2";
  static const char q_pending[] =
      "SELECT COUNT(*) FROM versions WHERE list_id=?1 AND state IN ('queued', 'staged')"
      " AND ?2=?2";
  static const char q_visible[] = "SELECT COUNT(*) FROM items WHERE list_id=?1 AND from_clock<=?2"
                                  " AND (to_clock IS NULL OR to_clock>?2)";
  static const char q_syn_before[] = "SELECT COUNT(*) FROM synonyms WHERE list_id=?1 AND clock<=?2";
  static const char q_syn_after[] = "SELECT COUNT(*) FROM synonyms WHERE list_id=?1 AND clock>?2";
  static const char q_bump[] =
      "UPDATE lists SET next_version_number=next_version_number+1 WHERE id=?";
  sg_err rc = SG_E_INTERNAL;
  char *policy = NULL;
  json_t *version = NULL;
  pthread_mutex_lock(&st->mu);
  if (sg__sq_begin(st)) goto out;
  sqlite3_stmt *s = sg__sq_prep(st, q_from);
  if (!s) goto end;
  sg__sq_text(s, 1, list_id);
  sqlite3_bind_int64(s, 2, from);
  int step = sqlite3_step(s);
  if (step != SQLITE_ROW) {
    sqlite3_reset(s);
    rc = step == SQLITE_DONE ? SG_E_NOT_FOUND : SG_E_INTERNAL;
    goto end;
  }
  bool active = strcmp(sg__sq_col(s, 0), SG_VERSION_ACTIVE) == 0;
  int64_t snap = sqlite3_column_int64(s, 1), count = sqlite3_column_int64(s, 2);
  policy = strdup(sg__sq_col(s, 3));
  bool archived = strcmp(sg__sq_col(s, 5), "archived") == 0;
  int64_t number = sqlite3_column_int64(s, 6);
  sqlite3_reset(s);
  if (!policy) goto end;
  if (archived) {
    rc = SG_E_LIST_ARCHIVED;
    goto end;
  }
  if (!active) {
    rc = SG_E_VERSION_NOT_ACTIVATABLE;
    goto end;
  }
  int64_t pending = 0, visible = 0, syn_before = 0, syn_after = 0;
  if (one_int(st, q_pending, list_id, 0, &pending) ||
      one_int(st, q_visible, list_id, snap, &visible) ||
      one_int(st, q_syn_before, list_id, snap, &syn_before) ||
      one_int(st, q_syn_after, list_id, snap, &syn_after))
    goto end;
  if (pending > 0) {
    rc = SG_E_PUBLISH_IN_PROGRESS;
    goto end;
  }
  if (visible != count || (syn_after > 0 && syn_before == 0)) {
    rc = SG_E_VERSION_NOT_AVAILABLE;
    goto end;
  }
  if (!(s = sg__sq_prep(st, q_bump))) goto end;
  sg__sq_text(s, 1, list_id);
  if (sg__sq_run(st, s) != 1) goto end;
  if (insert_queued(st, list_id, number, count, snap, policy, &version) == 0) rc = SG_E_OK;
end:
  if ((rc = sg__sq_end(st, rc)) == SG_E_OK)
    *out = version;
  else
    json_decref(version);
out:
  pthread_mutex_unlock(&st->mu);
  free(policy);
  return rc;
}
