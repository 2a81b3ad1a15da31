/*
 * The local backend's reader (state/state.h): the control plane of the process, or of
 * `suggestd control --data-dir D`, reads the runtime's state directory. It creates
 * nothing there; a file the runtime has not written yet reads as nothing counted.
 *
 *   <dir>/quota.json                           usage: this month's counters (quota.c
 *                                              writes them once a second)
 *   <dir>/events/selections-YYYY-MM-DD.ndjson  selections: one UTC day's events (events.c)
 *   <dir>/analytics/<ms>-<id>.json             analytics shipments (local.c), oldest
 *                                              first by name; acknowledged = deleted
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <stdbool.h>
#include <unistd.h>

#include "common/util.h"
#include "state/internal.h"

#define QUOTA_FILE_MAX ((size_t)16 << 20)
#define SEGMENT_MAX ((size_t)256 << 20) /* bytes read of one day's selection events */
#define MAX_DISTINCT_ITEMS ((size_t)1 << 20)

typedef struct {
  sg_state_reader base;
  char *dir;
  /* the last analytics_next's files: names and contents (owned until the next call) */
  char *names[SG_STATE_SHIPMENTS_MAX];
  char *docs[SG_STATE_SHIPMENTS_MAX];
  size_t n;
} local_reader;

static int local_usage(sg_state_reader *r, int64_t now_s, const char *const *apps, size_t n,
                       int64_t *used) {
  local_reader *l = (local_reader *)r;
  for (size_t i = 0; i < n; i++) used[i] = 0;
  char path[PATH_MAX], month[40], *text = NULL;
  size_t len = 0;
  if (snprintf(path, sizeof path, "%s/quota.json", l->dir) >= (int)sizeof path) {
    errno = ENAMETOOLONG;
    return -1;
  }
  /* No file: the runtime has not counted a query yet. */
  if (sg_read_file(path, QUOTA_FILE_MAX, &text, &len)) return 0;
  json_t *root = json_loadb(text, len, 0, NULL);
  free(text);
  sg__state_month_text(now_s, month);
  const char *m = json_string_value(json_object_get(root, "month"));
  /* Counts of another month are last month's: nothing used yet this month. */
  json_t *counts = m && strcmp(m, month) == 0 ? json_object_get(root, "used") : NULL;
  for (size_t i = 0; counts && i < n; i++) {
    json_t *v = apps[i] ? json_object_get(counts, apps[i]) : NULL;
    if (json_is_integer(v)) used[i] = json_integer_value(v);
  }
  json_decref(root);
  return 0;
}

/* ---- selections ---------------------------------------------------------------------------- */

typedef struct {
  char item[SG_STATE_ITEM_MAX + 1];
  int64_t n;
} item_count;

/* Selection counts per item: an open-addressing table (linear probing, at most half
 * full) so a day of a million events over many items stays linear. */
typedef struct {
  item_count *slots;
  size_t cap, used;
} counts;

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
    if (l && it && *it && strcmp(l, list_id) == 0 && strlen(it) <= SG_STATE_ITEM_MAX) {
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

static int local_selections(sg_state_reader *r, const char *list_id, int64_t now_s, int days,
                            sg_state_selections *out) {
  local_reader *l = (local_reader *)r;
  memset(out, 0, sizeof *out);
  if (!list_id || !*list_id || days < 1 || days > SG_STATE_MAX_DAYS) {
    errno = EINVAL;
    return -1;
  }
  out->days = days;
  counts table = {0};
  for (int k = days - 1; k >= 0; k--) {
    char date[40], path[PATH_MAX];
    sg__state_day_text(now_s - (int64_t)k * 86400, date);
    int64_t n = 0;
    if (snprintf(path, sizeof path, "%s/events/selections-%s.ndjson", l->dir, date) <
        (int)sizeof path)
      count_segment(path, list_id, &n, &table);
    out->per_day[days - 1 - k] = n;
    out->total += n;
  }
  /* The used slots, most selected first. */
  item_count *items = table.slots;
  size_t nitems = 0;
  for (size_t k = 0; k < table.cap; k++)
    if (items[k].item[0]) items[nitems++] = items[k];
  if (nitems) qsort(items, nitems, sizeof *items, by_count);
  for (size_t k = 0; k < nitems && k < SG_STATE_TOP_ITEMS; k++) {
    memcpy(out->top[k].item_id, items[k].item, sizeof out->top[k].item_id);
    out->top[k].selections = items[k].n;
    out->ntop++;
  }
  free(items);
  return 0;
}

/* ---- analytics shipments ------------------------------------------------------------------- */

static void release(local_reader *l) {
  for (size_t i = 0; i < l->n; i++) {
    free(l->names[i]);
    free(l->docs[i]);
  }
  l->n = 0;
}

static int name_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A shipment's name: 13 digits, '-', an id, ".json" (temporary files of an atomic write
 * end otherwise). */
