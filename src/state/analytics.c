/*
 * Search analytics counted on the runtime (docs/DESIGN.md §9; state/state.h, "analytics").
 *
 * Request threads count into a shard of their own: a hash table of cells behind a mutex
 * that only its thread and the shipper (the loader thread, once per shipment) take, so
 * the query path never waits on another request. A cell is one counted key:
 *   'h' (list, hour)                          queries served, queries without an item
 *   'q' (list, hour, q)                       count, no-result count
 *   's' (list, hour, q or "", item, position) selections
 *   'r' (list, hour, q, raw form)             selections reported with that raw form
 * A shipment swaps every shard's table for an empty one and merges them on the loader
 * thread into one JSON document (the format of sg_analytics_collect). The cap of 10,000
 * distinct q per list and hour is the store's, across every shipment of every runtime
 * (store.h, sg_store_analytics_add: weighted Space-Saving).
 *
 * A shard holds at most SHARD_CELLS cells between shipments; a key that finds it full
 * is dropped (counted in dropped): at one shipment every 5 s that is over 50,000 new
 * distinct keys a second on one thread.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/util.h"
#include "state/internal.h"

#define SHARD_CELLS (1u << 18)

typedef struct cell {
  uint64_t hash;
  int64_t a, b; /* 'h': queries, no result; 'q': count, no result; 's', 'r': selections */
  uint32_t klen;
  char key[]; /* kind, then NUL-separated fields (hour as decimal text) */
} cell;

typedef struct {
  cell **slots;
  size_t cap, used;
} table;

typedef struct shard {
  pthread_mutex_t mu;
  table t;
  /* The 'h' cell this thread counted last, for its list and hour: nearly every query of
   * a thread counts into the same one, so it is found again without a key or a hash.
   * Valid while the table is (the shipper clears it when it takes the table). */
  cell *h_cell;
  int64_t h_hour;
  size_t h_list_len;
  char h_list[64];
  struct shard *next;
} shard;

struct sg_analytics {
  uint64_t serial;    /* tells a thread's cached shard of another (freed) instance apart */
  pthread_mutex_t mu; /* the shard list */
  shard *shards;
  _Atomic uint64_t dropped;
  /* Queries served and selections counted into shipments so far (the shipper adds them
   * when it takes a shipment's cells: nothing on the request path). */
  _Atomic uint64_t queries, selections;
};

static _Atomic uint64_t next_serial = 1;
static _Thread_local struct {
  uint64_t serial;
  shard *s;
} tl;

/* ---------------------------------------------------------------- tables --------- */

/* Eight bytes a step (a key is ~40 bytes: list id, hour, q), each step a multiply, then
 * SplitMix64's finaliser, so that every input bit reaches the low bits that pick a slot
 * (a product alone carries bits only upwards: keys differing in their last bytes would
 * share slots and lengthen the probes). Only this table's slots depend on it. */
static uint64_t hash_bytes(const char *p, size_t n) {
  uint64_t h = 1469598103934665603ULL ^ n;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    h = (h ^ w) * 0x9E3779B97F4A7C15ULL;
    h ^= h >> 29;
  }
  uint64_t w = 0;
  memcpy(&w, p + i, n - i);
  h ^= w;
  h = (h ^ h >> 30) * 0xBF58476D1CE4E5B9ULL;
  h = (h ^ h >> 27) * 0x94D049BB133111EBULL;
  return h ^ h >> 31;
}

static cell **find(table *t, const char *key, size_t klen, uint64_t h) {
  size_t i = (size_t)h & (t->cap - 1);
  for (;;) {
    cell *c = t->slots[i];
    if (!c || (c->hash == h && c->klen == klen && memcmp(c->key, key, klen) == 0))
      return &t->slots[i];
    i = (i + 1) & (t->cap - 1);
  }
}

static int grow(table *t) {
  size_t nc = t->cap ? t->cap * 2 : 256;
  cell **ns = calloc(nc, sizeof *ns);
  if (!ns) return -1;
  table old = *t;
  t->slots = ns;
  t->cap = nc;
  for (size_t i = 0; i < old.cap; i++)
    if (old.slots[i])
      *find(t, old.slots[i]->key, old.slots[i]->klen, old.slots[i]->hash) = old.slots[i];
  free(old.slots);
  return 0;
}

/* The cell of key (created at zero), or NULL when the table is at max cells or out of
 * memory. */
static cell *get(table *t, const char *key, size_t klen, size_t max) {
  uint64_t h = hash_bytes(key, klen);
  if (t->cap) {
    cell **at = find(t, key, klen, h);
    if (*at) return *at;
  }
  if (t->used >= max) return NULL;
  if ((t->used + 1) * 2 > t->cap && grow(t)) return NULL;
  cell **at = find(t, key, klen, h);
  cell *c = calloc(1, sizeof *c + klen);
  if (!c) return NULL;
  c->hash = h;
  c->klen = (uint32_t)klen;
  memcpy(c->key, key, klen);
  *at = c;
  t->used++;
  return c;
}

