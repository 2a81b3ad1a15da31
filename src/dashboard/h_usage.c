/*
 * Usage against quota, selection analytics and the audit log.
 *
 * Query counts and selection events are the runtime's, not the relational store's: the
 * runtime writes its monthly counters to <state-dir>/quota.json once a second and its
 * selection events to <state-dir>/events/selections-YYYY-MM-DD.ndjson. The control plane
 * of `suggestd serve` (and of `suggestd control --data-dir D`) reads those files from the
 * runtime's state directory; without one, usage answers with "used": null.
 *
 * A fleet (--edge redis://…) keeps them elsewhere: the monthly counters in Redis (the
 * runtimes add to them every 500 ms, common/statekeys.h), and the selection events in
 * the store, where every control process's drain (control/drain.c) moves them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/redisx.h"
#include "common/statekeys.h"
#include "common/util.h"
#include "dashboard/internal.h"

#define QUOTA_FILE_MAX ((size_t)16 << 20)
#define SEGMENT_MAX ((size_t)256 << 20) /* bytes read of one day's selection events */
#define TOP_ITEMS 10

static void month_of(int64_t unix_s, char out[40]) {
  time_t t = (time_t)unix_s;
  struct tm tm;
  gmtime_r(&t, &tm);
  snprintf(out, 40, "%04d-%02d", tm.tm_year + 1900, tm.tm_mon + 1);
}

/* This month's counters of apps (an array of application objects) from the fleet's
 * Redis: an object app id -> count, or NULL when Redis cannot be read. */
static json_t *fleet_usage(const char *url, const json_t *apps, const char *month) {
  sg_redisx_url u;
  char err[256];
  sg_redisx *x = NULL;
  int bad = sg_redisx_parse(url, &u, err, sizeof err) || sg_redisx_open(&u, 1000, false, &x);
  if (bad) {
    explicit_bzero(&u, sizeof u);
    return NULL;
  }
  /* One MGET of every application's counter. */
  size_t n = json_array_size(apps);
  const char **argv = calloc(n + 1, sizeof *argv);
  char *keys = calloc(n ? n : 1, 256);
  json_t *used = NULL;
  if (argv && keys) {
    argv[0] = "MGET";
    for (size_t i = 0; i < n; i++) {
      const char *id = json_string_value(json_object_get(json_array_get(apps, i), "id"));
      snprintf(keys + i * 256, 256, "%s:%s%s:%s", u.prefix, SG_STATE_KEY_QUOTA, month,
               id ? id : "");
      argv[i + 1] = keys + i * 256;
    }
    redisReply *r = n ? sg_redisx_argv(x, (int)n + 1, argv, NULL) : NULL;
    if (!n) {
      used = json_object();
    } else if (r && r->type == REDIS_REPLY_ARRAY && r->elements == n) {
      used = json_object();
      for (size_t i = 0; i < n; i++) {
        const char *id = json_string_value(json_object_get(json_array_get(apps, i), "id"));
        int64_t v = 0;
        if (r->element[i]->type == REDIS_REPLY_STRING) sg_parse_i64(r->element[i]->str, 0, INT64_MAX, &v);
        if (id) json_object_set_new(used, id, json_integer(v));
      }
    }
    if (r) freeReplyObject(r);
  }
  free(argv);
  free(keys);
  sg_redisx_close(x);
  explicit_bzero(&u, sizeof u);
  return used;
}

