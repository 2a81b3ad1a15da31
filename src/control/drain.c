/*
 * The selection drain: moves the selection events that a fleet's runtimes append to the
 * Redis stream (common/statekeys.h) into the store, where the dashboard reads them.
 *
 * Every control process with a Redis edge runs one, as a consumer of the stream's group
 * "drain" (its own consumer name), so several processes share the work and none is
 * required. An entry is acknowledged (XACK) and deleted (XDEL) only after the store
 * committed it; storing is idempotent (sg_store_selections_add), so an entry delivered
 * again — the process died between commit and XACK — costs nothing. Entries left
 * pending by a dead process are claimed (XAUTOCLAIM) once idle for CLAIM_IDLE_MS (Redis
 * measures the idle time on its own clock, so the hosts' clocks do not matter), looked for
 * every CLAIM_EVERY_MS; the scan's cursor is kept between calls, so a long pending list is
 * walked to its end rather than its first BATCH entries over and over.
 * An entry that is not a valid event is logged, acknowledged and deleted: kept, it would
 * be retried forever.
 */
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/redisx.h"
#include "common/statekeys.h"
#include "common/util.h"
#include "control/internal.h"

#define BATCH 256
#define BLOCK_MS 500
#define CLAIM_IDLE_MS 30000
#define CLAIM_EVERY_MS 5000
#define MAX_EVENT_BYTES 8192

struct sg__drain {
  sg_store *store;
  sg_redisx *x;
  char stream[120]; /* "<prefix>:state:selections" */
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
  if (!json_is_integer(ts) || !json_is_integer(pos) || (q && !json_is_null(q) && !json_is_string(q)))
    return -1;
  ev->query = json_string_value(q);
  ev->ts_ms = json_integer_value(ts);
  ev->position = json_integer_value(pos);
  return ev->ts_ms > 0 ? 0 : -1;
}

/* The event of one stream entry ([id, [field, value, …]]) into *ev, pointing into *json
 * (kept alive by the caller). -1 when it is not a valid event. */
static int parse_entry(const redisReply *entry, json_t **json, sg_selection_event *ev) {
  *json = NULL;
  if (entry->type != REDIS_REPLY_ARRAY || entry->elements != 2 ||
      entry->element[1]->type != REDIS_REPLY_ARRAY)
    return -1;
  const redisReply *fields = entry->element[1];
  const redisReply *line = NULL;
  for (size_t i = 0; i + 1 < fields->elements; i += 2)
    if (fields->element[i]->type == REDIS_REPLY_STRING && strcmp(fields->element[i]->str, "e") == 0)
      line = fields->element[i + 1];
  if (!line || line->type != REDIS_REPLY_STRING) return -1;
  return sg__drain_event_parse(line->str, line->len, json, ev);
}

/* Sends XACK then XDEL for ids. 0 when both were answered. */
static int ack(sg__drain *d, const char **ids, size_t n) {
  if (n == 0) return 0;
  const char *argv[3 + BATCH];
  argv[0] = "XACK";
  argv[1] = d->stream;
  argv[2] = SG_STATE_STREAM_GROUP;
  for (size_t i = 0; i < n; i++) argv[3 + i] = ids[i];
  redisReply *r = sg_redisx_argv(d->x, (int)(3 + n), argv, NULL);
  if (!r) return -1;
  freeReplyObject(r);
  /* Acknowledged and stored: the entry has no further use (the stream is never trimmed
   * otherwise). Left behind by a failure here, it is only memory. */
  argv[1] = "XDEL";
  argv[2] = d->stream;
  r = sg_redisx_argv(d->x, (int)(2 + n), argv + 1, NULL);
  if (r) freeReplyObject(r);
  return 0;
}

/* Stores and acknowledges the entries of one read. -1 when Redis failed (reconnect), -2
 * when the store failed (the entries stay pending; read them again later). */
