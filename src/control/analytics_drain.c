/*
 * The analytics drain: moves the runtimes' analytics shipments (state/state.h,
 * sg_state_analytics_next: files of the runtime's state directory, or a fleet's Redis
 * stream) into the store, and applies the retention (--analytics-retention-days).
 *
 * Every control process runs one, on both state backends. A shipment is deleted from the
 * state only after the store committed it, and the store applies each shipment id once
 * (sg_store_analytics_add), so a shipment delivered again after a crash counts once. A
 * shipment that is not valid JSON of the expected shape is logged and deleted: kept, it
 * would be retried forever.
 */
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "control/internal.h"
#include "state/state.h"

/* How long one read waits for entries: also how long a stop waits for this thread. */
#define BLOCK_MS 100
#define RETENTION_EVERY_S 60

struct sg__analytics_drain {
  sg_store *store;
  sg_state_reader *state;
  uint32_t retention_days;
  char consumer[96];
  atomic_bool stop;
  pthread_t thread;
  /* For the metrics (sg__analytics_drain_stats). */
  _Atomic uint64_t stored, rows, invalid, failures;
};

static const char *str_at(json_t *a, size_t i) { return json_string_value(json_array_get(a, i)); }
static bool int_at(json_t *a, size_t i, int64_t *out) {
  json_t *v = json_array_get(a, i);
  if (!json_is_integer(v) || json_integer_value(v) < 0) return false;
  *out = json_integer_value(v);
  return true;
}

int sg__analytics_parse(const char *doc, size_t len, json_t **json, const char **id,
                        sg_analytics_row **rows, size_t *n) {
  *json = NULL;
  *rows = NULL;
  *n = 0;
  json_t *o = json_loadb(doc, len, JSON_REJECT_DUPLICATES, NULL);
  json_t *arr = json_object_get(o, "rows");
  *id = json_string_value(json_object_get(o, "id"));
  if (!json_is_object(o) || !json_is_array(arr) || !*id || !**id || strlen(*id) > 64) {
    json_decref(o);
    return -1;
  }
  *json = o;
  size_t m = json_array_size(arr);
  sg_analytics_row *r = m ? calloc(m, sizeof *r) : NULL;
  if (m && !r) return -1;
  *rows = r;
  for (size_t i = 0; i < m; i++) {
    json_t *a = json_array_get(arr, i);
    const char *kind = str_at(a, 0);
    sg_analytics_row *x = &r[i];
    if (!json_is_array(a) || !kind || strlen(kind) != 1) return -1;
    x->kind = kind[0];
    x->list_id = str_at(a, 1);
    bool ok = x->list_id && int_at(a, 2, &x->hour);
    switch (x->kind) {
    case 'h': ok = ok && int_at(a, 3, &x->count) && int_at(a, 4, &x->no_result); break;
    case 'q':
      ok = ok && (x->q = str_at(a, 3)) && int_at(a, 4, &x->count) && int_at(a, 5, &x->no_result);
      break;
    case 's':
      ok = ok && (x->q = str_at(a, 3)) && (x->item_id = str_at(a, 4)) &&
           int_at(a, 5, &x->position) && int_at(a, 6, &x->count);
      break;
    case 'r':
      ok = ok && (x->q = str_at(a, 3)) && (x->raw = str_at(a, 4)) && int_at(a, 5, &x->count);
      break;
    default: ok = false;
    }
    if (!ok) return -1;
  }
  *n = m;
  return 0;
}

/* Stores one shipment. 0 stored (or dropped as invalid: acknowledge), -1 the store
 * failed (keep it). */