static bool shipment_name(const char *n) {
  size_t len = strlen(n);
  if (len < 20 || len > 120 || strcmp(n + len - 5, ".json") != 0 || n[13] != '-') return false;
  for (int i = 0; i < 13; i++)
    if (n[i] < '0' || n[i] > '9') return false;
  return true;
}

static int local_analytics_next(sg_state_reader *r, const char *consumer, int block_ms,
                                sg_state_event *out, size_t *n) {
  (void)consumer;
  local_reader *l = (local_reader *)r;
  release(l);
  *n = 0;
  char path[PATH_MAX];
  if (snprintf(path, sizeof path, "%s/analytics", l->dir) >= (int)sizeof path) return -1;
  DIR *d = opendir(path);
  if (!d) { /* nothing shipped yet */
    if (block_ms > 0) usleep((useconds_t)block_ms * 1000);
    return 0;
  }
  /* The oldest SG_STATE_SHIPMENTS_MAX names (a bounded selection, whatever the count). */
  char *names[SG_STATE_SHIPMENTS_MAX];
  size_t k = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!shipment_name(e->d_name)) continue;
    if (k == SG_STATE_SHIPMENTS_MAX) {
      qsort(names, k, sizeof *names, name_cmp);
      if (strcmp(e->d_name, names[k - 1]) >= 0) continue;
      free(names[--k]);
    }
    if (!(names[k] = strdup(e->d_name))) break;
    k++;
  }
  closedir(d);
  qsort(names, k, sizeof *names, name_cmp);
  for (size_t i = 0; i < k; i++) {
    char *doc = NULL;
    size_t len = 0;
    if (snprintf(path, sizeof path, "%s/analytics/%s", l->dir, names[i]) >= (int)sizeof path ||
        sg_read_file(path, SG_ANALYTICS_SHIPMENT_MAX, &doc, &len)) {
      free(names[i]);
      continue;
    }
    l->names[l->n] = names[i];
    l->docs[l->n] = doc;
    out[l->n] = (sg_state_event){.id = names[i], .line = doc, .len = len};
    l->n++;
  }
  *n = l->n;
  if (*n == 0 && block_ms > 0) usleep((useconds_t)block_ms * 1000);
  return 0;
}

static int local_analytics_ack(sg_state_reader *r, const sg_state_event *ev, size_t n) {
  local_reader *l = (local_reader *)r;
  int rc = 0;
  for (size_t i = 0; i < n; i++) {
    char path[PATH_MAX];
    if (!ev[i].id || !shipment_name(ev[i].id) ||
        snprintf(path, sizeof path, "%s/analytics/%s", l->dir, ev[i].id) >= (int)sizeof path ||
        (unlink(path) && errno != ENOENT))
      rc = -1;
  }
  return rc;
}

static void local_close(sg_state_reader *r) {
  local_reader *l = (local_reader *)r;
  release(l);
  free(l->dir);
  free(l);
}

static const sg_state_reader_ops local_reader_ops = {
    .usage = local_usage,
    .selections = local_selections,
    .analytics_next = local_analytics_next,
    .analytics_ack = local_analytics_ack,
    .close = local_close,
};

int sg__state_local_reader_open(const char *dir, sg_state_reader **out) {
  local_reader *l = calloc(1, sizeof *l);
  if (!l || !(l->dir = strdup(dir))) {
    free(l);
    return -1;
  }
  l->base.ops = &local_reader_ops;
  *out = &l->base;
  return 0;
}
