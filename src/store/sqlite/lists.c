/*
 * SQLite backend: lists.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "compiler/normalize.h"
#include "store/rules.h"
#include "store/sqlite/sqlite_store.h"

#define LIST_COLS SG__STORE_LIST_COLS

/* Builds the API representation of the row under s (LIST_COLS). */
static json_t *row_to_list(sqlite3_stmt *s) {
  sg__store_list_row r = {
      .id = sg__sq_col(s, 0),
      .name = sg__sq_col(s, 1),
      .description = sg__sq_col(s, 2),
      .slug = sg__sq_col(s, 3),
      .visibility = sg__sq_col(s, 4),
      .status = sg__sq_col(s, 5),
      .min_query_chars = sqlite3_column_int64(s, 6),
      .debounce_ms = sqlite3_column_int64(s, 7),
      .default_locale = sg__sq_col(s, 8),
      .supported_locales = sg__sq_col(s, 9),
      .display_order = sqlite3_column_int64(s, 10),
      .has_active_version = sqlite3_column_type(s, 11) != SQLITE_NULL,
      .active_version_number = sqlite3_column_int64(s, 11),
      .created_at = sqlite3_column_int64(s, 12),
      .updated_at = sqlite3_column_int64(s, 13),
      .active_content_hash = sg__sq_col(s, 15),
      .typo_enabled = sqlite3_column_int64(s, 16) != 0,
      .typo_min_one = sqlite3_column_int64(s, 17),
      .typo_min_two = sqlite3_column_int64(s, 18),
  };
  return sg__store_list_record(&r);
}

sg_err sg__sq_list_load(sg__sq *st, const char *workspace_id, const char *id, json_t **out) {
  static const char q[] =
      "SELECT " LIST_COLS " FROM lists WHERE id=?1 AND (?2 IS NULL OR workspace_id=?2)";
  sqlite3_stmt *s = sg__sq_prep(st, q);
  if (!s) return SG_E_INTERNAL;
  sg__sq_text(s, 1, id);
  sg__sq_text(s, 2, workspace_id);
  int step = sqlite3_step(s);
  sg_err rc = SG_E_INVALID_LIST;
  if (step == SQLITE_ROW) {
    *out = row_to_list(s);
    if (!workspace_id) json_object_set_new(*out, "workspaceId", json_string(sg__sq_col(s, 14)));
    rc = SG_E_OK;
  } else if (step != SQLITE_DONE) {
    rc = SG_E_INTERNAL;
  }
  sqlite3_reset(s);
  return rc;
}

sg_err sg__sq_list_exists(sg__sq *st, const char *workspace_id, const char *list_id) {
  static const char q[] = "SELECT 1 FROM lists WHERE id=? AND workspace_id=?";
  int found = sg__sq_exists(st, q, list_id, workspace_id);
  return found > 0 ? SG_E_OK : found == 0 ? SG_E_INVALID_LIST : SG_E_INTERNAL;
}

