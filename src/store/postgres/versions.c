/*
 * PostgreSQL backend: versions, the publish pipeline's transitions and the publish queue
 * across processes (docs/PUBLISHING.md).
 *
 * - A version number comes from "UPDATE lists SET next_version_number = … RETURNING" on
 *   the list's row, locked for the transaction: two creates on one list wait for each
 *   other and get consecutive numbers, never the same one.
 * - A claim locks the version's row (FOR UPDATE) and takes a lease (this store's owner
 *   id until a time in ms) that its worker renews; another process may take the version
 *   over once the lease has expired, whatever host the owner was on. Lease times come
 *   from the database's clock (SG__PG_NOW_MS), so hosts whose clocks drift apart agree
 *   on when a lease ends.
 * - version_next skips rows another transaction is claiming (FOR UPDATE SKIP LOCKED), so
 *   idle workers of several processes spread over different versions.
 * - Every new or released unit of work is announced with NOTIFY sg_publish, which
 *   wait_work turns into a prompt wake-up of idle workers.
 */
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "store/postgres/pg.h"
#include "store/rules.h"

#define VERSION_COLS SG__STORE_VERSION_COLS

/* The columns of VERSION_COLS, read by name. */
static const char *const version_cols[] = {
    "version_number",    "state",      "content_hash", "item_count",
    "validation_errors", "created_at", "activated_at", "failure_reason"};
enum { VERSION_NCOLS = sizeof version_cols / sizeof version_cols[0] };

static json_t *version_row(const PGresult *r, int i) {
  int c[VERSION_NCOLS];
  if (sg__pg_cols(r, version_cols, c, VERSION_NCOLS)) return NULL;
  sg__store_version_row row = {
      .number = sg__pg_i(r, i, c[0]),
      .state = sg__pg_s(r, i, c[1]),
      .content_hash = sg__pg_s(r, i, c[2]),
      .item_count = sg__pg_i(r, i, c[3]),
      .validation_errors = sg__pg_s(r, i, c[4]),
      .created_at = sg__pg_i(r, i, c[5]),
      .has_activated_at = !PQgetisnull(r, i, c[6]),
      .activated_at = sg__pg_i(r, i, c[6]),
      .failure_reason = sg__pg_s(r, i, c[7]),
  };
  return sg__store_version_record(&row);
}

static sg_err load_version(PGconn *c, const char *list_id, int64_t number, json_t **out) {
  char num[24];
  const char *p[] = {list_id, sg__pg_int(number, num)};
  return sg__pg_row(c,
                    "SELECT " VERSION_COLS " FROM versions WHERE list_id=$1 AND"
                    " version_number=$2::bigint",
                    2, p, version_row, SG_E_NOT_FOUND, out);
}

typedef struct {
  const char *workspace_id, *list_id;
  int64_t number;
  json_t *out;
} vctx;

static sg_err create_fn(PGconn *c, void *p_) {
  vctx *x = p_;
  json_decref(x->out);
  x->out = NULL;
  sg_err rc = sg__pg_list_writable(c, x->workspace_id, x->list_id);
  if (rc != SG_E_OK) return rc;
  const char *p[] = {x->list_id};
  /* The list's row is locked (above): the number, the item clock and the count below
   * all belong to this one moment of the list. */
  PGresult *r = sg__pg_q(c,
                         "UPDATE lists SET next_version_number=next_version_number+1"
                         " WHERE id=$1 RETURNING next_version_number-1 AS number, default_locale,"
                         " supported_locales, item_clock, (SELECT COUNT(*) FROM items"
                         " WHERE list_id=$1 AND to_clock IS NULL) AS item_count",
                         1, p);
  if (!r) return SG_E_INTERNAL;
  static const char *const names[] = {"number", "default_locale", "supported_locales", "item_clock",
                                      "item_count"};
  int col[5];
  if (sg__pg_cols(r, names, col, 5) || PQntuples(r) != 1) {
    PQclear(r);
    return SG_E_INTERNAL;
  }
  x->number = sg__pg_i(r, 0, col[0]);
  json_t *sup = json_loads(PQgetvalue(r, 0, col[2]), 0, NULL);
  json_t *lp = json_pack("{s:s,s:o}", "defaultLocale", PQgetvalue(r, 0, col[1]), "supportedLocales",
                         sup ? sup : json_array());
  char *policy = lp ? json_dumps(lp, JSON_COMPACT) : NULL;
  json_decref(lp);
  char num[24], now[24];
  const char *pi[] = {
      x->list_id, sg__pg_int(x->number, num), PQgetvalue(r, 0, col[4]), PQgetvalue(r, 0, col[3]),
      policy,     sg__pg_int(sg_now_s(), now)};
  int bad = !policy || sg__pg_x(c,
                                "INSERT INTO versions(list_id, version_number, state, item_count,"
                                " snapshot_seq, locale_policy, created_at) VALUES($1,"
                                " $2::bigint, 'queued', $3::bigint, $4::bigint, $5, $6)",
                                6, pi);
  free(policy);
  PQclear(r);
  if (bad || sg__pg_x(c, "NOTIFY sg_publish", 0, NULL)) return SG_E_INTERNAL;
  return load_version(c, x->list_id, x->number, &x->out);
}

