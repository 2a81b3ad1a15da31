/*
 * POST /api/v1/lists/{id}/query-suggestions (docs/DESIGN.md §9; docs/ANALYTICS.md):
 * builds a target list T of the same workspace from the queries that led to selections
 * of the source list, then publishes T.
 *
 * The body {"targetListId", "days": 30, "minSelections": 3, "maxItems": 10000,
 * "exclude": [phrases], "dryRun": false} is validated whole first (400 with one field
 * path per problem). The store gives the normalised queries of the last `days` UTC days
 * (today included) with at least minSelections selections, and the raw forms reported
 * with them (store.h, sg_store_analytics_suggest). Here, above the seam and so the same
 * on every backend: a query holding an exclude phrase as whole words is dropped; each
 * remaining query becomes {value: q, displayValue: its most frequent trimmed raw form
 * (ties bytewise smallest), rank: its selections}; the maxItems best by rank (ties by
 * value, bytewise) are kept. dryRun answers them (200 {"items"}); otherwise they replace
 * T's items through the import's replace (matched by value, so an item T already holds
 * keeps its id) and T is published, answering as POST …/versions does. No qualifying
 * query is 409 no_qualifying_queries, with T untouched.
 */
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "compiler/normalize.h"
#include "control/internal.h"

#define DAYS_MAX 366
#define MAX_ITEMS_MAX 100000
#define EXCLUDE_MAX 1000
#define PHRASE_MAX 1024
/* The item limits of docs/DESIGN.md §2 (control/item_validate.c). */
#define VALUE_MAX 1024
#define DISPLAY_MAX 512

typedef struct {
  const char *target;
  int64_t days, min_selections, max_items;
  char **exclude; /* normalised phrases */
  size_t n_exclude;
  bool dry_run;
} params;

static void params_free(params *p) {
  for (size_t i = 0; i < p->n_exclude; i++) free(p->exclude[i]);
  free(p->exclude);
}

/* An optional integer member in lo..hi, else def. */
static int64_t int_member(const json_t *body, const char *name, int64_t def, int64_t lo, int64_t hi,
                          json_t **fields) {
  const json_t *v = json_object_get(body, name);
  if (!v || json_is_null(v)) return def;
  if (json_is_integer(v) && json_integer_value(v) >= lo && json_integer_value(v) <= hi)
    return json_integer_value(v);
  char reason[96];
  snprintf(reason, sizeof reason, "must be an integer from %lld to %lld", (long long)lo,
           (long long)hi);
  sg_field_error(fields, name, reason);
  return def;
}

/* Validates body into p (borrowing targetListId from body). Returns 0, or -1 with one
 * {path, reason} per problem appended to *fields. */
static int parse(const json_t *body, params *p, json_t **fields) {
  static const char *const allowed[] = {
      "targetListId", "days", "minSelections", "maxItems", "exclude", "dryRun", NULL};
  sg__reject_unknown(body, allowed, "", fields);
  const json_t *t = json_object_get(body, "targetListId");
  if (!t || json_is_null(t))
    sg_field_error(fields, "targetListId", "required: the id of a list of this workspace");
  else if (!json_is_string(t) || json_string_length(t) < 1 || json_string_length(t) > 128)
    sg_field_error(fields, "targetListId", "must be a list id (1 to 128 bytes)");
  else
    p->target = json_string_value(t);
  p->days = int_member(body, "days", 30, 1, DAYS_MAX, fields);
  p->min_selections = int_member(body, "minSelections", 3, 1, INT32_MAX, fields);
  p->max_items = int_member(body, "maxItems", 10000, 1, MAX_ITEMS_MAX, fields);
  const json_t *d = json_object_get(body, "dryRun");
  if (d && !json_is_null(d) && !json_is_boolean(d))
    sg_field_error(fields, "dryRun", "must be true or false");
  p->dry_run = json_is_true(d);
  const json_t *ex = json_object_get(body, "exclude");
  if (ex && !json_is_null(ex)) {
    if (!json_is_array(ex) || json_array_size(ex) > EXCLUDE_MAX) {
      sg_field_error(fields, "exclude", "must be an array of at most 1000 phrases");
    } else {
      p->exclude = calloc(json_array_size(ex) + 1, sizeof *p->exclude);
      if (!p->exclude) return -1;
      size_t i;
      const json_t *e;
      json_array_foreach(ex, i, e) {
        char path[48];
        snprintf(path, sizeof path, "exclude[%zu]", i);
        if (!json_is_string(e) || json_string_length(e) < 1 || json_string_length(e) > PHRASE_MAX) {
          sg_field_error(fields, path, "must be a string of 1 to 1024 bytes");
          continue;
        }
        char *n = NULL;
        size_t nlen = 0;
        if (sg_normalize(json_string_value(e), json_string_length(e), &n, &nlen) != 0 ||
            nlen == 0) {
          free(n);
          sg_field_error(fields, path, "must hold a letter or a digit");
          continue;
        }
        p->exclude[p->n_exclude++] = n;
      }
    }
  }
  return *fields ? -1 : 0;
}

