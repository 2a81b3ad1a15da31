/*
 * The selection drain: moves the selection events that a fleet's runtimes append to the
 * shared state's event stream (state/state.h: sg_state_events_next; in Redis,
 * state/redis_read.c) into the store, where the dashboard reads them.
 *
 * Every control process with a Redis edge runs one, as a consumer of the stream (its own
 * consumer name), so several processes share the work and none is required. An entry is
 * acknowledged only after the store committed it; storing is idempotent
 * (sg_store_selections_add), so an entry delivered again — the process died between
 * commit and acknowledgement — costs nothing. Entries left pending by a dead process are
 * claimed by the others once idle for SG_STATE_CLAIM_IDLE_MS (Redis measures the idle time
 * on its own clock, so the hosts' clocks do not matter; tests shorten it with
 * sg__drain_start_claiming), and the claim scan goes on where it stopped, so a long
 * pending list is walked to its end. An entry that is not a valid event is logged, acknowledged and
 * deleted: kept, it would be retried forever.
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
#define MAX_EVENT_BYTES 8192

struct sg__drain {
  sg_store *store;
  sg_state_reader *state; /* the fleet's state: its event stream */
  char consumer[96];
  int claim_idle_ms, claim_every_ms;
  char claim_cursor[48]; /* XAUTOCLAIM's next start ("0-0": from the beginning) */
  atomic_bool stop;
  pthread_t thread;
};

int sg__drain_event_parse(const char *line, size_t len, json_t **json, sg_selection_event *ev) {
  *json = NULL;
  memset(ev, 0, sizeof *ev);
  if (len > MAX_EVENT_BYTES) return -1;
  json_t *o = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
  if (!json_is_object(o)) {
    json_decref(o);
    return -1;
  }
  *json = o;
  const char **str[] = {&ev->selection_id, &ev->query_request_id, &ev->list_id,
                        &ev->item_id,      &ev->application_id,   &ev->key_id};
  static const char *const names[] = {"selectionId", "queryRequestId", "listId",
                                      "itemId",      "applicationId",  "keyId"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (!(*str[i] = json_string_value(json_object_get(o, names[i]))) || !**str[i]) return -1;
  json_t *q = json_object_get(o, "query"), *ts = json_object_get(o, "tsMs"),
         *pos = json_object_get(o, "position");
  if (!json_is_integer(ts) || !json_is_integer(pos) ||
      (q && !json_is_null(q) && !json_is_string(q)))
    return -1;
  ev->query = json_string_value(q);
  ev->ts_ms = json_integer_value(ts);
  ev->position = json_integer_value(pos);
  return ev->ts_ms > 0 ? 0 : -1;
}

/* Stores and acknowledges the entries of one read. -1 when Redis failed (reconnect), -2
 * when the store failed (the entries stay pending; read them again later). */
static int handle(sg__drain *d, const sg_state_event *entries, size_t n) {
  sg_selection_event ev[SG_STATE_EVENTS_MAX] = {0};
  json_t *json[SG_STATE_EVENTS_MAX];
  size_t nev = 0;
  for (size_t i = 0; i < n; i++) {
    json[nev] = NULL;
    if (entries[i].line &&
        sg__drain_event_parse(entries[i].line, entries[i].len, &json[nev], &ev[nev]) == 0) {
      nev++;
    } else {
      fprintf(stderr,
              "{\"error\":\"selection drain: entry %s is not a selection event; dropped\"}\n",
              entries[i].id);
      json_decref(json[nev]);
    }
  }
  sg_err rc = sg_store_selections_add(d->store, ev, nev);
  for (size_t i = 0; i < nev; i++) json_decref(json[i]);
  if (rc != SG_E_OK) {
    fprintf(stderr, "{\"error\":\"selection drain: store failed (%s); retrying\"}\n",
            sg_err_code(rc));
    return -2;
  }
  return sg_state_events_ack(d->state, entries, n) ? -1 : 0;
}

static void pause_ms(sg__drain *d, int ms) {
  for (int t = 0; t < ms && !atomic_load(&d->stop); t += 50) usleep(50 * 1000);
}

static void *drain_main(void *arg) {
  sg__drain *d = arg;
  sg_state_event entries[SG_STATE_EVENTS_MAX];
  while (!atomic_load(&d->stop)) {
    size_t n = 0;
    int rc = sg_state_events_next(d->state, d->consumer, BLOCK_MS, entries, &n);
    if (rc == -1) { /* the group could not be made: Redis unreachable */
      pause_ms(d, 500);
      continue;
    }
    if (rc == -2) { /* the read failed: the reader reconnects */
      pause_ms(d, 200);
      continue;
    }
    if (n == 0) continue;
    rc = handle(d, entries, n);
    if (rc == -2) { /* the store failed: the entries stay pending; read them again */
      sg_state_events_again(d->state);
      pause_ms(d, 1000);
    } else if (rc == -1) {
      pause_ms(d, 200);
    }
  }
  return NULL;
}

int sg__drain_start(sg_store *store, const char *spec, sg__drain **out) {
  return sg__drain_start_claiming(store, spec, SG_STATE_CLAIM_IDLE_MS, out);
}

int sg__drain_start_claiming(sg_store *store, const char *spec, int claim_idle_ms,
                             sg__drain **out) {
  if (claim_idle_ms <= 0) return -1;
  sg__drain *d = calloc(1, sizeof *d);
  if (!d) return -1;
  d->store = store;
  if (sg_state_reader_open(spec, BLOCK_MS + 2000, &d->state)) {
    free(d);
    return -1;
  }
  sg_state_reader_set_claim_idle(d->state, claim_idle_ms);
  if (!sg_state_has_events(d->state)) { /* the events stay in the state: nothing to drain */
    sg_state_reader_close(d->state);
    free(d);
    *out = NULL;
    return 0;
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

void sg__drain_stop(sg__drain *d) {
  if (!d) return;
  atomic_store(&d->stop, true);
  pthread_join(d->thread, NULL);
  sg_state_reader_close(d->state);
  free(d);
}