sg_err sg__pg_version_create(sg_store *base, const char *workspace_id, const char *list_id,
                             json_t **out) {
  vctx x = {workspace_id, list_id, 0, NULL};
  sg_err rc = sg__pg_tx(sg__pg_of(base), SG__PG_RC, create_fn, &x);
  if (rc == SG_E_OK)
    *out = x.out;
  else
    json_decref(x.out);
  return rc;
}

static sg_err get_fn(PGconn *c, void *p_) {
  vctx *x = p_;
  json_decref(x->out);
  x->out = NULL;
  sg_err rc = sg__pg_list_exists(c, x->workspace_id, x->list_id);
  return rc == SG_E_OK ? load_version(c, x->list_id, x->number, &x->out) : rc;
}

sg_err sg__pg_version_get(sg_store *base, const char *workspace_id, const char *list_id,
                          int64_t number, json_t **out) {
  vctx x = {workspace_id, list_id, number, NULL};
  sg_err rc = sg__pg_tx(sg__pg_of(base), SG__PG_RO, get_fn, &x);
  if (rc == SG_E_OK)
    *out = x.out;
  else
    json_decref(x.out);
  return rc;
}

typedef struct {
  const char *workspace_id, *list_id;
  size_t limit;
  const json_t *after;
  json_t *data;
  bool *more;
} page_ctx;

static sg_err page_fn(PGconn *c, void *p_) {
  page_ctx *x = p_;
  json_decref(x->data);
  x->data = NULL;
  sg_err rc = sg__pg_list_exists(c, x->workspace_id, x->list_id);
  if (rc != SG_E_OK) return rc;
  char lim[24], num[24];
  const char *p[] = {x->list_id, sg__pg_int((int64_t)x->limit + 1, lim),
                     x->after ? sg__pg_int(json_integer_value(json_array_get(x->after, 0)), num)
                              : NULL};
  PGresult *r = sg__pg_q(c,
                         x->after ? "SELECT " VERSION_COLS " FROM versions WHERE list_id=$1"
                                    " AND version_number < $3::bigint"
                                    " ORDER BY version_number DESC LIMIT $2"
                                  : "SELECT " VERSION_COLS " FROM versions WHERE list_id=$1"
                                    " ORDER BY version_number DESC LIMIT $2",
                         x->after ? 3 : 2, p);
  if (!r) return SG_E_INTERNAL;
  x->data = sg__pg_page(r, x->limit, version_row, x->more);
  PQclear(r);
  return x->data ? SG_E_OK : SG_E_INTERNAL;
}

sg_err sg__pg_version_page(sg_store *base, const char *workspace_id, const char *list_id,
                           size_t limit, const json_t *after, json_t **data, bool *more) {
  page_ctx x = {workspace_id, list_id, limit, after, NULL, more};
  *more = false;
  sg_err rc = sg__pg_tx(sg__pg_of(base), SG__PG_RO, page_fn, &x);
  if (rc == SG_E_OK)
    *data = x.data;
  else
    json_decref(x.data);
  return rc;
}

/* ---- the pipeline's side ---------------------------------------------------------------- */