sg_err sg__sqlite_list_create(sg_store *base, const char *workspace_id, const char *name,
                              const char *description, json_t **out) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] =
      "INSERT INTO lists(id, workspace_id, name, description, slug, created_at, updated_at)"
      " VALUES(?, ?, ?, ?, ?, ?, ?)";
  char id[32], slug_base[64], slug[80];
  sg_random_id("lst_", id, sizeof id);
  sg__store_slug_base(name, slug_base, sizeof slug_base);
  int64_t now = sg_now_s();
  sg_err rc = SG_E_INTERNAL;
  static const char q_count[] = "SELECT count(*) FROM lists WHERE workspace_id=?1";
  pthread_mutex_lock(&st->mu);
  if (sg__sq_begin(st)) goto out;
  /* BEGIN IMMEDIATE holds the database's write lock: no other process adds a list
   * between this count and the insert. */
  int full = sg__sq_at_limit(st, q_count, workspace_id, base->limits.lists_per_workspace);
  if (full != 0) {
    rc = full > 0 ? SG_E_LIST_LIMIT : SG_E_INTERNAL;
    sg__sq_end(st, rc);
    goto out;
  }
  /* The slug is unique per workspace: try the candidates in order. */
  for (int attempt = 1; attempt <= SG_STORE_SLUG_ATTEMPTS; attempt++) {
    sg__store_slug_candidate(slug_base, attempt, slug, sizeof slug);
    sqlite3_stmt *s = sg__sq_prep(st, q);
    if (!s) break;
    sg__sq_text(s, 1, id);
    sg__sq_text(s, 2, workspace_id);
    sg__sq_text(s, 3, name);
    sg__sq_text(s, 4, description);
    sg__sq_text(s, 5, slug);
    sqlite3_bind_int64(s, 6, now);
    sqlite3_bind_int64(s, 7, now);
    int step = sqlite3_step(s);
    int ext = sqlite3_extended_errcode(st->db);
    sqlite3_reset(s);
    if (step == SQLITE_DONE) {
      rc = sg__sq_list_load(st, workspace_id, id, out);
      break;
    }
    if (ext != SQLITE_CONSTRAINT_UNIQUE) break;
  }
  bool built = rc == SG_E_OK;
  if ((rc = sg__sq_end(st, rc)) != SG_E_OK && built) {
    json_decref(*out);
    *out = NULL;
  }
out:
  pthread_mutex_unlock(&st->mu);
  return rc;
}

sg_err sg__sqlite_list_get(sg_store *base, const char *workspace_id, const char *id, json_t **out) {
  sg__sq *st = sg__sq_of(base);
  sg__sq *r = sg__sq_reader_acquire(st);
  sg_err rc = sg__sq_list_load(r, workspace_id, id, out);
  sg__sq_reader_release(r);
  return rc;
}

sg_err sg__sqlite_list_page(sg_store *base, const char *workspace_id, size_t limit,
                            const json_t *after, json_t **data, bool *more) {
  sg__sq *st = sg__sq_of(base);
  static const char q_first[] = "SELECT " LIST_COLS " FROM lists WHERE workspace_id=?1"
                                " ORDER BY display_order, slug, id LIMIT ?2";
  static const char q_after[] =
      "SELECT " LIST_COLS " FROM lists WHERE workspace_id=?1"
      " AND (display_order, slug, id) > (?3, ?4, ?5) ORDER BY display_order, slug, id LIMIT ?2";
  sg__sq *r = sg__sq_reader_acquire(st);
  sqlite3_stmt *s = sg__sq_prep(r, after ? q_after : q_first);
  if (!s) {
    sg__sq_reader_release(r);
    return SG_E_INTERNAL;
  }
  sg__sq_text(s, 1, workspace_id);
  sqlite3_bind_int64(s, 2, (sqlite3_int64)limit + 1);
  if (after) {
    sqlite3_bind_int64(s, 3, json_integer_value(json_array_get(after, 0)));
    sg__sq_text(s, 4, json_string_value(json_array_get(after, 1)));
    sg__sq_text(s, 5, json_string_value(json_array_get(after, 2)));
  }
  json_t *arr = sg__sq_page_rows(s, limit, row_to_list, more);
  sg__sq_reader_release(r);
  if (!arr) return SG_E_INTERNAL;
  *data = arr;
  return SG_E_OK;
}