static int handle(sg__drain *d, const redisReply *entries) {
  if (entries->type != REDIS_REPLY_ARRAY) return 0;
  size_t n = entries->elements < BATCH ? entries->elements : BATCH;
  sg_selection_event ev[BATCH] = {0};
  json_t *json[BATCH];
  const char *ids[BATCH];
  size_t nev = 0, nids = 0;
  for (size_t i = 0; i < n; i++) {
    const redisReply *e = entries->element[i];
    if (e->type != REDIS_REPLY_ARRAY || e->elements < 1 || e->element[0]->type != REDIS_REPLY_STRING)
      continue;
    ids[nids++] = e->element[0]->str;
    json[nev] = NULL;
    if (parse_entry(e, &json[nev], &ev[nev]) == 0) {
      nev++;
    } else {
      fprintf(stderr, "{\"error\":\"selection drain: entry %s is not a selection event; dropped\"}\n",
              e->element[0]->str);
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
  return ack(d, ids, nids) ? -1 : 0;
}

static void pause_ms(sg__drain *d, int ms) {
  for (int t = 0; t < ms && !atomic_load(&d->stop); t += 50) usleep(50 * 1000);
}

static void *drain_main(void *arg) {
  sg__drain *d = arg;
  bool fresh = true;       /* (re)connected: make sure the group exists */
  bool own_pending = true; /* read our own unacknowledged entries first ("0") */
  int64_t last_claim = 0;
  bool failing = false;
  while (!atomic_load(&d->stop)) {
    redisReply *r;
    if (fresh) {
      r = sg_redisx_cmd(d->x, "XGROUP CREATE %s %s 0 MKSTREAM", d->stream, SG_STATE_STREAM_GROUP);
      /* BUSYGROUP: another process (or an earlier run) made it. */
      bool ok = r && (r->type != REDIS_REPLY_ERROR || strncmp(r->str, "BUSYGROUP", 9) == 0);
      if (r) freeReplyObject(r);
      if (!ok) {
        if (!failing) fprintf(stderr, "{\"error\":\"selection drain: Redis unreachable\"}\n");
        failing = true;
        pause_ms(d, 500);
        continue;
      }
      failing = fresh = false;
      own_pending = true;
    }
    int64_t now = sg_mono_ms();
    const redisReply *entries = NULL;
    if (now - last_claim >= d->claim_every_ms) {
      last_claim = now;
      r = sg_redisx_cmd(d->x, "XAUTOCLAIM %s %s %s %d %s COUNT %d", d->stream,
                        SG_STATE_STREAM_GROUP, d->consumer, d->claim_idle_ms, d->claim_cursor,
                        BATCH);
      /* [next cursor, [entries], [deleted ids]] */
      if (r && r->type == REDIS_REPLY_ARRAY && r->elements >= 2) {
        entries = r->element[1];
        const redisReply *next = r->element[0];
        bool more = next->type == REDIS_REPLY_STRING && next->len < sizeof d->claim_cursor &&
                    strcmp(next->str, "0-0") != 0;
        snprintf(d->claim_cursor, sizeof d->claim_cursor, "%s", more ? next->str : "0-0");
        if (more) last_claim = now - d->claim_every_ms; /* the rest of the scan at once */
      }
    } else {
      r = sg_redisx_cmd(d->x, "XREADGROUP GROUP %s %s COUNT %d BLOCK %d STREAMS %s %s",
                        SG_STATE_STREAM_GROUP, d->consumer, BATCH, BLOCK_MS, d->stream,
                        own_pending ? "0" : ">");
      /* [[stream, [entries]]], or nil when nothing came within BLOCK_MS. */
      if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 1 &&
          r->element[0]->type == REDIS_REPLY_ARRAY && r->element[0]->elements == 2)
        entries = r->element[0]->element[1];
      if (own_pending && r && (!entries || entries->elements == 0)) own_pending = false;
    }
    int rc = -1;
    if (r && r->type != REDIS_REPLY_ERROR) rc = entries ? handle(d, entries) : 0;
    if (r && r->type == REDIS_REPLY_ERROR) /* NOGROUP: Redis lost its data; make it again */
      fprintf(stderr, "{\"error\":\"selection drain: %s\"}\n", r->str);
    if (r) freeReplyObject(r);
    if (rc == -2) {
      own_pending = true;
      pause_ms(d, 1000);
    } else if (rc == -1) {
      fresh = true;
      pause_ms(d, 200);
    }
  }
  return NULL;
}

int sg__drain_start(sg_store *store, const char *url, sg__drain **out) {
  return sg__drain_start_claiming(store, url, CLAIM_IDLE_MS, out);
}

int sg__drain_start_claiming(sg_store *store, const char *url, int claim_idle_ms,
                             sg__drain **out) {
  if (claim_idle_ms <= 0) return -1;
  sg__drain *d = calloc(1, sizeof *d);
  if (!d) return -1;
  d->store = store;
  d->claim_idle_ms = claim_idle_ms;
  /* Looked for six times per idle time, at most every CLAIM_EVERY_MS, at least every 100 ms. */
  d->claim_every_ms = claim_idle_ms / 6 < CLAIM_EVERY_MS ? claim_idle_ms / 6 : CLAIM_EVERY_MS;
  if (d->claim_every_ms < 100) d->claim_every_ms = 100;
  snprintf(d->claim_cursor, sizeof d->claim_cursor, "0-0");
  sg_redisx_url u;
  char err[256];
  if (sg_redisx_parse(url, &u, err, sizeof err) ||
      sg_redisx_open(&u, BLOCK_MS + 2000, true, &d->x)) {
    explicit_bzero(&u, sizeof u);
    free(d);
    return -1;
  }
  snprintf(d->stream, sizeof d->stream, "%s:%s", u.prefix, SG_STATE_KEY_STREAM);
  explicit_bzero(&u, sizeof u);
  char host[64] = "host";
  gethostname(host, sizeof host - 1);
  char rnd[24];
  sg_random_id("", rnd, sizeof rnd);
  snprintf(d->consumer, sizeof d->consumer, "%.40s-%ld-%s", host, (long)getpid(), rnd);
  if (pthread_create(&d->thread, NULL, drain_main, d)) {
    sg_redisx_close(d->x);
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
  sg_redisx_close(d->x);
  free(d);
}