void sg__dh_usage(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp) {
  json_t *apps = NULL;
  sg_err e = sg_store_application_list(c->cfg.store, d->m.workspace_id, &apps);
  if (e != SG_E_OK) {
    sg_resp_error(resp, req, e, NULL, NULL);
    return;
  }
  char month[40];
  month_of(sg_now_s(), month);
  json_t *used = NULL;
  bool available = c->cfg.runtime_state_dir != NULL;
  if (c->cfg.state_redis) {
    /* Redis down: "used" is null and usageAvailable false, as without a runtime. */
    used = fleet_usage(c->cfg.state_redis, apps, month);
    available = used != NULL;
  } else if (c->cfg.runtime_state_dir) {
    char path[4096], *text = NULL;
    size_t len = 0;
    snprintf(path, sizeof path, "%s/quota.json", c->cfg.runtime_state_dir);
    if (sg_read_file(path, QUOTA_FILE_MAX, &text, &len) == 0) {
      json_t *root = json_loadb(text, len, 0, NULL);
      free(text);
      const char *m = json_string_value(json_object_get(root, "month"));
      /* Counts of another month are last month's: nothing used yet this month. */
      used =
          m && strcmp(m, month) == 0 ? json_incref(json_object_get(root, "used")) : json_object();
      json_decref(root);
    } else {
      used = json_object(); /* the runtime has not counted a query yet */
    }
  }
  size_t i;
  json_t *a;
  json_array_foreach(apps, i, a) {
    const char *id = json_string_value(json_object_get(a, "id"));
    json_t *u = used ? json_object_get(used, id) : NULL;
    json_object_set_new(a, "used",
                        used ? json_integer(json_is_integer(u) ? json_integer_value(u) : 0)
                             : json_null());
  }
  json_decref(used);
  sg_resp_json(resp, 200,
               json_pack("{s:s,s:b,s:o,s:s}", "month", month, "usageAvailable", available,
                         "applications", apps, "requestId", req->request_id));
}

/* ---- selections ---------------------------------------------------------------------------- */

typedef struct {
  char item[64];
  int64_t n;
} item_count;

/* Selection counts per item: an open-addressing table (linear probing, at most half
 * full) so a day of a million events over many items stays linear. */
typedef struct {
  item_count *slots;
  size_t cap, used;
} counts;

#define MAX_DISTINCT_ITEMS ((size_t)1 << 20)

static uint64_t hash_item(const char *s) {
  uint64_t h = 1469598103934665603ULL; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return h;
}

static item_count *counts_slot(counts *t, const char *item) {
  size_t i = (size_t)hash_item(item) & (t->cap - 1);
  while (t->slots[i].item[0] && strcmp(t->slots[i].item, item) != 0) i = (i + 1) & (t->cap - 1);
  return &t->slots[i];
}

/* Adds one selection of item; returns -1 when the table cannot grow (the event is then
 * not counted per item, only per day). */
static int counts_add(counts *t, const char *item) {
  if ((t->used + 1) * 2 > t->cap) {
    size_t nc = t->cap ? t->cap * 2 : 1024;
    if (t->used >= MAX_DISTINCT_ITEMS) return -1;
    item_count *ns = calloc(nc, sizeof *ns);
    if (!ns) return -1;
    counts old = *t;
    t->slots = ns;
    t->cap = nc;
    for (size_t i = 0; i < old.cap; i++)
      if (old.slots[i].item[0]) *counts_slot(t, old.slots[i].item) = old.slots[i];
    free(old.slots);
  }
  item_count *c = counts_slot(t, item);
  if (!c->item[0]) {
    snprintf(c->item, sizeof c->item, "%s", item);
    t->used++;
  }
  c->n++;
  return 0;
}

/* Counts the events of list_id in one day's segment into *day and the item table. */
static void count_segment(const char *path, const char *list_id, int64_t *day, counts *t) {
  FILE *f = fopen(path, "r");
  if (!f) return;
  char *line = NULL;
  size_t lcap = 0, read_bytes = 0;
  ssize_t n;
  while ((n = getline(&line, &lcap, f)) > 0 && read_bytes < SEGMENT_MAX) {
    read_bytes += (size_t)n;
    /* Most lines are other lists': skip them before parsing. */
    if (!strstr(line, list_id)) continue;
    json_t *o = json_loadb(line, (size_t)n, 0, NULL);
    const char *l = json_string_value(json_object_get(o, "listId"));
    const char *it = json_string_value(json_object_get(o, "itemId"));
    if (l && it && *it && strcmp(l, list_id) == 0 && strlen(it) < 64) {
      (*day)++;
      counts_add(t, it);
    }
    json_decref(o);
  }
  free(line);
  fclose(f);
}

static int by_count(const void *a, const void *b) {
  const item_count *x = a, *y = b;
  if (x->n != y->n) return x->n > y->n ? -1 : 1;
  return strcmp(x->item, y->item);
}

