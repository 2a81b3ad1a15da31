/*
 * Inside the shared state (src/state): the parts its backends are built from. Nothing
 * outside src/state and its tests includes this.
 */
#ifndef SG_STATE_INTERNAL_H
#define SG_STATE_INTERNAL_H

#include "common/buf.h"
#include "state/state.h"

/* ================================================================ quota counters == */

typedef struct sg__quota sg__quota;

/* Opens the counters file path (JSON {"month":"YYYY-MM","used":{"app":n,…}}); counts
 * of another month than `month` are dropped. A missing file is an empty table; a NULL
 * path is a table kept in memory only (sg__quota_flush then writes nothing). */
int sg__quota_open(const char *path, int month, sg__quota **out);
/* The slot of app_id, created at 0 if new. Slots live until sg__quota_close, so
 * snapshots hold plain pointers to them. Loader thread only. */
sg__quota_slot *sg__quota_slot_for(sg__quota *q, const char *app_id);
/* The number of slots, and slot i in creation order (loader thread only). */
size_t sg__quota_count(const sg__quota *q);
sg__quota_slot *sg__quota_at(const sg__quota *q, size_t i);
/* Writes the file when a counter changed; on a new month resets every counter first.
 * Loader thread only. Returns 0 or -1. */
int sg__quota_flush(sg__quota *q, int month);
void sg__quota_close(sg__quota *q);

/* ================================================================ event segments == */

typedef struct sg__events sg__events;

/* Opens <dir> (created), reloads selection ids seen in the last 24 h from its segments
 * and starts the writer thread. */
int sg__events_open(const char *dir, sg__events **out);
/* Appends the event's line (the format of events.c, ending in a newline) to b. */
int sg__event_line(sg_buf *b, const sg__selection *s, const char *app_id, const char *key_id,
                   int64_t now_ms);
/* Dedupes on selectionId (24 h window) and queues the event for the writer thread. */
sg__ev_result sg__events_submit(sg__events *ev, const sg__selection *s, const char *app_id,
                                const char *key_id, int64_t now_ms);
/* Stops the writer after it drained the queue and fsync'd. */
void sg__events_close(sg__events *ev);
/* Blocks until every event queued so far is written and fsync'd (tests, shutdown). */
void sg__events_sync(sg__events *ev);

/* ================================================================ backends ======== */

/* The local writer (local.c): dir is created when missing. */
int sg__rt_state_local_open(const char *dir, uint32_t selection_rate, sg_rt_state **out);
/* The Redis writer (redis.c). Opening does not need Redis to be up: the backend connects
 * (and reconnects) when it needs to. Fails only on a bad URL or no memory. */
int sg__rt_state_redis_open(const char *url, uint32_t selection_rate, sg_rt_state **out);
/* The readers (local_read.c, redis_read.c), as sg_state_reader_open describes them. */
int sg__state_local_reader_open(const char *dir, sg_state_reader **out);
int sg__state_redis_reader_open(const char *url, int timeout_ms, sg_state_reader **out);

/* "YYYY-MM" of the UTC month of unix_s, and "YYYY-MM-DD" of its UTC day. */
void sg__state_month_text(int64_t unix_s, char out[40]);
void sg__state_day_text(int64_t unix_s, char out[40]);

#endif