/* True when q holds phrase as whole words: both are normalised, so words are separated
 * by exactly one space and neither has a space at its ends. */
static bool holds_phrase(const char *q, size_t qlen, const char *phrase) {
  size_t n = strlen(phrase);
  for (const char *at = q; n <= qlen && (at = strstr(at, phrase)) != NULL; at++) {
    bool starts = at == q || at[-1] == ' ';
    bool ends = (size_t)(at - q) + n == qlen || at[n] == ' ';
    if (starts && ends) return true;
  }
  return false;
}

/* s without leading and trailing ASCII white space: *len bytes from the returned start. */
static const char *trim(const char *s, size_t *len) {
  size_t n = strlen(s);
  while (n && strchr(" \t\n\v\f\r", s[0])) s++, n--;
  while (n && strchr(" \t\n\v\f\r", s[n - 1])) n--;
  *len = n;
  return s;
}

typedef struct {
  const char *q; /* borrowed from the store's answer */
  int64_t selections;
  json_t *forms; /* trimmed raw form -> count (owned) */
} cand;

static int by_rank(const void *a, const void *b) {
  const cand *x = a, *y = b;
  if (x->selections != y->selections) return x->selections > y->selections ? -1 : 1;
  return strcmp(x->q, y->q);
}

static int by_q(const void *a, const void *b) {
  return strcmp(((const cand *)a)->q, ((const cand *)b)->q);
}

/* The most frequent form (ties bytewise smallest) that fits a displayValue, or NULL. */
static const char *display_of(const cand *c) {
  const char *best = NULL;
  json_int_t best_n = 0;
  const char *k;
  json_t *v;
  json_object_foreach(c->forms, k, v) {
    json_int_t n = json_integer_value(v);
    size_t len = strlen(k);
    if (len < 1 || len > DISPLAY_MAX) continue;
    if (!best || n > best_n || (n == best_n && strcmp(k, best) < 0)) {
      best = k;
      best_n = n;
    }
  }
  return best;
}

/* The items section 9 gives for the store's answer raw: a new array, best first. */
static json_t *build_items(json_t *raw, const params *p) {
  json_t *qs = json_object_get(raw, "queries");
  size_t nq = json_array_size(qs), n = 0;
  cand *cs = calloc(nq ? nq : 1, sizeof *cs);
  if (!cs) return NULL;
  size_t i;
  json_t *row;
  json_array_foreach(qs, i, row) {
    const char *q = json_string_value(json_array_get(row, 0));
    if (!q) continue;
    size_t qlen = strlen(q);
    /* A query longer than an item's value can never be one. */
    bool keep = qlen >= 1 && qlen <= VALUE_MAX;
    for (size_t e = 0; keep && e < p->n_exclude; e++)
      if (holds_phrase(q, qlen, p->exclude[e])) keep = false;
    if (!keep) continue;
    cs[n++] = (cand){q, json_integer_value(json_array_get(row, 1)), json_object()};
  }
  /* The forms, onto their query (found by bisection over the queries sorted by q). */
  qsort(cs, n, sizeof *cs, by_q);
  json_array_foreach(json_object_get(raw, "forms"), i, row) {
    cand key = {.q = json_string_value(json_array_get(row, 0))};
    const char *form = json_string_value(json_array_get(row, 1));
    if (!key.q || !form) continue;
    cand *c = n ? bsearch(&key, cs, n, sizeof *cs, by_q) : NULL;
    if (!c) continue;
    size_t len;
    const char *t = trim(form, &len);
    char *k = strndup(t, len);
    if (!k) continue;
    json_int_t have = json_integer_value(json_object_get(c->forms, k));
    json_object_set_new(c->forms, k,
                        json_integer(have + json_integer_value(json_array_get(row, 2))));
    free(k);
  }
  qsort(cs, n, sizeof *cs, by_rank);
  json_t *items = json_array();
  for (size_t k = 0; k < n; k++) {
    if ((int64_t)k < p->max_items) {
      json_t *it = json_pack("{s:s,s:I}", "value", cs[k].q, "rank", (json_int_t)cs[k].selections);
      const char *dv = display_of(&cs[k]);
      json_object_set_new(it, "displayValue", json_string(dv ? dv : cs[k].q));
      json_array_append_new(items, it);
    }
    json_decref(cs[k].forms);
  }
  free(cs);
  return items;
}