sg_err sg__pg_snapshot_items(sg_store *base, const char *list_id, int64_t snapshot_seq,
                             int64_t after_seq, size_t limit,
                             int (*cb)(const sg_store_item_row *row, void *ctx), void *ctx,
                             int64_t *last_seq, size_t *n) {
  char after[24], snap[24], lim[24];
  const char *p[] = {list_id, sg__pg_int(after_seq, after), sg__pg_int(snapshot_seq, snap),
                     sg__pg_int((int64_t)limit, lim)};
  *last_seq = after_seq;
  *n = 0;
  sg_err rc;
  PGresult *r = sg__pg_read(sg__pg_of(base),
                            "SELECT seq, id, value, display_value, parent_id, aliases, locales,"
                            " rank, description FROM items WHERE list_id=$1 AND seq>$2::bigint AND"
                            " from_clock<=$3::bigint AND (to_clock IS NULL OR to_clock>$3::bigint)"
                            " ORDER BY seq LIMIT $4::bigint",
                            4, p, &rc);
  if (!r) return rc;
  static const char *const names[] = {"seq",     "id",      "value", "display_value", "parent_id",
                                      "aliases", "locales", "rank",  "description"};
  int c[9];
  if (sg__pg_cols(r, names, c, 9)) {
    PQclear(r);
    return SG_E_INTERNAL;
  }
  for (int i = 0; i < PQntuples(r); i++) {
    sg_store_item_row row = {
        .seq = sg__pg_i(r, i, c[0]),
        .id = sg__pg_s(r, i, c[1]),
        .value = sg__pg_s(r, i, c[2]),
        .display_value = sg__pg_s(r, i, c[3]),
        .parent_id = sg__pg_s(r, i, c[4]),
        .aliases_json = sg__pg_s(r, i, c[5]),
        .locales_json = sg__pg_s(r, i, c[6]),
        .rank = sg__pg_i(r, i, c[7]),
        .description = sg__pg_s(r, i, c[8]),
    };
    if (cb(&row, ctx)) {
      rc = SG_E_INTERNAL;
      break;
    }
    *last_seq = row.seq;
    (*n)++;
  }
  PQclear(r);
  return rc;
}

/* Runs one conditional transition ($1 list_id, $2 number, $3 text): SG_E_PRECONDITION_FAILED
 * when no row was in a state the statement applies to. */
static sg_err transition(sg__pg *st, const char *sql, const char *list_id, int64_t number,
                         const char *text) {
  char num[24];
  const char *p[] = {list_id, sg__pg_int(number, num), text};
  sg_err rc;
  PGresult *r = sg__pg_one(st, sql, 3, p, &rc);
  if (!r) return rc;
  rc = sg__pg_changed(r) == 1 ? SG_E_OK : SG_E_PRECONDITION_FAILED;
  PQclear(r);
  return rc;
}

sg_err sg__pg_version_set_draft(sg_store *base, const char *list_id, int64_t number,
                                const json_t *validation_errors) {
  char *enc = json_dumps(validation_errors, JSON_COMPACT | JSON_PRESERVE_ORDER);
  if (!enc) return SG_E_INTERNAL;
  sg_err rc = transition(sg__pg_of(base),
                         "UPDATE versions SET state='draft', validation_errors=$3 WHERE"
                         " list_id=$1 AND version_number=$2::bigint AND state='queued'",
                         list_id, number, enc);
  free(enc);
  return rc;
}

sg_err sg__pg_version_set_staged(sg_store *base, const char *list_id, int64_t number,
                                 const char *content_hash) {
  return transition(sg__pg_of(base),
                    "UPDATE versions SET state='staged', content_hash=$3 WHERE list_id=$1 AND"
                    " version_number=$2::bigint AND state='queued'",
                    list_id, number, content_hash);
}

sg_err sg__pg_version_set_failed(sg_store *base, const char *list_id, int64_t number,
                                 const char *reason) {
  return transition(sg__pg_of(base),
                    "UPDATE versions SET state='failed', failure_reason=$3 WHERE list_id=$1 AND"
                    " version_number=$2::bigint AND state IN ('queued', 'staged')",
                    list_id, number, reason);
}

sg_err sg__pg_version_set_async(sg_store *base, const char *list_id, int64_t number) {
  return transition(sg__pg_of(base),
                    "UPDATE versions SET queued_async=1 WHERE list_id=$1 AND"
                    " version_number=$2::bigint AND state='queued' AND $3::text IS NULL",
                    list_id, number, NULL);
}

typedef struct {
  const char *workspace_id, *list_id;
  int64_t number;
  bool want_list, activated;
  json_t *list;
} activate_ctx;

