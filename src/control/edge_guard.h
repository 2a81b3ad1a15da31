/*
 * The edge guard: the control plane's proof, for every reader, that the edge store is not
 * behind the relational store (docs/EDGE.md, "The staleness guard").
 *
 * An edge can go back in time underneath the outbox: Redis restarted from an older
 * snapshot, a replica that was behind promoted, a flush, a restore of the edge directory.
 * The outbox only rewrites records it marks dirty, so without a guard such an edge would
 * keep serving what it held then (a list since made private, a revoked key) for good.
 *
 * Every second one tick compares the edge's stamp and revision with the store's guard row
 * (store.h, sg_store_edge_guard_*): the edge is current when its stamp carries the
 * store's epoch and a heartbeat no older than the last one the store recorded, and its
 * revision is no lower than the highest one any confirmed write returned. Then the tick
 * writes a new heartbeat (the database's clock), conditional on the stamp it checked, to
 * the edge first and the store second. Otherwise it rewrites the edge: a new epoch with
 * heartbeat 0 (readers hold what they have), the revision raised above anything a reader
 * could have seen, every record and artifact from the store, then the completed stamp.
 */
#ifndef SG_CONTROL_EDGE_GUARD_H
#define SG_CONTROL_EDGE_GUARD_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdint.h>

#include "edge/edge.h"
#include "store/store.h"

/* A rewrite that another process started and has not completed within this long is
 * taken over (its process died). */
#define SG_EDGE_GUARD_TAKEOVER_MS 8000

typedef enum {
  SG_EDGE_GUARD_CURRENT = 0,   /* checked and heartbeat written */
  SG_EDGE_GUARD_REPAIRING = 1, /* behind, or a rewrite under way (here or elsewhere) */
  SG_EDGE_GUARD_UNKNOWN = 2,   /* the store or the edge could not be read */
} sg_edge_guard_state;

/* One process's guard: what it needs between ticks. Zero-initialise. */
typedef struct {
  uint64_t own_epoch;            /* the epoch of this process's last rewrite (0: none) */
  uint64_t waiting_epoch;        /* another process's rewrite being waited for */
  int64_t waiting_since;         /* sg_mono_ms() when that wait began */
  atomic_int state;              /* sg_edge_guard_state of the last tick (readyz, metrics) */
  atomic_uint_fast64_t rewrites; /* rewrites this process completed */
  int empty_ticks;               /* consecutive ticks that found a guarded edge empty */
} sg_edge_guard_proc;

/* One tick (see above). Returns the state it leaves (also stored in p->state). */
sg_edge_guard_state sg_edge_guard_tick(sg_store *st, sg_edge *e, sg_edge_guard_proc *p);
/* Rewrites the edge now in a new epoch, whatever its state (`admin edge rebuild`).
 * *report as sg_edge_sync_rebuild gives it plus "epoch". Returns 0, 1 (some writes
 * failed: the epoch stays open, readers hold what they have, the guard finishes it), or
 * -1 (*report NULL). */
int sg_edge_guard_rewrite(sg_store *st, sg_edge *e, sg_edge_guard_proc *p, json_t **report);

#endif