void sg__dh_selections(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp) {
  json_t *list = NULL;
  sg_err e = sg_store_list_get(c->cfg.store, d->m.workspace_id, req->params[0], &list);
  json_decref(list);
  if (e != SG_E_OK) {
    sg_resp_error(resp, req, e, NULL, NULL);
    return;
  }
  int64_t days = 7;
  const char *q = sg_req_query(req, "days");
  if (q && sg_parse_i64(q, 1, 90, &days)) {
    json_t *f = NULL;
    sg_field_error(&f, "days", "must be an integer from 1 to 90");
    sg_resp_invalid_fields(resp, req, f);
    return;
  }
  json_t *per_day = json_array();
  counts table = {0};
  int64_t total = 0, now = sg_now_s();
  json_t *stored = NULL; /* a fleet: the drained events in the store */
  if (c->cfg.state_redis) {
    time_t t0 = (time_t)(now - (days - 1) * 86400);
    struct tm tm0;
    gmtime_r(&t0, &tm0);
    tm0.tm_hour = tm0.tm_min = tm0.tm_sec = 0;
    e = sg_store_selection_stats(c->cfg.store, req->params[0], (int64_t)timegm(&tm0) * 1000,
                                 TOP_ITEMS, &stored);
    if (e != SG_E_OK) {
      json_decref(per_day);
      sg_resp_error(resp, req, e, NULL, NULL);
      return;
    }
  }
  for (int64_t k = days - 1; k >= 0; k--) {
    time_t t = (time_t)(now - k * 86400);
    struct tm tm;
    gmtime_r(&t, &tm);
    char date[40];
    snprintf(date, sizeof date, "%04d-%02d-%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
    int64_t n = 0;
    if (stored) {
      n = json_integer_value(json_object_get(json_object_get(stored, "perDay"), date));
    } else if (c->cfg.runtime_state_dir) {
      char path[4200];
      snprintf(path, sizeof path, "%s/events/selections-%s.ndjson", c->cfg.runtime_state_dir, date);
      count_segment(path, req->params[0], &n, &table);
    }
    total += n;
    json_array_append_new(per_day,
                          json_pack("{s:s,s:I}", "date", date, "selections", (json_int_t)n));
  }
  /* The used slots, most selected first. */
  item_count *items = table.slots;
  size_t nitems = 0;
  for (size_t k = 0; k < table.cap; k++)
    if (items[k].item[0]) items[nitems++] = items[k];
  if (nitems) qsort(items, nitems, sizeof *items, by_count);
  json_t *top = json_array();
  json_t *stored_top = json_object_get(stored, "topItems");
  size_t ntop = stored ? json_array_size(stored_top) : nitems;
  for (size_t k = 0; k < ntop && k < TOP_ITEMS; k++) {
    json_t *item = NULL;
    json_t *st_k = json_array_get(stored_top, k);
    const char *item_id =
        stored ? json_string_value(json_object_get(st_k, "itemId")) : items[k].item;
    json_int_t count = stored ? json_integer_value(json_object_get(st_k, "selections"))
                              : (json_int_t)items[k].n;
    json_t *o = json_pack("{s:s,s:I}", "itemId", item_id, "selections", count);
    /* The item as it is now (it may have been deleted since). */
    if (sg_store_item_get(c->cfg.store, d->m.workspace_id, req->params[0], item_id, &item) ==
        SG_E_OK) {
      json_object_set(o, "value", json_object_get(item, "value"));
      json_object_set(o, "displayValue", json_object_get(item, "displayValue"));
    } else {
      json_object_set_new(o, "value", json_null());
      json_object_set_new(o, "displayValue", json_null());
    }
    json_decref(item);
    json_array_append_new(top, o);
  }
  free(items);
  json_decref(stored);
  sg_resp_json(resp, 200,
               json_pack("{s:s,s:I,s:I,s:b,s:o,s:o,s:s}", "listId", req->params[0], "days",
                         (json_int_t)days, "total", (json_int_t)total, "eventsAvailable",
                         c->cfg.runtime_state_dir != NULL || c->cfg.state_redis != NULL, "perDay",
                         per_day, "topItems", top,
                         "requestId", req->request_id));
}

/* ---- the audit log ----------------------------------------------------------------------------
 */

void sg__dh_audit(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp) {
  sg__dash_page(c, d, req, resp, "audit", "seq", sg_store_audit_page);
}
