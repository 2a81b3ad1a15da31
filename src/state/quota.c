/*
 * Monthly query quotas: one counter per application.
 *
 * Request threads bump an atomic counter through the slot pointer their snapshot holds
 * (no lock). The loader thread owns the table: it creates slots, and once a second
 * writes the counters that changed to <state-dir>/quota.json (atomically), so they
 * survive a restart. A month is a UTC calendar month; counts of a past month are
 * dropped on load and reset when the month turns.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/util.h"
#include "state/internal.h"

struct sg__quota {
  char *path;
  int month;
  bool dirty;
  sg__quota_slot **slots; /* in creation order */
  size_t n, cap;
  sg__quota_slot **index; /* open addressing on the app id; index_cap = 2 * cap */
  size_t index_cap;
};

static size_t hash_id(const char *s) {
  uint64_t h = 1469598103934665603ULL; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return (size_t)h;
}

static sg__quota_slot **index_find(sg__quota *q, const char *app_id) {
  size_t i = hash_id(app_id) & (q->index_cap - 1);
  while (q->index[i] && strcmp(q->index[i]->app_id, app_id) != 0) i = (i + 1) & (q->index_cap - 1);
  return &q->index[i];
}

int sg__utc_month(int64_t unix_s) {
  time_t t = (time_t)unix_s;
  struct tm tm;
  gmtime_r(&t, &tm);
  return (tm.tm_year + 1900) * 12 + tm.tm_mon;
}

static void month_str(int month, char out[16]) {
  snprintf(out, 16, "%04d-%02d", month / 12, month % 12 + 1);
}

int sg__quota_open(const char *path, int month, sg__quota **out) {
  sg__quota *q = calloc(1, sizeof *q);
  if (!q || (path && !(q->path = strdup(path)))) {
    free(q);
    return -1;
  }
  q->month = month;
  char *text = NULL;
  size_t len = 0;
  if (path && sg_read_file(path, 1 << 24, &text, &len) == 0) {
    json_t *root = json_loadb(text, len, 0, NULL);
    free(text);
    char want[16];
    month_str(month, want);
    json_t *m = json_object_get(root, "month");
    json_t *used = json_object_get(root, "used");
    if (json_is_string(m) && strcmp(json_string_value(m), want) == 0 && json_is_object(used)) {
      const char *app;
      json_t *v;
      json_object_foreach(used, app, v) {
        if (!json_is_integer(v) || json_integer_value(v) < 0 || !sg_edge_id_valid(app)) continue;
        sg__quota_slot *s = sg__quota_slot_for(q, app);
        if (!s) break;
        atomic_store(&s->used, (uint64_t)json_integer_value(v));
        s->flushed = (uint64_t)json_integer_value(v);
      }
    }
    json_decref(root);
  }
  *out = q;
  return 0;
}

sg__quota_slot *sg__quota_slot_for(sg__quota *q, const char *app_id) {
  if (q->index_cap) {
    sg__quota_slot **at = index_find(q, app_id);
    if (*at) return *at;
  }
  if (strlen(app_id) > SG_EDGE_MAX_ID) return NULL;
  if (q->n == q->cap) {
    size_t nc = q->cap ? q->cap * 2 : 64;
    sg__quota_slot **ns = realloc(q->slots, nc * sizeof *ns);
    sg__quota_slot **ni = calloc(2 * nc, sizeof *ni);
    if (!ns || !ni) {
      if (ns) q->slots = ns;
      free(ni);
      return NULL;
    }
    q->slots = ns;
    q->cap = nc;
    free(q->index);
    q->index = ni;
    q->index_cap = 2 * nc;
    for (size_t i = 0; i < q->n; i++) *index_find(q, q->slots[i]->app_id) = q->slots[i];
  }
  sg__quota_slot *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  strcpy(s->app_id, app_id);
  q->slots[q->n++] = s;
  *index_find(q, app_id) = s;
  return s;
}

bool sg__quota_take(sg__quota_slot *s, uint64_t limit) {
  uint64_t prev = atomic_fetch_add_explicit(&s->used, 1, memory_order_relaxed);
  if (prev < limit) return true;
  atomic_fetch_sub_explicit(&s->used, 1, memory_order_relaxed);
  return false;
}

size_t sg__quota_count(const sg__quota *q) { return q->n; }

sg__quota_slot *sg__quota_at(const sg__quota *q, size_t i) { return i < q->n ? q->slots[i] : NULL; }

int sg__quota_flush(sg__quota *q, int month) {
  if (month != q->month) {
    for (size_t i = 0; i < q->n; i++) atomic_store(&q->slots[i]->used, 0);
    q->month = month;
    q->dirty = true;
  }
  if (!q->path) return 0; /* a table without a file (the Redis backend counts for it) */
  bool changed = q->dirty;
  for (size_t i = 0; i < q->n && !changed; i++)
    changed =
        atomic_load_explicit(&q->slots[i]->used, memory_order_relaxed) != q->slots[i]->flushed;
  if (!changed) return 0;
  sg_buf b;
  sg_buf_init(&b, 0);
  char ms[16];
  month_str(q->month, ms);
  int rc = sg_buf_printf(&b, "{\"month\":\"%s\",\"used\":{", ms);
  uint64_t *vals = malloc((q->n ? q->n : 1) * sizeof *vals);
  if (!vals) rc = -1;
  for (size_t i = 0; i < q->n && rc == 0; i++) {
    vals[i] = atomic_load_explicit(&q->slots[i]->used, memory_order_relaxed);
    rc = sg_buf_printf(&b, "%s\"%s\":%llu", i ? "," : "", q->slots[i]->app_id,
                       (unsigned long long)vals[i]);
  }
  if (rc == 0) rc = sg_buf_puts(&b, "}}\n");
  if (rc == 0) rc = sg_write_file_atomic(q->path, b.data, b.len);
  if (rc == 0) {
    for (size_t i = 0; i < q->n; i++) q->slots[i]->flushed = vals[i];
    q->dirty = false;
  }
  free(vals);
  sg_buf_free(&b);
  return rc;
}

void sg__quota_close(sg__quota *q) {
  if (!q) return;
  for (size_t i = 0; i < q->n; i++) free(q->slots[i]);
  free(q->slots);
  free(q->index);
  free(q->path);
  free(q);
}
