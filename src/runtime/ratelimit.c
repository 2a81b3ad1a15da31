/*
 * Per-key rate limit of selection reports: a one-minute fixed window per key digest.
 *
 * The table is bounded (SLOTS entries in STRIPES lock stripes, each stripe a small
 * open-addressed bucket); when a bucket is full the entry with the oldest window is
 * replaced, so memory never grows with the number of keys. The selection route is not
 * the query hot path, and a stripe lock is held for a few instructions only.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt.h"

#define STRIPES 64
#define WAYS 64 /* entries per stripe */
#define WINDOW_MS 60000

typedef struct {
  uint64_t tag; /* first 8 bytes of the digest; 0 = empty */
  int64_t window; /* window index (now_ms / WINDOW_MS) */
  unsigned count;
} entry;

typedef struct {
  pthread_mutex_t mu;
  entry e[WAYS];
} stripe;

struct sg__ratelimit {
  unsigned per_minute;
  stripe s[STRIPES];
};

sg__ratelimit *sg__ratelimit_new(unsigned per_minute) {
  sg__ratelimit *rl = calloc(1, sizeof *rl);
  if (!rl) return NULL;
  rl->per_minute = per_minute ? per_minute : 1;
  for (int i = 0; i < STRIPES; i++) pthread_mutex_init(&rl->s[i].mu, NULL);
  return rl;
}

void sg__ratelimit_free(sg__ratelimit *rl) {
  if (!rl) return;
  for (int i = 0; i < STRIPES; i++) pthread_mutex_destroy(&rl->s[i].mu);
  free(rl);
}

int sg__ratelimit_hit(sg__ratelimit *rl, const uint8_t digest[32], int64_t now_ms) {
  uint64_t tag;
  memcpy(&tag, digest, sizeof tag);
  if (tag == 0) tag = 1;
  stripe *st = &rl->s[digest[8] % STRIPES];
  int64_t win = now_ms / WINDOW_MS;
  int retry = 0;
  pthread_mutex_lock(&st->mu);
  entry *hit = NULL, *victim = &st->e[0];
  for (int i = 0; i < WAYS; i++) {
    entry *e = &st->e[i];
    if (e->tag == tag) {
      hit = e;
      break;
    }
    if (e->tag == 0 || e->window < victim->window) victim = e;
    if (e->tag == 0) break;
  }
  if (!hit) {
    hit = victim;
    hit->tag = tag;
    hit->window = win;
    hit->count = 0;
  } else if (hit->window != win) {
    hit->window = win;
    hit->count = 0;
  }
  if (hit->count >= rl->per_minute) {
    int64_t left_ms = (win + 1) * WINDOW_MS - now_ms;
    retry = (int)((left_ms + 999) / 1000);
    if (retry < 1) retry = 1;
  } else {
    hit->count++;
  }
  pthread_mutex_unlock(&st->mu);
  return retry;
}