int sg__pg_make_active(PGconn *c, const char *const p[4]) {
  return sg__pg_x(c, "UPDATE versions SET state='superseded' WHERE list_id=$1 AND state='active'",
                  1, p) ||
                 sg__pg_x(c,
                          "UPDATE versions SET state='active', activated_at=$3::bigint WHERE"
                          " list_id=$1 AND version_number=$2::bigint",
                          3, p) ||
                 sg__pg_x(c,
                          "UPDATE lists SET active_version_number=$2::bigint,"
                          " active_content_hash=$4, updated_at=$3::bigint WHERE id=$1",
                          4, p)
             ? -1
             : 0;
}

static sg_err activate_fn(PGconn *c, void *p_) {
  activate_ctx *x = p_;
  json_decref(x->list);
  x->list = NULL;
  x->activated = false;
  char num[24], now[24];
  const char *p[] = {x->list_id, sg__pg_int(x->number, num), sg__pg_int(sg_now_s(), now), NULL};
  /* The list's row first: activations of one list run one at a time. */
  PGresult *r = sg__pg_q(c, "SELECT active_version_number FROM lists WHERE id=$1 FOR UPDATE", 1, p);
  if (!r) return SG_E_INTERNAL;
  int ca = sg__pg_col(r, "active_version_number");
  if (ca < 0 || PQntuples(r) != 1) {
    PQclear(r);
    return ca < 0 ? SG_E_INTERNAL : SG_E_NOT_FOUND;
  }
  bool newer = PQgetisnull(r, 0, ca) || sg__pg_i(r, 0, ca) < x->number;
  PQclear(r);
  r = sg__pg_q(c,
               "SELECT state, content_hash FROM versions WHERE list_id=$1 AND"
               " version_number=$2::bigint FOR UPDATE",
               2, p);
  if (!r) return SG_E_INTERNAL;
  static const char *const vnames[] = {"state", "content_hash"};
  int vc[2];
  if (sg__pg_cols(r, vnames, vc, 2) || PQntuples(r) != 1) {
    bool broken = vc[0] < 0 || vc[1] < 0;
    PQclear(r);
    return broken ? SG_E_INTERNAL : SG_E_NOT_FOUND;
  }
  char hash[80] = "";
  if (strcmp(PQgetvalue(r, 0, vc[0]), SG_VERSION_STAGED) == 0 && !PQgetisnull(r, 0, vc[1]))
    snprintf(hash, sizeof hash, "%s", PQgetvalue(r, 0, vc[1]));
  PQclear(r);
  if (!*hash) return SG_E_PRECONDITION_FAILED;
  p[3] = hash;
  if (newer) {
    if (sg__pg_make_active(c, p)) return SG_E_INTERNAL;
  } else if (sg__pg_x(c,
                      "UPDATE versions SET state='superseded' WHERE list_id=$1 AND"
                      " version_number=$2::bigint",
                      2, p)) {
    return SG_E_INTERNAL;
  }
  x->activated = newer;
  if (!x->want_list) return SG_E_OK;
  return sg__pg_list_load(c, x->workspace_id, x->list_id, false, &x->list, NULL);
}

sg_err sg__pg_version_activate(sg_store *base, const char *workspace_id, const char *list_id,
                               int64_t number, bool *activated, json_t **list_out) {
  activate_ctx x = {workspace_id, list_id, number, list_out != NULL, false, NULL};
  *activated = false;
  if (list_out) *list_out = NULL;
  sg_err rc = sg__pg_tx(sg__pg_of(base), SG__PG_RC, activate_fn, &x);
  if (rc == SG_E_OK) {
    *activated = x.activated;
    if (list_out) *list_out = x.list;
  } else {
    json_decref(x.list);
  }
  return rc;
}

/* The columns of a version reference (pending, next, active versions). */
static const char *const ref_cols[] = {"list_id", "workspace_id", "version_number"};

