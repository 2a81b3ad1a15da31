/*
 * Shared state behind one seam: what the runtime writes as it serves (selection rate
 * limits, monthly quota counters, selection dedupe, the selection events) and what the
 * control plane reads of it (usage against quota, selection counts, the event stream a
 * fleet drains into the store).
 *
 * Two backends, picked from a spec by sg_state_backend_of and nowhere else:
 *   local (a directory; state/local.c, state/local_read.c): this process only, persisted
 *       under the runtime's --state-dir;
 *   redis (a redis:// URL; state/redis.c, state/redis_read.c): the state every runtime of
 *       a fleet shares, in the Redis of --edge redis://…, so that several runtimes share
 *       limits, counters and the 24-hour dedupe window (keys: state/keys.h).
 *
 * Writers (sg_rt_state): the runtime holds one. The query path stays as cheap as before
 * whatever the backend: counting a query is one atomic increment on a slot the backend
 * hands out (sg__quota_take), and the backend reconciles the slots with its store in
 * flush, on the loader thread (every second for local, every 500 ms for Redis).
 *
 * Readers (sg_state_reader): the control plane opens one on the same spec. A reader never
 * writes what the runtime owns (a local reader creates nothing) and opens without a round
 * trip, so a page may open one per request.
 */
#ifndef SG_STATE_STATE_H
#define SG_STATE_STATE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "edge/edge.h"

/* ================================================================ backends ======== */

typedef enum { SG_STATE_LOCAL, SG_STATE_REDIS } sg_state_backend;

/* The backend a spec names: a redis:// URL is SG_STATE_REDIS, anything else a directory
 * (SG_STATE_LOCAL). -1 with errno EINVAL for an empty spec, ENOTSUP for rediss:// (the
 * hiredis built against has no TLS). Every caller that routes on a state spec (the
 * writer and reader opens, the CLI's flags, the runtime's start) asks here. */
int sg_state_backend_of(const char *spec, sg_state_backend *out);

/* ================================================================ quota =========== */

typedef struct {
  _Atomic uint64_t used; /* served queries this month */
  uint64_t flushed;      /* value last written (loader thread only) */
  char app_id[SG_EDGE_MAX_ID + 1];
} sg__quota_slot;

/* UTC calendar month of a Unix time as year*12 + (month-1). */
int sg__utc_month(int64_t unix_s);
/* Request threads: takes one unit unless used >= limit. Returns true when taken. */
bool sg__quota_take(sg__quota_slot *s, uint64_t limit);

/* ================================================================ selections ====== */

#define SG__SELECTION_MAX_BODY 4096
#define SG__SELECTION_MAX_FIELD 256
#define SG__SELECTION_MAX_QUERY 1024
#define SG__SELECTION_MAX_POSITION 1000000

/* A selection report as the runtime parsed it (runtime/selection_parse.c). */
typedef struct {
  void *root;      /* the parsed json_t (owned) */
  const char *key; /* NULL when missing or not a string */
  size_t key_len;
  char selection_id[37];                                    /* lower-case canonical UUID */
  const char *query_request_id, *list_id, *item_id, *query; /* query may be NULL */
  int64_t position;
  const char *bad_field;   /* first invalid field, NULL when every field is valid */
  const char *bad_message; /* the 400's message naming it and what it must be (a constant) */
} sg__selection;

typedef enum { SG__EV_ACCEPTED, SG__EV_DUPLICATE, SG__EV_BUSY, SG__EV_RATE_LIMITED } sg__ev_result;

/* ================================================================ analytics ======= */

/*
 * Search analytics (docs/DESIGN.md §9), counted on the runtime by state/analytics.c:
 * per list and UTC hour, queries served and those without an item, per normalised q its
 * count and no-result count, and selections per (normalised query, item, position) with
 * the raw forms reported. Request threads count into a shard of their own (a mutex only
 * that thread and the shipper take); the state's flush ships what was counted every
 * SG_ANALYTICS_SHIP_S seconds through the backend (analytics_ship), and a control
 * process's drain moves shipments into the store (sg_store_analytics_add), once per
 * shipment id.
 */
typedef struct sg_analytics sg_analytics;

#define SG_ANALYTICS_SHIP_S 5    /* seconds between shipments (at least every 10 s) */
#define SG_ANALYTICS_Q_CAP 10000 /* distinct q kept exactly per list and hour */
#define SG_ANALYTICS_SHIPMENT_MAX ((size_t)64 << 20) /* bytes of one shipment */

int sg_analytics_new(sg_analytics **out);
void sg_analytics_free(sg_analytics *a);
/* Request threads. A served query (200 or 304) of list_id at now_s: nq[0..nlen) its
 * normalised q, no_result when it answered no item. a may be NULL (analytics off). */
