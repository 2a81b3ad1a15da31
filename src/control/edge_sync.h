/*
 * Keeping the edge store equal to the relational store (the edge outbox's writer).
 *
 * The store marks an edge record dirty in the transaction of every change it mirrors
 * (sg_store_edge_* in store.h). These calls rebuild a record from the store, write it
 * under the edge store's writer lock and confirm it, so the mark is cleared only after
 * the edge took the write. The control plane calls them after each change and from its
 * reconciler (every second, with backoff while the edge fails, and at start); the admin
 * CLI after each command. Safe from any thread and any process.
 */
#ifndef SG_CONTROL_EDGE_SYNC_H
#define SG_CONTROL_EDGE_SYNC_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "edge/edge.h"
#include "store/store.h"

/* Rewrites (or removes) edge record (kind, id) from the store and confirms it. Returns 0
 * or -1 (the record stays dirty; the failure is logged). */
int sg_edge_sync_record(sg_store *st, sg_edge *e, const char *kind, const char *id);
/* Rewrites every dirty record. Returns how many failed (0: the edge matches the store as
 * of the call), or -1 when the store could not be read. */
int sg_edge_sync_pending(sg_store *st, sg_edge *e);
/* Rewrites every record the store knows and removes every edge record it does not, after
 * making sure each artifact the store names is on the edge (restored from the store's
 * durable copy when it keeps one). *report gets {records: {written, removed, failed},
 * artifacts: {needed, present, restored, storeKeepsCopies, missing: [{contentHash,
 * reason}]}, revision}. Returns 0 (all written), 1 (some record writes failed; the
 * outbox retries them), or -1 when the store could not be read (*report NULL). A missing
 * artifact is reported, not a failure. Callers go through the guard (edge_guard.h), which
 * wraps this in a new epoch. */
int sg_edge_sync_rebuild(sg_store *st, sg_edge *e, json_t **report);
/* The went-back check of this process's record writes: sg_edge_sync_observe records an
 * edge revision seen (a write's, a guard's read); sg_edge_sync_went_back answers (and
 * clears) whether a write since returned a revision below one seen before it started,
 * which an edge that never goes back cannot do. */
void sg_edge_sync_observe(uint64_t rev);
bool sg_edge_sync_went_back(void);
/* The highest revision sg_edge_sync_observe recorded. */
uint64_t sg_edge_sync_seen(void);
/* The record's edgeSync member {revision, state: "pending" | "synced"} (new reference). */
json_t *sg_edge_sync_state(sg_store *st, const char *kind, const char *id);

#endif