sg_err sg__pg_versions_pending(sg_store *base, const char *list_id, int64_t before,
                               sg_version_ref *out, size_t max, size_t *n) {
  char lim[24], bef[24];
  const char *p[] = {sg__pg_int((int64_t)max, lim), list_id, sg__pg_int(before, bef)};
  *n = 0;
  sg_err rc;
  PGresult *r = sg__pg_read(sg__pg_of(base),
                            "SELECT v.list_id, l.workspace_id, v.version_number FROM versions v"
                            " JOIN lists l ON l.id=v.list_id WHERE v.state IN ('queued', 'staged')"
                            " AND ($2::text IS NULL OR v.list_id=$2) AND ($3::bigint=0 OR"
                            " v.version_number<$3::bigint) ORDER BY v.qseq LIMIT $1::bigint",
                            3, p, &rc);
  if (!r) return rc;
  int c[3];
  if (sg__pg_cols(r, ref_cols, c, 3)) {
    PQclear(r);
    return SG_E_INTERNAL;
  }
  for (int i = 0; i < PQntuples(r) && *n < max; i++) {
    snprintf(out[*n].list_id, sizeof out[*n].list_id, "%s", PQgetvalue(r, i, c[0]));
    snprintf(out[*n].workspace_id, sizeof out[*n].workspace_id, "%s", PQgetvalue(r, i, c[1]));
    out[*n].number = sg__pg_i(r, i, c[2]);
    (*n)++;
  }
  PQclear(r);
  return SG_E_OK;
}

sg_err sg__pg_artifacts_in_use(sg_store *base, json_t **out) {
  /* As on SQLite: unresolved and active versions, the keep_versions - 1 most recently
   * activated superseded ones of each list, and whatever a list record points at. */
  char keep[24];
  const char *p[] = {sg__pg_int(base->keep_versions, keep)};
  sg_err rc;
  PGresult *r = sg__pg_read(
      sg__pg_of(base),
      "SELECT content_hash FROM versions WHERE content_hash IS NOT NULL AND"
      " state IN ('queued', 'staged', 'active')"
      " UNION SELECT content_hash FROM (SELECT content_hash, ROW_NUMBER() OVER (PARTITION BY"
      " list_id ORDER BY activated_at DESC, version_number DESC) AS k FROM versions WHERE"
      " state='superseded' AND activated_at IS NOT NULL AND content_hash IS NOT NULL) kept"
      " WHERE k < $1::bigint"
      " UNION SELECT active_content_hash FROM lists WHERE active_content_hash IS NOT NULL",
      1, p, &rc);
  if (!r) return rc;
  int ch = sg__pg_col(r, "content_hash");
  if (ch < 0) {
    PQclear(r);
    return SG_E_INTERNAL;
  }
  json_t *arr = json_array();
  for (int i = 0; i < PQntuples(r); i++)
    json_array_append_new(arr, json_string(PQgetvalue(r, i, ch)));
  PQclear(r);
  *out = arr;
  return SG_E_OK;
}

/* ---- the publish queue across processes ---------------------------------------------------- */

typedef struct {
  const char *list_id, *owner;
  int64_t number, lease_ms;
  sg_version_job *job;
} claim_ctx;

