/*
 * Bounded worker pool (see workpool.h): a FIFO of jobs under one mutex, workers waiting
 * on a condition variable.
 */
#include "common/workpool.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct job {
  sg_workpool_fn fn;
  void *arg;
  struct job *next;
} job;

struct sg_workpool {
  char name[32];
  unsigned threads, queue;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  job *head, *tail;
  unsigned admitted; /* reserved places: waiting, running, or about to be pushed */
  uint64_t done, rejected;
  bool stopping, stopped;
  unsigned started;
  pthread_t tid[64];
};

static void *worker(void *arg) {
  sg_workpool *p = arg;
  pthread_mutex_lock(&p->mu);
  for (;;) {
    while (!p->head && !p->stopping) pthread_cond_wait(&p->cv, &p->mu);
    if (!p->head) break; /* stopping, nothing left to run */
    job *j = p->head;
    p->head = j->next;
    if (!p->head) p->tail = NULL;
    if (p->stopping) {
      /* Waiting jobs are cancelled, not run, once the pool stops. */
      pthread_mutex_unlock(&p->mu);
      j->fn(j->arg, false);
    } else {
      pthread_mutex_unlock(&p->mu);
      j->fn(j->arg, true);
    }
    free(j);
    pthread_mutex_lock(&p->mu);
    p->admitted--;
    p->done++;
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

sg_workpool *sg_workpool_new(const char *name, unsigned threads, unsigned queue) {
  if (threads < 1 || threads > 64) return NULL;
  sg_workpool *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  snprintf(p->name, sizeof p->name, "%s", name ? name : "pool");
  p->threads = threads;
  p->queue = queue;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv, NULL);
  for (unsigned i = 0; i < threads; i++) {
    if (pthread_create(&p->tid[i], NULL, worker, p)) {
      sg_workpool_free(p);
      return NULL;
    }
    p->started++;
  }
  return p;
}

bool sg_workpool_reserve(sg_workpool *p) {
  pthread_mutex_lock(&p->mu);
  bool ok = !p->stopping && p->admitted < p->threads + p->queue;
  if (ok)
    p->admitted++;
  else
    p->rejected++;
  pthread_mutex_unlock(&p->mu);
  return ok;
}

void sg_workpool_unreserve(sg_workpool *p) {
  pthread_mutex_lock(&p->mu);
  if (p->admitted) p->admitted--;
  pthread_mutex_unlock(&p->mu);
}

void sg_workpool_push(sg_workpool *p, sg_workpool_fn fn, void *arg) {
  job *j = malloc(sizeof *j);
  if (!j) {
    /* The place is reserved but the job cannot be queued: it is cancelled, as it would
     * be at a stop, so its client still gets an answer. */
    sg_workpool_unreserve(p);
    fn(arg, false);
    return;
  }
  j->fn = fn;
  j->arg = arg;
  j->next = NULL;
  pthread_mutex_lock(&p->mu);
  if (p->stopping) {
    /* Reserved before the stop, pushed after it: no worker may be left to take it. */
    p->admitted--;
    p->done++;
    pthread_mutex_unlock(&p->mu);
    free(j);
    fn(arg, false);
    return;
  }
  if (p->tail)
    p->tail->next = j;
  else
    p->head = j;
  p->tail = j;
  pthread_cond_signal(&p->cv);
  pthread_mutex_unlock(&p->mu);
}

void sg_workpool_stop(sg_workpool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  if (p->stopped) {
    pthread_mutex_unlock(&p->mu);
    return;
  }
  p->stopping = true;
  p->stopped = true;
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
  for (unsigned i = 0; i < p->started; i++) pthread_join(p->tid[i], NULL);
  p->started = 0;
}

void sg_workpool_free(sg_workpool *p) {
  if (!p) return;
  sg_workpool_stop(p);
  pthread_cond_destroy(&p->cv);
  pthread_mutex_destroy(&p->mu);
  free(p);
}

void sg_workpool_get_stats(sg_workpool *p, sg_workpool_stats *out) {
  pthread_mutex_lock(&p->mu);
  out->threads = p->threads;
  out->queue = p->queue;
  out->admitted = p->admitted;
  out->done = p->done;
  out->rejected = p->rejected;
  pthread_mutex_unlock(&p->mu);
}

const char *sg_workpool_name(const sg_workpool *p) { return p->name; }
