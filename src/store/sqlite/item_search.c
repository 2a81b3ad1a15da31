/*
 * SQLite backend: the dashboard's item search (a value prefix on a list's current items).
 */
#include <stdlib.h>
#include <string.h>

#include "store/members.h"
#include "store/rules.h"
#include "store/sqlite/sqlite_store.h"

sg_err sg__sqlite_item_search(sg_store *base, const char *workspace_id, const char *list_id,
                              const char *prefix, size_t limit, const json_t *after, json_t **data,
                              bool *more) {
  sg__sq *st = sg__sq_of(base);
  /* The range on the NOCASE index finds the candidates (NOCASE folds ASCII only, as LIKE
   * does); LIKE keeps exactly those that start with the prefix. The upper bound is the
   * prefix followed by U+10FFFF, above any valid UTF-8 continuation. */
  static const char q[] =
      "SELECT " SG__SQ_ITEM_COLS " FROM items WHERE list_id=?1 AND to_clock IS NULL"
      " AND value >= ?3 COLLATE NOCASE AND value < ?4 COLLATE NOCASE"
      " AND value LIKE ?5 ESCAPE '\\'"
      " AND (?6 IS NULL OR value > ?6 COLLATE NOCASE OR (value = ?6 COLLATE NOCASE AND id > ?7))"
      " ORDER BY value COLLATE NOCASE, id LIMIT ?2";
  size_t n = strlen(prefix);
  char *hi = malloc(n + 5);
  char *like = sg__store_like_prefix(prefix);
  sg_err rc = SG_E_INTERNAL;
  *more = false;
  if (!hi || !like) goto done;
  memcpy(hi, prefix, n);
  memcpy(hi + n, "\xf4\x8f\xbf\xbf", 5);
  sg__sq *r = sg__sq_reader_acquire(st);
  /* One read transaction so the existence check and the page agree. */
  if (sqlite3_exec(r->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) goto out;
  if ((rc = sg__sq_list_exists(r, workspace_id, list_id)) != SG_E_OK) goto end;
  rc = SG_E_INTERNAL;
  sqlite3_stmt *s = sg__sq_prep(r, q);
  if (!s) goto end;
  sg__sq_text(s, 1, list_id);
  sqlite3_bind_int64(s, 2, (sqlite3_int64)limit + 1);
  sg__sq_text(s, 3, prefix);
  sg__sq_text(s, 4, hi);
  sg__sq_text(s, 5, like);
  if (after) {
    sg__sq_text(s, 6, json_string_value(json_array_get(after, 0)));
    sg__sq_text(s, 7, json_string_value(json_array_get(after, 1)));
  }
  json_t *arr = sg__sq_page_rows(s, limit, sg__sq_item_row, more);
  if (arr) {
    *data = arr;
    rc = SG_E_OK;
  }
end:
  sqlite3_exec(r->db, "COMMIT", NULL, NULL, NULL);
out:
  sg__sq_reader_release(r);
done:
  free(hi);
  free(like);
  return rc;
}