static sg_err claim_fn(PGconn *c, void *p_) {
  claim_ctx *x = p_;
  sg_version_job *job = x->job;
  sg_store_job_clear(job);
  memset(job, 0, sizeof *job);
  char num[24], lease[24];
  const char *p[] = {x->list_id, sg__pg_int(x->number, num), x->owner,
                     sg__pg_int(x->lease_ms, lease)};
  /* Whether another owner's lease is live is decided by the database's clock. */
  PGresult *r = sg__pg_q(
      c,
      "SELECT v.state, v.snapshot_seq, v.item_count, v.attempts, v.content_hash,"
      " v.locale_policy, l.workspace_id, v.queued_async,"
      " v.lease_owner IS NOT NULL AND v.lease_owner<>$3 AND v.lease_until_ms>=" SG__PG_NOW_MS
      " AS leased, v.lease_owner,"
      " EXISTS(SELECT 1 FROM versions n WHERE n.list_id=v.list_id AND"
      " n.version_number>v.version_number AND n.state IN ('queued', 'staged', 'active'))"
      " AS newer"
      " FROM versions v JOIN lists l ON l.id=v.list_id"
      " WHERE v.list_id=$1 AND v.version_number=$2::bigint FOR UPDATE OF v",
      3, p);
  if (!r) return SG_E_INTERNAL;
  static const char *const names[] = {
      "state",        "snapshot_seq", "item_count", "attempts",    "content_hash", "locale_policy",
      "workspace_id", "queued_async", "leased",     "lease_owner", "newer"};
  int col[11];
  if (sg__pg_cols(r, names, col, 11)) {
    PQclear(r);
    return SG_E_INTERNAL;
  }
  if (PQntuples(r) != 1) {
    PQclear(r);
    return SG_E_NOT_FOUND;
  }
  snprintf(job->list_id, sizeof job->list_id, "%s", x->list_id);
  job->number = x->number;
  snprintf(job->state, sizeof job->state, "%s", PQgetvalue(r, 0, col[0]));
  job->snapshot_seq = sg__pg_i(r, 0, col[1]);
  job->item_count = (uint64_t)sg__pg_i(r, 0, col[2]);
  job->attempts = (int)sg__pg_i(r, 0, col[3]);
  const char *h = sg__pg_s(r, 0, col[4]);
  snprintf(job->content_hash, sizeof job->content_hash, "%s", h ? h : "");
  job->locale_policy = json_loads(PQgetvalue(r, 0, col[5]), 0, NULL);
  snprintf(job->workspace_id, sizeof job->workspace_id, "%s", PQgetvalue(r, 0, col[6]));
  bool async = sg__pg_i(r, 0, col[7]) != 0;
  /* A live lease of another owner, unless that owner is a dead process of this host. */
  bool busy =
      strcmp(PQgetvalue(r, 0, col[8]), "t") == 0 && !sg__store_owner_dead(sg__pg_s(r, 0, col[9]));
  bool newer = strcmp(PQgetvalue(r, 0, col[10]), "t") == 0;
  PQclear(r);
  bool unresolved =
      strcmp(job->state, SG_VERSION_QUEUED) == 0 || strcmp(job->state, SG_VERSION_STAGED) == 0;
  if (!unresolved) return SG_E_OK;
  if (busy) return SG_E_PUBLISH_IN_PROGRESS;
  bool coalesce = async && newer && strcmp(job->state, SG_VERSION_QUEUED) == 0;
  if (coalesce) {
    if (sg__pg_x(c,
                 "UPDATE versions SET state='superseded', lease_owner=NULL, lease_until_ms=NULL"
                 " WHERE list_id=$1 AND version_number=$2::bigint AND state='queued'",
                 2, p))
      return SG_E_INTERNAL;
    snprintf(job->state, sizeof job->state, "%s", SG_VERSION_SUPERSEDED);
    return SG_E_OK;
  }
  if (sg__pg_x(c,
               "UPDATE versions SET attempts=attempts+1, lease_owner=$3,"
               " lease_until_ms=" SG__PG_NOW_MS "+$4::bigint"
               " WHERE list_id=$1 AND version_number=$2::bigint",
               4, p))
    return SG_E_INTERNAL;
  job->attempts++;
  return SG_E_OK;
}

sg_err sg__pg_version_claim(sg_store *base, const char *list_id, int64_t number, int64_t lease_ms,
                            sg_version_job *job) {
  sg__pg *st = sg__pg_of(base);
  claim_ctx x = {list_id, st->owner, number, lease_ms, job};
  memset(job, 0, sizeof *job);
  sg_err rc = sg__pg_tx(st, SG__PG_RC, claim_fn, &x);
  if (rc != SG_E_OK && rc != SG_E_PUBLISH_IN_PROGRESS) sg_store_job_clear(job);
  return rc;
}

sg_err sg__pg_version_leases_renew(sg_store *base, int64_t lease_ms) {
  sg__pg *st = sg__pg_of(base);
  char lease[24];
  const char *p[] = {st->owner, sg__pg_int(lease_ms, lease)};
  sg_err rc;
  PGresult *r = sg__pg_one(st,
                           "UPDATE versions SET lease_until_ms=" SG__PG_NOW_MS "+$2::bigint"
                           " WHERE lease_owner=$1 AND state IN ('queued', 'staged')",
                           2, p, &rc);
  PQclear(r);
  return r ? SG_E_OK : rc;
}

sg_err sg__pg_version_release(sg_store *base, const char *list_id, int64_t number) {
  sg__pg *st = sg__pg_of(base);
  /* A released version may wait for another process's worker: wake them. */
  sg_err rc = transition(st,
                         "WITH u AS (UPDATE versions SET lease_owner=NULL, lease_until_ms=NULL"
                         " WHERE list_id=$1 AND version_number=$2::bigint AND lease_owner=$3"
                         " RETURNING 1) SELECT pg_notify('sg_publish', ''), 1 FROM u",
                         list_id, number, st->owner);
  return rc == SG_E_PRECONDITION_FAILED ? SG_E_OK : rc;
}

