/*
 * A bounded pool of worker threads for blocking work (password hashing, artifact loads)
 * that must not run on an HTTP server's connection threads (docs/DASHBOARD.md "Worker
 * pools").
 *
 * The bound is on jobs admitted and not yet finished (running plus waiting): a caller
 * first reserves a place, and when none is left it answers the client at once (503 with
 * Retry-After) instead of queueing without limit. Reserving and pushing are separate
 * steps so the caller can prepare for the job's completion (suspend a connection)
 * between them: a pushed job may finish before push returns.
 */
#ifndef SG_COMMON_WORKPOOL_H
#define SG_COMMON_WORKPOOL_H

#include <stdbool.h>
#include <stdint.h>

typedef struct sg_workpool sg_workpool;

/* A job: run is true when it runs on a worker, false when the pool stops before a worker
 * took it (it must then still release what it holds and answer its client). */
typedef void (*sg_workpool_fn)(void *arg, bool run);

/* threads workers (1..64) and room for queue jobs waiting beyond those running. NULL
 * when out of memory or a thread cannot start. */
sg_workpool *sg_workpool_new(const char *name, unsigned threads, unsigned queue);
/* Takes one place for a job. False when threads + queue jobs are already admitted or the
 * pool is stopping (counted as a rejection). */
bool sg_workpool_reserve(sg_workpool *p);
/* Queues a job on a place taken by sg_workpool_reserve (never fails). */
void sg_workpool_push(sg_workpool *p, sg_workpool_fn fn, void *arg);
/* Gives back a reserved place that will not be used. */
void sg_workpool_unreserve(sg_workpool *p);
/* Stops taking jobs, lets the running ones finish, calls the waiting ones with run false,
 * and joins the workers. Safe on NULL and twice. */
void sg_workpool_stop(sg_workpool *p);
/* Stops (if needed) and frees. Safe on NULL. */
void sg_workpool_free(sg_workpool *p);

typedef struct {
  unsigned threads, queue; /* as configured */
  unsigned admitted;       /* jobs running or waiting now */
  uint64_t done;           /* jobs finished (run, or cancelled by a stop) */
  uint64_t rejected;       /* reservations refused */
} sg_workpool_stats;
void sg_workpool_get_stats(sg_workpool *p, sg_workpool_stats *out);
const char *sg_workpool_name(const sg_workpool *p);

#endif