/* Replaces T's items with items (the import's replace: matched by value). */
static sg_err replace_items(sg_control *c, const sg_principal *who, const char *target,
                            json_t *items) {
  sg_store_import *imp = NULL;
  sg_err e = sg_store_import_begin(c->cfg.store, &imp);
  size_t i;
  json_t *it;
  json_array_foreach(items, i, it) {
    if (e != SG_E_OK) break;
    json_t *fields = NULL;
    /* The item exactly as POST …/items would store it (defaults applied). */
    json_t *v = sg__item_validate(it, &fields);
    if (!v) {
      json_decref(fields);
      e = SG_E_INTERNAL;
      break;
    }
    e = sg_store_import_add(imp, (int64_t)i, v, NULL);
    json_decref(v);
  }
  if (e == SG_E_OK) {
    sg_import_counts n;
    json_t *bad = NULL;
    int64_t n_bad = 0;
    e = sg_store_import_apply(c->cfg.store, imp, who->workspace_id, target, true, 1, &n, &bad,
                              &n_bad);
    json_decref(bad);
    /* No item names a parent, so an unknown parent cannot be why it failed. */
    if (e == SG_E_INVALID_REQUEST) e = SG_E_INTERNAL;
  }
  sg_store_import_free(imp);
  return e;
}

void sg__h_query_suggestions(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp) {
  json_t *body = sg__body_object(req, resp);
  if (!body) return;
  params p = {0};
  json_t *fields = NULL;
  if (parse(body, &p, &fields) != 0) {
    if (fields)
      sg_resp_invalid_fields(resp, req, fields);
    else
      sg_resp_error(resp, req, SG_E_INTERNAL, NULL, NULL);
    goto out;
  }
  /* Both lists must be the caller's workspace's (404 otherwise, as every list route). */
  const char *ids[2] = {req->params[0], p.target};
  for (int k = 0; k < 2; k++) {
    json_t *list = NULL;
    sg_err e = sg_store_list_get(c->cfg.store, who->workspace_id, ids[k], &list);
    json_decref(list);
    if (e != SG_E_OK) {
      sg__store_error(req, resp, e);
      goto out;
    }
  }
  int64_t today = sg_now_s() / 86400;
  json_t *raw = NULL;
  sg_err e = sg_store_analytics_suggest(c->cfg.store, req->params[0], (today - p.days + 1) * 24,
                                        (today + 1) * 24, p.min_selections, &raw);
  if (e != SG_E_OK) {
    sg__store_error(req, resp, e);
    goto out;
  }
  json_t *items = build_items(raw, &p);
  json_decref(raw);
  if (!items) {
    sg_resp_error(resp, req, SG_E_INTERNAL, NULL, NULL);
    goto out;
  }
  if (json_array_size(items) == 0) {
    json_decref(items);
    sg_resp_error(resp, req, SG_E_NO_QUALIFYING_QUERIES, NULL, NULL);
    goto out;
  }
  if (p.dry_run) {
    sg_resp_json(resp, 200, json_pack("{s:o}", "items", items));
    goto out;
  }
  e = replace_items(c, who, p.target, items);
  json_decref(items);
  if (e != SG_E_OK) {
    sg__store_error(req, resp, e);
    goto out;
  }
  sg__publish_respond(c, who, p.target, req, resp);
out:
  params_free(&p);
  json_decref(body);
}