sg_err sg__pg_version_next(sg_store *base, const char *after_workspace, int64_t fresh_s,
                           sg_version_ref *out, bool *found) {
  sg__pg *st = sg__pg_of(base);
  char fresh[24];
  const char *p[] = {after_workspace ? after_workspace : "",
                     sg__pg_int(sg_now_s() - fresh_s, fresh), st->owner};
  /* Workspaces after after_workspace first (false sorts before true), then wrapping;
   * rows being claimed right now by another transaction are skipped. Live leases of
   * other owners are filtered here, not in SQL, because a dead process of this host
   * holds nothing: a few more rows than one are read. */
  sg_err rc;
  PGresult *r = sg__pg_one(
      st,
      "SELECT v.list_id, l.workspace_id, v.version_number, v.lease_owner,"
      " v.lease_owner IS NOT NULL AND v.lease_owner<>$3 AND v.lease_until_ms>=" SG__PG_NOW_MS
      " AS leased FROM versions v JOIN lists l ON l.id=v.list_id WHERE v.state IN ('queued', "
      "'staged')"
      " AND (v.queued_async=1 OR v.state='staged' OR v.created_at<=$2::bigint)"
      " ORDER BY l.workspace_id<=$1, l.workspace_id, v.qseq LIMIT 64 FOR UPDATE OF v SKIP LOCKED",
      3, p, &rc);
  *found = false;
  if (!r) return rc;
  int c[3], cl = sg__pg_col(r, "leased"), co = sg__pg_col(r, "lease_owner");
  if (sg__pg_cols(r, ref_cols, c, 3) || cl < 0 || co < 0) {
    PQclear(r);
    return SG_E_INTERNAL;
  }
  for (int i = 0; i < PQntuples(r); i++) {
    if (strcmp(PQgetvalue(r, i, cl), "t") == 0 && !sg__store_owner_dead(PQgetvalue(r, i, co)))
      continue;
    snprintf(out->list_id, sizeof out->list_id, "%s", PQgetvalue(r, i, c[0]));
    snprintf(out->workspace_id, sizeof out->workspace_id, "%s", PQgetvalue(r, i, c[1]));
    out->number = sg__pg_i(r, i, c[2]);
    *found = true;
    break;
  }
  PQclear(r);
  return SG_E_OK;
}

/* ---- the background recompile (docs/UPGRADING.md; SQLite's versions.c says more) ------ */

sg_err sg__pg_active_versions(sg_store *base, const char *after, sg_active_version *out, size_t max,
                              size_t *n) {
  char lim[24];
  const char *p[] = {after, sg__pg_int((int64_t)max, lim)};
  *n = 0;
  sg_err rc;
  PGresult *r = sg__pg_read(sg__pg_of(base),
                            "SELECT v.list_id, l.workspace_id, v.version_number, v.content_hash"
                            " FROM versions v JOIN lists l ON l.id=v.list_id"
                            " WHERE v.state='active' AND l.status<>'archived'"
                            " AND v.content_hash IS NOT NULL AND v.list_id>$1"
                            " ORDER BY v.list_id LIMIT $2::bigint",
                            2, p, &rc);
  if (!r) return rc;
  int c[3], ch = sg__pg_col(r, "content_hash");
  if (sg__pg_cols(r, ref_cols, c, 3) || ch < 0) {
    PQclear(r);
    return SG_E_INTERNAL;
  }
  for (int i = 0; i < PQntuples(r) && *n < max; i++) {
    sg_active_version *a = &out[*n];
    snprintf(a->list_id, sizeof a->list_id, "%s", PQgetvalue(r, i, c[0]));
    snprintf(a->workspace_id, sizeof a->workspace_id, "%s", PQgetvalue(r, i, c[1]));
    a->number = sg__pg_i(r, i, c[2]);
    snprintf(a->content_hash, sizeof a->content_hash, "%s", PQgetvalue(r, i, ch));
    (*n)++;
  }
  PQclear(r);
  return SG_E_OK;
}

typedef struct {
  const char *list_id;
  int64_t from, number;
  json_t *out;
} recompile_ctx;