void sg_analytics_query(sg_analytics *a, const char *list_id, int64_t now_s, const char *nq,
                        size_t nlen, bool no_result);
/* An accepted (not duplicate) selection report: nq NULL (or nlen 0) when the report had
 * no query, or its normalised form was shorter than the list's minQueryChars; raw is
 * the query as reported. */
void sg_analytics_selection(sg_analytics *a, const char *list_id, int64_t now_s, const char *nq,
                            size_t nlen, const char *raw, size_t raw_len, const char *item_id,
                            int64_t position);
/* Keys that could not be counted (a shard full between shipments, no memory). */
uint64_t sg_analytics_dropped(const sg_analytics *a);
/* Queries served and selections counted into shipments so far (a NULL a: zeros). */
void sg_analytics_totals(const sg_analytics *a, uint64_t *queries, uint64_t *selections);
/* The shipper (one thread): takes everything counted so far and appends one shipment
 * to out: {"id":"shp_…","rows":[["h",list,hour,queries,noResult],
 * ["q",list,hour,q,count,noResult],["s",list,hour,q|"",item,position,selections],
 * ["r",list,hour,q,raw,selections]…]} with hour = Unix seconds / 3600. *rows = 0 when
 * nothing was counted. */
int sg_analytics_collect(sg_analytics *a, sg_buf *out, size_t *rows);

/* ================================================================ writer ========== */

typedef struct sg_rt_state sg_rt_state;

/* What the runtime's /readyz and metrics report of its state backend. */
typedef struct {
  bool shared;            /* a fleet backend (Redis), false for local */
  bool up;                /* reachable, as the last operations found it */
  uint64_t quota_pending; /* queries counted here, not yet in the shared counters */
} sg_rt_state_stats;

typedef struct {
  /* The quota slot of an application (created at 0). Loader thread only; the slot lives
   * until close, so snapshots hold plain pointers to it. */
  sg__quota_slot *(*quota_slot)(sg_rt_state *st, const char *app_id);
  /* One selection report, as one step (one Redis round trip): takes a token from the
   * bucket of rate_key (`selection_rate` a minute; none left: RATE_LIMITED with
   * *retry_after_s the whole seconds until the next one), then checks and sets the
   * selection id (24-hour window) and appends the event. A duplicate appends nothing, and
   * an event that cannot be recorded now (BUSY: queue full, Redis unreachable) leaves its
   * id unset so the client's retry is accepted. */
  sg__ev_result (*selection_record)(sg_rt_state *st, const sg__selection *s, const char *app_id,
                                    const char *key_id, const char *rate_key, int64_t now_ms,
                                    int *retry_after_s);
  /* Persists (local) or reconciles with the fleet (Redis) the quota counters, rolling
   * them over on a new UTC month. Loader thread, every 1 s (local) or 500 ms (shared),
   * and at shutdown. */
  int (*flush)(sg_rt_state *st, int64_t now_s);
  /* Blocks until every event accepted so far is durable (tests, shutdown). */
  void (*sync)(sg_rt_state *st);
  /* Whether the state can be used now (0, or -1 with errno). Answers from what the last
   * operations saw, without a round trip, so /readyz and metrics may call it freely. */
  int (*check)(sg_rt_state *st);
  void (*stats)(sg_rt_state *st, sg_rt_state_stats *out);
  /* Hands one analytics shipment (sg_analytics_collect) to the backend: a file of the
   * state directory (local) or an entry of the analytics stream (Redis). -1 when it
   * could not be stored now (the caller keeps it and tries again: the same id). Loader
   * thread. */
  int (*analytics_ship)(sg_rt_state *st, const char *id, const char *doc, size_t len);
  void (*close)(sg_rt_state *st);
} sg_rt_state_ops;

/* Shipments kept in memory while the backend cannot take them, at most. */
#define SG_ANALYTICS_PENDING 64

struct sg_rt_state {
  const sg_rt_state_ops *ops;
  /* Analytics (NULL: off). The generic part of state.c ships it from flush and close. */
  sg_analytics *analytics;
  int64_t analytics_last_ship;
  struct {
    char *doc;
    size_t len, rows;
    char id[40];
  } pending[SG_ANALYTICS_PENDING];
  size_t n_pending;
  /* For the metrics (read by the scraping thread): shipments the backend took, their
   * rows, shipments lost while it was away, and how many wait. */
  _Atomic uint64_t an_shipped, an_rows, an_lost;
  _Atomic size_t an_pending;
};

/* The analytics figures of the runtime's metrics (docs/OBSERVABILITY.md); all zero when
 * analytics are off. Any thread. */