static void table_free(table *t) {
  for (size_t i = 0; i < t->cap; i++) free(t->slots[i]);
  free(t->slots);
  *t = (table){0};
}

/* ---------------------------------------------------------------- keys ----------- */

#define KEY_MAX (8 + 3 * SG__SELECTION_MAX_QUERY + 2 * SG__SELECTION_MAX_FIELD)

/* kind, then each field followed by a NUL. Returns the length, 0 when it does not fit. */
static size_t make_key(char *out, char kind, const char *const *f, const size_t *n, int nf) {
  size_t len = 0;
  out[len++] = kind;
  for (int i = 0; i < nf; i++) {
    if (n[i] > KEY_MAX - len - 1 || memchr(f[i], '\0', n[i])) return 0;
    memcpy(out + len, f[i], n[i]);
    len += n[i];
    out[len++] = '\0';
  }
  return len;
}

/* ---------------------------------------------------------------- counting ------- */

int sg_analytics_new(sg_analytics **out) {
  sg_analytics *a = calloc(1, sizeof *a);
  if (!a) return -1;
  a->serial = atomic_fetch_add(&next_serial, 1);
  pthread_mutex_init(&a->mu, NULL);
  *out = a;
  return 0;
}

static shard *my_shard(sg_analytics *a) {
  if (tl.serial == a->serial) return tl.s;
  shard *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  pthread_mutex_init(&s->mu, NULL);
  pthread_mutex_lock(&a->mu); /* once per thread */
  s->next = a->shards;
  a->shards = s;
  pthread_mutex_unlock(&a->mu);
  tl.serial = a->serial;
  tl.s = s;
  return s;
}

/* The hour of now_s (returned) as decimal text into out: by hand (snprintf was a third of
 * the counting's instructions per query), and again only when the hour changes. */
static int64_t hour_text(int64_t now_s, char out[24], size_t *n) {
  static _Thread_local int64_t last = INT64_MIN;
  static _Thread_local char text[24];
  static _Thread_local size_t len;
  int64_t h = now_s / 3600;
  if (h != last) {
    size_t o = 0;
    if (h < 0) text[o++] = '-';
    o += sg_udec(h < 0 ? 0 - (uint64_t)h : (uint64_t)h, text + o);
    text[o] = '\0';
    len = o;
    last = h;
  }
  memcpy(out, text, len + 1);
  *n = len;
  return h;
}

void sg_analytics_query(sg_analytics *a, const char *list_id, int64_t now_s, const char *nq,
                        size_t nlen, bool no_result) {
  if (!a) return;
  shard *s = my_shard(a);
  if (!s) return;
  char hour[24], key[KEY_MAX];
  size_t hl;
  int64_t h = hour_text(now_s, hour, &hl);
  const char *f[3] = {list_id, hour, nq};
  size_t n[3] = {strlen(list_id), hl, nlen};
  pthread_mutex_lock(&s->mu);
  cell *c = NULL;
  if (s->h_cell && s->h_hour == h && s->h_list_len == n[0] &&
      memcmp(s->h_list, list_id, n[0]) == 0) {
    c = s->h_cell;
  } else {
    size_t kh = make_key(key, 'h', f, n, 2);
    c = kh ? get(&s->t, key, kh, SHARD_CELLS) : NULL;
    if (c && n[0] <= sizeof s->h_list) {
      s->h_cell = c;
      s->h_hour = h;
      s->h_list_len = n[0];
      memcpy(s->h_list, list_id, n[0]);
    }
  }
  if (c) {
    c->a++;
    c->b += no_result;
  }
  size_t kq = make_key(key, 'q', f, n, 3);
  cell *q = c && kq ? get(&s->t, key, kq, SHARD_CELLS) : NULL;
  if (q) {
    q->a++;
    q->b += no_result;
  }
  pthread_mutex_unlock(&s->mu);
  if (!c || !q) atomic_fetch_add(&a->dropped, 1);
}