static int store_one(sg__analytics_drain *d, const sg_state_event *e) {
  json_t *json = NULL;
  sg_analytics_row *rows = NULL;
  size_t n = 0;
  const char *id = NULL;
  int rc = 0;
  if (!e->line || sg__analytics_parse(e->line, e->len, &json, &id, &rows, &n)) {
    fprintf(stderr, "{\"error\":\"analytics drain: %s is not a shipment; dropped\"}\n", e->id);
    atomic_fetch_add(&d->invalid, 1);
  } else {
    sg_err err = sg_store_analytics_add(d->store, id, sg_now_s() / 3600, rows, n);
    if (err == SG_E_INVALID_REQUEST) {
      fprintf(stderr, "{\"error\":\"analytics drain: %s holds an invalid row; dropped\"}\n", e->id);
      atomic_fetch_add(&d->invalid, 1);
    } else if (err != SG_E_OK) {
      fprintf(stderr, "{\"error\":\"analytics drain: store failed (%s); retrying\"}\n",
              sg_err_code(err));
      atomic_fetch_add(&d->failures, 1);
      rc = -1;
    } else {
      atomic_fetch_add(&d->stored, 1);
      atomic_fetch_add(&d->rows, n);
    }
  }
  free(rows);
  json_decref(json);
  return rc;
}

static void pause_ms(sg__analytics_drain *d, int ms) {
  for (int t = 0; t < ms && !atomic_load(&d->stop); t += 50) usleep(50 * 1000);
}

int sg__analytics_expire(sg_store *store, uint32_t days, int64_t now_s) {
  /* Today and the days - 1 before it are kept. */
  int64_t first_day = now_s / 86400 - (int64_t)(days ? days : 90) + 1;
  return sg_store_analytics_expire(store, first_day * 24, first_day * 86400 * 1000) == SG_E_OK ? 0
                                                                                               : -1;
}

static void *drain_main(void *arg) {
  sg__analytics_drain *d = arg;
  sg_state_event ev[SG_STATE_SHIPMENTS_MAX];
  int64_t last_expire = 0;
  while (!atomic_load(&d->stop)) {
    int64_t now = sg_mono_ms();
    if (last_expire == 0 || now - last_expire >= RETENTION_EVERY_S * 1000) {
      last_expire = now;
      sg__analytics_expire(d->store, d->retention_days, sg_now_s());
    }
    size_t n = 0;
    int rc = sg_state_analytics_next(d->state, d->consumer, BLOCK_MS, ev, &n);
    if (rc < 0) {
      pause_ms(d, 500);
      continue;
    }
    size_t done = 0;
    while (done < n && store_one(d, &ev[done]) == 0) done++;
    if (done) sg_state_analytics_ack(d->state, ev, done);
    if (done < n) pause_ms(d, 1000); /* the store failed: the rest comes again */
  }
  return NULL;
}

int sg__analytics_drain_start(sg_store *store, const char *spec, uint32_t retention_days,
                              sg__analytics_drain **out) {
  sg__analytics_drain *d = calloc(1, sizeof *d);
  if (!d) return -1;
  d->store = store;
  d->retention_days = retention_days ? retention_days : 90;
  if (sg_state_reader_open(spec, BLOCK_MS + 2000, &d->state)) {
    free(d);
    return -1;
  }
  sg_state_consumer_name(d->consumer, sizeof d->consumer);
  if (pthread_create(&d->thread, NULL, drain_main, d)) {
    sg_state_reader_close(d->state);
    free(d);
    return -1;
  }
  *out = d;
  return 0;
}

void sg__analytics_drain_stop(sg__analytics_drain *d) {
  if (!d) return;
  atomic_store(&d->stop, true);
  pthread_join(d->thread, NULL);
  sg_state_reader_close(d->state);
  free(d);
}

void sg__analytics_drain_stats(const sg__analytics_drain *d, sg__analytics_drain_counts *out) {
  *out = (sg__analytics_drain_counts){0};
  if (!d) return;
  sg__analytics_drain *m = (sg__analytics_drain *)d;
  out->stored = atomic_load(&m->stored);
  out->rows = atomic_load(&m->rows);
  out->invalid = atomic_load(&m->invalid);
  out->failures = atomic_load(&m->failures);
}