typedef struct {
  bool on;
  uint64_t queries, selections; /* counted into shipments */
  uint64_t dropped_keys;        /* could not be counted */
  uint64_t shipments, rows;     /* taken by the backend */
  uint64_t shipments_lost;      /* dropped while the backend was away too long */
  uint64_t pending;             /* waiting for the backend */
} sg_rt_analytics_stats;
void sg_rt_state_analytics_stats(sg_rt_state *st, sg_rt_analytics_stats *out);

/* Turns analytics counting on (sg_rt_state_analytics then answers the aggregator). */
int sg_rt_state_analytics_on(sg_rt_state *st);
static inline sg_analytics *sg_rt_state_analytics(sg_rt_state *st) {
  return st ? st->analytics : NULL;
}
/* Ships what was counted now, whatever the interval (tests, shutdown). Loader thread or
 * the only thread. */
int sg_rt_state_analytics_ship(sg_rt_state *st);

/* Opens the state named by spec (sg_state_backend_of): a directory (the local backend;
 * created when missing) or a redis:// URL (the Redis backend; opening does not need Redis
 * to be up). selection_rate is the per-key selection reports allowed a minute. */
int sg_rt_state_open(const char *spec, uint32_t selection_rate, sg_rt_state **out);

static inline sg__quota_slot *sg_rt_state_quota_slot(sg_rt_state *st, const char *app_id) {
  return st->ops->quota_slot(st, app_id);
}
static inline sg__ev_result sg_rt_state_selection_record(sg_rt_state *st, const sg__selection *s,
                                                         const char *app_id, const char *key_id,
                                                         const char *rate_key, int64_t now_ms,
                                                         int *retry_after_s) {
  return st->ops->selection_record(st, s, app_id, key_id, rate_key, now_ms, retry_after_s);
}
/* Also ships analytics when SG_ANALYTICS_SHIP_S passed since the last shipment. */
int sg_rt_state_flush(sg_rt_state *st, int64_t now_s);
static inline void sg_rt_state_sync(sg_rt_state *st) { st->ops->sync(st); }
static inline int sg_rt_state_check(sg_rt_state *st) { return st->ops->check(st); }
static inline void sg_rt_state_stats_get(sg_rt_state *st, sg_rt_state_stats *out) {
  st->ops->stats(st, out);
}
/* Ships the last analytics, then closes. */
void sg_rt_state_close(sg_rt_state *st);

/* ================================================================ readers ========= */

/*
 * One operation per report. A report takes the list (or applications) and a time window,
 * and fills a result the caller owns; it answers 0, SG_STATE_IN_STORE when the backend
 * does not keep that data where it can be counted (a fleet's selection events are
 * drained into the relational store: the caller reads sg_store_selection_stats), or -1
 * with errno when the backend cannot be read now. The analytics a later report needs
 * (per list and UTC hour: queries, queries without a result, counts per normalised query,
 * selections per (query, item, position)) fits the same shape: one more operation taking
 * a list and an hour range and filling an sg_state_analytics the caller owns.
 */
typedef struct sg_state_reader sg_state_reader;

#define SG_STATE_IN_STORE 1
#define SG_STATE_MAX_DAYS 90    /* the longest window of sg_state_read_selections */
#define SG_STATE_TOP_ITEMS 10   /* the most top items it returns */
#define SG_STATE_ITEM_MAX 63    /* longer item ids are not counted per item */
#define SG_STATE_EVENTS_MAX 256 /* events handed out by one sg_state_events_next */

/* Selections of one list over whole UTC days. */
typedef struct {
  int days;                           /* as asked */
  int64_t per_day[SG_STATE_MAX_DAYS]; /* [0] the oldest day, [days-1] today */
  int64_t total;
  size_t ntop; /* most selected first; ties by item id */
  struct {
    char item_id[SG_STATE_ITEM_MAX + 1];
    int64_t selections;
  } top[SG_STATE_TOP_ITEMS];
} sg_state_selections;

/* One entry of the event stream a fleet backend keeps (see events_next). line is the
 * event's JSON line as the runtime wrote it (state/events.c format), or NULL for an entry
 * that carries none. Both point into memory the reader owns until its next call. */
typedef struct {
  const char *id;
  const char *line;
  size_t len;
} sg_state_event;