sg_err sg__sqlite_list_patch(sg_store *base, const char *workspace_id, const char *id,
                             const json_t *changes, const char *if_match, json_t **out) {
  sg__sq *st = sg__sq_of(base);
  static const char q_name[] = "UPDATE lists SET name=?2 WHERE id=?1";
  static const char q_vis[] = "UPDATE lists SET visibility=?2 WHERE id=?1";
  static const char q_status[] = "UPDATE lists SET status=?2 WHERE id=?1";
  static const char q_order[] = "UPDATE lists SET display_order=?2 WHERE id=?1";
  static const char q_minq[] = "UPDATE lists SET min_query_chars=?2 WHERE id=?1";
  static const char q_deb[] = "UPDATE lists SET debounce_ms=?2 WHERE id=?1";
  static const char q_typo_en[] = "UPDATE lists SET typo_enabled=?2 WHERE id=?1";
  static const char q_typo_one[] = "UPDATE lists SET typo_min_one=?2 WHERE id=?1";
  static const char q_typo_two[] = "UPDATE lists SET typo_min_two=?2 WHERE id=?1";
  static const char q_defl[] = "UPDATE lists SET default_locale=?2 WHERE id=?1";
  static const char q_supl[] = "UPDATE lists SET supported_locales=?2 WHERE id=?1";
  static const char q_touch[] = "UPDATE lists SET updated_at=?2 WHERE id=?1";
  json_t *cur = NULL, *patched = NULL;
  sg_err rc = SG_E_INTERNAL;
  pthread_mutex_lock(&st->mu);
  if (sg__sq_begin(st)) goto out;
  rc = sg__sq_list_load(st, workspace_id, id, &cur);
  if (rc != SG_E_OK) goto end;
  if (if_match) {
    char etag[48];
    sg_store_list_etag(cur, etag);
    if (!sg_etag_match(if_match, etag)) {
      rc = SG_E_PRECONDITION_FAILED;
      *out = cur;
      cur = NULL;
      goto end;
    }
  }
  typedef struct {
    const char *sql;
    const json_t *v;
  } update;
  update ups[12];
  size_t nup = 0;
  const json_t *qp = json_object_get(changes, "queryPolicy");
  const json_t *lp = json_object_get(changes, "localePolicy");
  ups[nup++] = (update){q_name, json_object_get(changes, "name")};
  ups[nup++] = (update){q_vis, json_object_get(changes, "visibility")};
  ups[nup++] = (update){q_status, json_object_get(changes, "status")};
  ups[nup++] = (update){q_order, json_object_get(changes, "displayOrder")};
  ups[nup++] = (update){q_minq, json_object_get(qp, "minQueryChars")};
  ups[nup++] = (update){q_deb, json_object_get(qp, "debounceMs")};
  const json_t *tt = json_object_get(qp, "typoTolerance");
  ups[nup++] = (update){q_typo_en, json_object_get(tt, "enabled")};
  ups[nup++] = (update){q_typo_one, json_object_get(tt, "minCharsOneTypo")};
  ups[nup++] = (update){q_typo_two, json_object_get(tt, "minCharsTwoTypos")};
  ups[nup++] = (update){q_defl, json_object_get(lp, "defaultLocale")};
  ups[nup++] = (update){q_supl, json_object_get(lp, "supportedLocales")};
  ups[nup++] = (update){q_touch, NULL};
  for (size_t i = 0; i < nup; i++) {
    if (!ups[i].v && ups[i].sql != q_touch) continue;
    sqlite3_stmt *s = sg__sq_prep(st, ups[i].sql);
    if (!s) goto fail;
    sg__sq_text(s, 1, id);
    if (ups[i].sql == q_touch) {
      sqlite3_bind_int64(s, 2, sg_now_s());
    } else if (json_is_integer(ups[i].v)) {
      sqlite3_bind_int64(s, 2, json_integer_value(ups[i].v));
    } else if (json_is_boolean(ups[i].v)) {
      sqlite3_bind_int64(s, 2, json_is_true(ups[i].v));
    } else if (json_is_string(ups[i].v)) {
      sg__sq_text(s, 2, json_string_value(ups[i].v));
    } else {
      char *enc = json_dumps(ups[i].v, JSON_COMPACT);
      sg__sq_text(s, 2, enc);
      free(enc);
    }
    if (sg__sq_run(st, s) < 0) goto fail;
  }
  json_decref(cur);
  cur = NULL;
  rc = sg__sq_list_load(st, workspace_id, id, &patched);
  if (rc == SG_E_OK && !sg__store_list_policies_valid(patched)) rc = SG_E_INVALID_REQUEST;
  goto end;
fail:
  rc = SG_E_INTERNAL;
end:
  if ((rc = sg__sq_end(st, rc)) == SG_E_OK) {
    *out = patched;
    patched = NULL;
  }
out:
  json_decref(cur);
  json_decref(patched);
  pthread_mutex_unlock(&st->mu);
  return rc;
}