void sg_analytics_selection(sg_analytics *a, const char *list_id, int64_t now_s, const char *nq,
                            size_t nlen, const char *raw, size_t raw_len, const char *item_id,
                            int64_t position) {
  if (!a) return;
  shard *s = my_shard(a);
  if (!s) return;
  char hour[24], pos[24], key[KEY_MAX];
  size_t hl;
  hour_text(now_s, hour, &hl);
  size_t pl = (size_t)snprintf(pos, sizeof pos, "%lld", (long long)position);
  if (!nq) nlen = 0;
  const char *f[5] = {list_id, hour, nlen ? nq : "", item_id, pos};
  size_t n[5] = {strlen(list_id), hl, nlen, strlen(item_id), pl};
  bool ok = false;
  pthread_mutex_lock(&s->mu);
  size_t k = make_key(key, 's', f, n, 5);
  cell *c = k ? get(&s->t, key, k, SHARD_CELLS) : NULL;
  if (c) {
    c->a++;
    ok = true;
  }
  if (ok && nlen && raw) {
    f[3] = raw;
    n[3] = raw_len;
    k = make_key(key, 'r', f, n, 4);
    c = k ? get(&s->t, key, k, SHARD_CELLS) : NULL;
    if (c) c->a++;
    ok = c != NULL;
  }
  pthread_mutex_unlock(&s->mu);
  if (!ok) atomic_fetch_add(&a->dropped, 1);
}

void sg_analytics_totals(const sg_analytics *a, uint64_t *queries, uint64_t *selections) {
  *queries = a ? atomic_load(&((sg_analytics *)a)->queries) : 0;
  *selections = a ? atomic_load(&((sg_analytics *)a)->selections) : 0;
}

uint64_t sg_analytics_dropped(const sg_analytics *a) {
  return a ? atomic_load(&((sg_analytics *)a)->dropped) : 0;
}

/* ---------------------------------------------------------------- shipping ------- */

/* The fields of a key: up to 5, pointing into the key (each NUL-terminated). */
static int fields_of(const cell *c, const char *out[5]) {
  int n = 0;
  const char *p = c->key + 1, *end = c->key + c->klen;
  while (p < end && n < 5) {
    out[n++] = p;
    p += strlen(p) + 1;
  }
  return n;
}

static int put_row(sg_buf *b, const cell *c, bool *first) {
  const char *f[5];
  int nf = fields_of(c, f);
  int rc = sg_buf_puts(b, *first ? "[\"" : ",[\"");
  *first = false;
  char kind[2] = {c->key[0], 0};
  rc = rc || sg_buf_puts(b, kind) || sg_buf_putc(b, '"');
  for (int i = 0; i < nf; i++) {
    rc = rc || sg_buf_putc(b, ',');
    if (i == 1 || (c->key[0] == 's' && i == 4))
      rc = rc || sg_buf_puts(b, f[i]); /* hour, position: decimal */
    else
      rc = rc || sg_buf_json_str(b, f[i], strlen(f[i]));
  }
  rc = rc || sg_buf_printf(b, ",%lld", (long long)c->a);
  if (c->key[0] == 'h' || c->key[0] == 'q') rc = rc || sg_buf_printf(b, ",%lld", (long long)c->b);
  return rc || sg_buf_putc(b, ']');
}

int sg_analytics_collect(sg_analytics *a, sg_buf *out, size_t *rows) {
  *rows = 0;
  if (!a) return 0;
  table merged = {0};
  size_t dropped = 0;
  pthread_mutex_lock(&a->mu);
  shard *list = a->shards;
  pthread_mutex_unlock(&a->mu);
  for (shard *s = list; s; s = s->next) {
    pthread_mutex_lock(&s->mu);
    table t = s->t;
    s->t = (table){0};
    s->h_cell = NULL; /* freed with t below */
    pthread_mutex_unlock(&s->mu);
    for (size_t i = 0; i < t.cap; i++) {
      cell *c = t.slots[i];
      if (!c) continue;
      cell *m = get(&merged, c->key, c->klen, SIZE_MAX);
      if (!m) {
        dropped++;
        continue;
      }
      m->a += c->a;
      m->b += c->b;
    }
    table_free(&t);
  }
  if (dropped) atomic_fetch_add(&a->dropped, dropped);
  char id[40];
  sg_random_id("shp_", id, sizeof id); /* the store applies a shipment id once */
  int rc = sg_buf_printf(out, "{\"id\":\"%s\",\"rows\":[", id);
  bool first = true;
  uint64_t nq = 0, ns = 0;
  for (size_t i = 0; i < merged.cap && !rc; i++)
    if (merged.slots[i]) {
      const cell *c = merged.slots[i];
      if (c->key[0] == 'h') nq += (uint64_t)c->a;
      if (c->key[0] == 's') ns += (uint64_t)c->a;
      rc = put_row(out, c, &first);
      (*rows)++;
    }
  atomic_fetch_add(&a->queries, nq);
  atomic_fetch_add(&a->selections, ns);
  rc = rc || sg_buf_puts(out, "]}");
  table_free(&merged);
  return rc ? -1 : 0;
}

void sg_analytics_free(sg_analytics *a) {
  if (!a) return;
  for (shard *s = a->shards, *n; s; s = n) {
    n = s->next;
    table_free(&s->t);
    pthread_mutex_destroy(&s->mu);
    free(s);
  }
  pthread_mutex_destroy(&a->mu);
  free(a);
}