typedef struct {
  /* Served queries this UTC month (the month of now_s) of apps[0..n) into used[0..n),
   * 0 for an application not counted yet. */
  int (*usage)(sg_state_reader *r, int64_t now_s, const char *const *apps, size_t n, int64_t *used);
  /* Selections of list_id over the `days` UTC days (1..SG_STATE_MAX_DAYS) ending with
   * the day of now_s, and its top items. */
  int (*selections)(sg_state_reader *r, const char *list_id, int64_t now_s, int days,
                    sg_state_selections *out);
  /* The event stream of a fleet backend, read by consumer as one of the group every
   * control process shares (NULL for the local backend, whose events stay in its
   * segments): up to SG_STATE_EVENTS_MAX entries into out[0..*n), waiting up to block_ms
   * for new ones. The consumer's own unacknowledged entries come first, and every few
   * seconds entries a dead consumer left pending are claimed. 0 (*n may be 0), or -1:
   * Redis unreachable (the group could not be made), -2: the read failed (the reader
   * reconnects next time). */
  int (*events_next)(sg_state_reader *r, const char *consumer, int block_ms, sg_state_event *out,
                     size_t *n);
  /* The consumer is done with out[0..n) of the last events_next: acknowledged and
   * deleted. -1 when Redis did not answer (they are delivered again). */
  int (*events_ack)(sg_state_reader *r, const sg_state_event *ev, size_t n);
  /* The consumer could not handle the last batch: the next events_next delivers its own
   * unacknowledged entries again. */
  void (*events_again)(sg_state_reader *r);
  /* Analytics shipments waiting for the store, on both backends: up to
   * SG_STATE_SHIPMENTS_MAX into out[0..*n) (id = the entry's name, line = the shipment's
   * JSON), as events_next (local: the oldest files of <dir>/analytics; Redis: the
   * analytics stream, group "drain"). 0, or -1 / -2 as events_next. */
  int (*analytics_next)(sg_state_reader *r, const char *consumer, int block_ms, sg_state_event *out,
                        size_t *n);
  /* The consumer stored out[0..n) of the last analytics_next: deleted. */
  int (*analytics_ack)(sg_state_reader *r, const sg_state_event *ev, size_t n);
  void (*close)(sg_state_reader *r);
} sg_state_reader_ops;

struct sg_state_reader {
  const sg_state_reader_ops *ops;
  /* How long (ms) another consumer's entry stays unacknowledged before events_next and
   * analytics_next claim it (Redis measures it on its own clock, so hosts' clocks do not
   * matter); SG_STATE_CLAIM_IDLE_MS unless sg_state_reader_set_claim_idle changed it. */
  int claim_idle_ms;
};
#define SG_STATE_CLAIM_IDLE_MS 30000

/* Opens a reader of the state named by spec (sg_state_backend_of). Nothing is created or
 * connected yet: a local reader of a directory that does not exist reads as empty; a
 * Redis reader connects at its first operation (commands time out after timeout_ms). */
int sg_state_reader_open(const char *spec, int timeout_ms, sg_state_reader **out);

static inline int sg_state_read_usage(sg_state_reader *r, int64_t now_s, const char *const *apps,
                                      size_t n, int64_t *used) {
  return r->ops->usage(r, now_s, apps, n, used);
}
static inline int sg_state_read_selections(sg_state_reader *r, const char *list_id, int64_t now_s,
                                           int days, sg_state_selections *out) {
  return r->ops->selections(r, list_id, now_s, days, out);
}
/* Whether the backend keeps an event stream to drain (events_next). */
static inline bool sg_state_has_events(const sg_state_reader *r) {
  return r->ops->events_next != NULL;
}
static inline int sg_state_events_next(sg_state_reader *r, const char *consumer, int block_ms,
                                       sg_state_event *out, size_t *n) {
  return r->ops->events_next(r, consumer, block_ms, out, n);
}
static inline int sg_state_events_ack(sg_state_reader *r, const sg_state_event *ev, size_t n) {
  return r->ops->events_ack(r, ev, n);
}
static inline void sg_state_events_again(sg_state_reader *r) { r->ops->events_again(r); }
#define SG_STATE_SHIPMENTS_MAX 16
static inline int sg_state_analytics_next(sg_state_reader *r, const char *consumer, int block_ms,
                                          sg_state_event *out, size_t *n) {
  return r->ops->analytics_next(r, consumer, block_ms, out, n);
}
static inline int sg_state_analytics_ack(sg_state_reader *r, const sg_state_event *ev, size_t n) {
  return r->ops->analytics_ack(r, ev, n);
}
/* A consumer name for a stream group that no other process or call uses:
 * "<host>-<pid>-<random>" (at most 40 bytes of the host name). */
void sg_state_consumer_name(char *out, size_t n);
/* Shortens (or lengthens) the claim idle time, ms > 0 (tests). */
static inline void sg_state_reader_set_claim_idle(sg_state_reader *r, int ms) {
  if (r && ms > 0) r->claim_idle_ms = ms;
}
static inline void sg_state_reader_close(sg_state_reader *r) {
  if (r) r->ops->close(r);
}

#endif
