#include "common/ratelimit.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define NBUCKETS 4096
#define GC_THRESHOLD 100000

typedef struct entry {
  struct entry *next;
  double tokens;
  int64_t last_ms;
  char key[];
} entry;

struct sg_ratelimit {
  pthread_mutex_t mu;
  uint32_t per_minute;
  size_t size;
  size_t gc_at; /* collect when size reaches this */
  entry *table[NBUCKETS];
};

static uint32_t hash(const char *s) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (; *s; s++) h = (h ^ (uint8_t)*s) * 16777619u;
  return h;
}

sg_ratelimit *sg_ratelimit_new(uint32_t per_minute) {
  sg_ratelimit *rl = calloc(1, sizeof *rl);
  if (!rl) return NULL;
  pthread_mutex_init(&rl->mu, NULL);
  rl->per_minute = per_minute;
  rl->gc_at = GC_THRESHOLD;
  return rl;
}

void sg_ratelimit_free(sg_ratelimit *rl) {
  if (!rl) return;
  for (size_t i = 0; i < NBUCKETS; i++)
    for (entry *e = rl->table[i], *n; e; e = n) {
      n = e->next;
      free(e);
    }
  pthread_mutex_destroy(&rl->mu);
  free(rl);
}

static void refill(const sg_ratelimit *rl, entry *e, int64_t now_ms) {
  if (now_ms > e->last_ms) {
    e->tokens += (double)(now_ms - e->last_ms) * rl->per_minute / 60000.0;
    if (e->tokens > rl->per_minute) e->tokens = rl->per_minute;
    e->last_ms = now_ms;
  }
}

/* Drops buckets that have refilled completely: they carry no state worth keeping. */
static void gc(sg_ratelimit *rl, int64_t now_ms) {
  for (size_t i = 0; i < NBUCKETS; i++) {
    entry **pp = &rl->table[i];
    while (*pp) {
      entry *e = *pp;
      refill(rl, e, now_ms);
      if (e->tokens >= rl->per_minute) {
        *pp = e->next;
        free(e);
        rl->size--;
      } else {
        pp = &e->next;
      }
    }
  }
}

bool sg_ratelimit_take(sg_ratelimit *rl, const char *key, int64_t now_ms) {
  int retry;
  return sg_ratelimit_take_retry(rl, key, now_ms, &retry);
}

bool sg_ratelimit_take_retry(sg_ratelimit *rl, const char *key, int64_t now_ms,
                             int *retry_after_s) {
  *retry_after_s = 0;
  if (!rl || rl->per_minute == 0) return true;
  bool ok;
  pthread_mutex_lock(&rl->mu);
  uint32_t h = hash(key) % NBUCKETS;
  entry *e = rl->table[h];
  while (e && strcmp(e->key, key) != 0) e = e->next;
  if (!e) {
    if (rl->size >= rl->gc_at) {
      /* A pass costs O(size). When it frees little (many keys active within the
       * minute), collecting again on the very next new key would cost O(size) per
       * request under the lock; waiting until the table doubles keeps it amortised
       * O(1) and memory within twice the keys seen in the last minute. */
      gc(rl, now_ms);
      rl->gc_at = rl->size * 2 > GC_THRESHOLD ? rl->size * 2 : GC_THRESHOLD;
    }
    size_t kl = strlen(key);
    e = malloc(sizeof *e + kl + 1);
    if (!e) {
      pthread_mutex_unlock(&rl->mu);
      return true; /* fail open on OOM rather than lock everyone out */
    }
    memcpy(e->key, key, kl + 1);
    e->tokens = rl->per_minute;
    e->last_ms = now_ms;
    e->next = rl->table[h];
    rl->table[h] = e;
    rl->size++;
  }
  refill(rl, e, now_ms);
  ok = e->tokens >= 1.0;
  if (ok) {
    e->tokens -= 1.0;
  } else {
    double ms = (1.0 - e->tokens) * 60000.0 / rl->per_minute;
    *retry_after_s = (int)((ms + 999.0) / 1000.0);
    if (*retry_after_s < 1) *retry_after_s = 1;
  }
  pthread_mutex_unlock(&rl->mu);
  return ok;
}

size_t sg_ratelimit_size(sg_ratelimit *rl) {
  pthread_mutex_lock(&rl->mu);
  size_t n = rl->size;
  pthread_mutex_unlock(&rl->mu);
  return n;
}