static sg_err recompile_fn(PGconn *c, void *p_) {
  recompile_ctx *x = p_;
  json_decref(x->out);
  x->out = NULL;
  char from[24];
  const char *p[] = {x->list_id, sg__pg_int(x->from, from)};
  /* The list's row first, locked: a second process racing for the same list waits here
   * and then sees the version this one queued. */
  PGresult *r = sg__pg_q(c, "SELECT status FROM lists WHERE id=$1 FOR UPDATE", 1, p);
  if (!r) return SG_E_INTERNAL;
  int cs = sg__pg_col(r, "status");
  sg_err rc = cs < 0                                          ? SG_E_INTERNAL
              : PQntuples(r) != 1                             ? SG_E_NOT_FOUND
              : strcmp(PQgetvalue(r, 0, cs), "archived") == 0 ? SG_E_LIST_ARCHIVED
                                                              : SG_E_OK;
  PQclear(r);
  if (rc != SG_E_OK) return rc;
  r = sg__pg_q(c,
               "SELECT v.state, v.snapshot_seq, v.item_count, v.locale_policy,"
               " (SELECT COUNT(*) FROM versions WHERE list_id=$1"
               "   AND state IN ('queued', 'staged')) AS unresolved,"
               " (SELECT COUNT(*) FROM items WHERE list_id=$1 AND from_clock<=v.snapshot_seq"
               "   AND (to_clock IS NULL OR to_clock>v.snapshot_seq)) AS items_now,"
               " (SELECT COUNT(*) FROM synonyms WHERE list_id=$1 AND clock<=v.snapshot_seq)"
               "   AS synonyms_before,"
               " (SELECT COUNT(*) FROM synonyms WHERE list_id=$1 AND clock>v.snapshot_seq)"
               "   AS synonyms_after"
               " FROM versions v WHERE v.list_id=$1 AND v.version_number=$2::bigint",
               2, p);
  if (!r) return SG_E_INTERNAL;
  static const char *const names[] = {"state",           "snapshot_seq",  "item_count",
                                      "locale_policy",   "unresolved",    "items_now",
                                      "synonyms_before", "synonyms_after"};
  int col[8];
  if (sg__pg_cols(r, names, col, 8)) {
    PQclear(r);
    return SG_E_INTERNAL;
  }
  if (PQntuples(r) != 1) {
    PQclear(r);
    return SG_E_NOT_FOUND;
  }
  if (strcmp(PQgetvalue(r, 0, col[0]), SG_VERSION_ACTIVE) != 0)
    rc = SG_E_VERSION_NOT_ACTIVATABLE;
  else if (sg__pg_i(r, 0, col[4]) > 0)
    rc = SG_E_PUBLISH_IN_PROGRESS;
  else if (sg__pg_i(r, 0, col[5]) != sg__pg_i(r, 0, col[2]) ||
           (sg__pg_i(r, 0, col[7]) > 0 && sg__pg_i(r, 0, col[6]) == 0))
    rc = SG_E_VERSION_NOT_AVAILABLE;
  if (rc != SG_E_OK) {
    PQclear(r);
    return rc;
  }
  PGresult *b = sg__pg_q(c,
                         "UPDATE lists SET next_version_number=next_version_number+1"
                         " WHERE id=$1 RETURNING next_version_number-1 AS number",
                         1, p);
  int cn = b ? sg__pg_col(b, "number") : -1;
  if (!b || cn < 0 || PQntuples(b) != 1) {
    if (b) PQclear(b);
    PQclear(r);
    return SG_E_INTERNAL;
  }
  x->number = sg__pg_i(b, 0, cn);
  PQclear(b);
  char num[24], now[24];
  const char *pi[] = {x->list_id,
                      sg__pg_int(x->number, num),
                      PQgetvalue(r, 0, col[2]),
                      PQgetvalue(r, 0, col[1]),
                      PQgetvalue(r, 0, col[3]),
                      sg__pg_int(sg_now_s(), now)};
  int bad = sg__pg_x(c,
                     "INSERT INTO versions(list_id, version_number, state, item_count,"
                     " snapshot_seq, locale_policy, created_at) VALUES($1,"
                     " $2::bigint, 'queued', $3::bigint, $4::bigint, $5, $6)",
                     6, pi);
  PQclear(r);
  if (bad || sg__pg_x(c, "NOTIFY sg_publish", 0, NULL)) return SG_E_INTERNAL;
  return load_version(c, x->list_id, x->number, &x->out);
}

sg_err sg__pg_version_recompile(sg_store *base, const char *list_id, int64_t from, json_t **out) {
  recompile_ctx x = {list_id, from, 0, NULL};
  sg_err rc = sg__pg_tx(sg__pg_of(base), SG__PG_RC, recompile_fn, &x);
  if (rc == SG_E_OK)
    *out = x.out;
  else
    json_decref(x.out);
  return rc;
}
