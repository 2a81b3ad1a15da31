/*
 * The answer cache (answer_cache.h; docs/RUNTIME.md, "The answer cache").
 *
 * One cache per process, shared by the worker threads: SG__AC_SETS sets of SG__AC_WAYS
 * entries (32,768 answers, ~11 MiB), each set behind its own mutex, its tags and use
 * stamps in one block checked before any entry is read, the least recently used way
 * replaced. Shared, the same memory holds twice the distinct answers of two per-thread
 * caches (every worker sees every query of a mix, so per-thread caches each kept the
 * same answers), and a query one worker answered is a hit on the other.
 *
 * Admission (TinyLFU, Einziger et al.): each thread counts how often each key was asked
 * lately in its own count-min sketch (AC_ROWS rows of AC_WIDTH 8-bit counters, halved
 * after AC_SAMPLE lookups), and a miss that finds its set full replaces the least
 * recently used way only when this thread saw its key asked more often than that way's:
 * a run of queries asked once each (a scan, a crawler, random text, a mix larger than the
 * cache cycled in order) passes through without flushing the answers asked again and
 * again. The sketch is per thread so that counting, which every lookup does, writes no
 * memory another core reads.
 *
 * An entry's items are offsets into its artifact's bytes. Each artifact the runtime opens
 * gets a generation of its own (sg__ac_generation, never reused), and the entries made
 * from it carry it, so no entry is ever read against other bytes: an artifact opened
 * again (a list moved back to a hash it had) starts with no entries. Any number of lists
 * share the cache this way; a table of content hashes would stop hitting past its size.
 */
#include "runtime/answer_cache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define AC_ROWS 4
#define AC_WIDTH 32768u /* a power of two, as many counters a row as the cache has ways */
#define AC_SAMPLE (10u * SG__AC_SETS * SG__AC_WAYS)

typedef struct {
  uint64_t gen;
  int32_t loc;
  uint8_t qlen, k, limit;
  char q[SG__AC_Q];
  sg__ac_answer a;
} ac_entry;

typedef struct {
  pthread_mutex_t mu;
  uint32_t clock;            /* the set's clock: a way's stamp at its last use */
  uint32_t tag[SG__AC_WAYS]; /* of each way's entry (never 0); 0: empty */
  uint32_t used[SG__AC_WAYS];
  ac_entry e[SG__AC_WAYS];
} ac_set;

static ac_set *sets;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init(void) {
  ac_set *s = calloc(SG__AC_SETS, sizeof *s);
  if (!s) return;
  /* Resident now: calloc maps zero pages lazily, so RSS would otherwise grow as new
   * queries reach untouched sets, which reads like a leak under a run of distinct
   * queries. (Before the mutexes are made: nothing but them writes their bytes.) */
  for (size_t i = 0; i < SG__AC_SETS * sizeof *s; i += 4096) ((volatile char *)s)[i] = 0;
  for (unsigned i = 0; i < SG__AC_SETS; i++) pthread_mutex_init(&s[i].mu, NULL);
  sets = s;
}

bool sg__ac_init(void) {
  pthread_once(&init_once, init);
  return sets != NULL;
}

/* ---- generations ------------------------------------------------------------------ */

static _Atomic uint64_t next_gen;

uint64_t sg__ac_generation(void) { return atomic_fetch_add(&next_gen, 1) + 1; }

/* ---- admission sketch (per thread) ------------------------------------------------- */

typedef struct {
  uint8_t freq[AC_ROWS][AC_WIDTH];
  uint32_t samples; /* lookups counted since the last halving */
} sketch;

static _Thread_local sketch *tl_sk;
static _Thread_local bool tl_sk_failed;
static pthread_key_t sk_key;
static pthread_once_t sk_once = PTHREAD_ONCE_INIT;
static bool sk_key_ok;

static void sk_free(void *p) { free(p); }
static void sk_init(void) { sk_key_ok = pthread_key_create(&sk_key, sk_free) == 0; }

/* This thread's sketch (freed when the thread exits), or NULL. */
static sketch *sk_get(void) {
  if (tl_sk || tl_sk_failed) return tl_sk;
  pthread_once(&sk_once, sk_init);
  sketch *s = sk_key_ok ? calloc(1, sizeof *s) : NULL;
  if (s && pthread_setspecific(sk_key, s) != 0) {
    free(s);
    s = NULL;
  }
  if (!s) tl_sk_failed = true;
  tl_sk = s;
  return s;
}

/* The sketch's counter of row r for a key known by its set and tag (all an entry keeps of
 * its hash, so a candidate and a resident way are counted alike). */
static inline uint8_t *counter(sketch *s, unsigned r, uint32_t set, uint32_t tag) {
  uint64_t x = ((uint64_t)tag << 32 | set) * 0x9E3779B97F4A7C15ull;
  x ^= x >> (29 + 2 * r);
  x *= 0xBF58476D1CE4E5B9ull;
  return &s->freq[r][(x >> 32) & (AC_WIDTH - 1)];
}

/* How often this thread saw the key asked lately: the least of its counters. */
static unsigned freq(sketch *s, uint32_t set, uint32_t tag) {
  unsigned f = 255;
  for (unsigned r = 0; r < AC_ROWS; r++) {
    unsigned v = *counter(s, r, set, tag);
    if (v < f) f = v;
  }
  return f;
}

/* Counts one lookup of the key (saturating), and halves every counter after AC_SAMPLE. */
static void count(sketch *s, uint32_t set, uint32_t tag) {
  for (unsigned r = 0; r < AC_ROWS; r++) {
    uint8_t *v = counter(s, r, set, tag);
    if (*v < 255) (*v)++;
  }
  if (++s->samples >= AC_SAMPLE) {
    s->samples = 0;
    for (unsigned r = 0; r < AC_ROWS; r++)
      for (unsigned i = 0; i < AC_WIDTH; i++) s->freq[r][i] >>= 1;
  }
}

/* ---- the sets ----------------------------------------------------------------------- */

bool sg__ac_key_make(sg__ac_key *k, uint64_t gen, int loc, unsigned budget, unsigned limit,
                     const char *q, size_t qlen) {
  if (!gen || !sg__ac_init() || qlen >= SG__AC_Q || budget > UINT8_MAX || limit > UINT8_MAX)
    return false;
  k->gen = gen;
  k->loc = loc;
  k->k = (uint8_t)budget;
  k->limit = (uint8_t)limit;
  k->qlen = (uint8_t)qlen;
  k->q = q;
  /* FNV-1a over the key; its low bits pick the set, its high half is the tag. */
  uint64_t h = 1469598103934665603ull ^ k->gen;
  h = (h ^ (uint32_t)loc) * 1099511628211ull;
  h = (h ^ (budget << 8 | limit)) * 1099511628211ull;
  for (size_t i = 0; i < qlen; i++) h = (h ^ (unsigned char)q[i]) * 1099511628211ull;
  h ^= h >> 29;
  k->set = (uint32_t)(h & (SG__AC_SETS - 1));
  k->tag = (uint32_t)(h >> 32) | 1u;
  return true;
}

/* The way of set s holding key k, or -1. The caller holds s->mu. */
static int find(const ac_set *s, const sg__ac_key *k) {
  for (int w = 0; w < SG__AC_WAYS; w++) {
    if (s->tag[w] != k->tag) continue;
    const ac_entry *e = &s->e[w];
    if (e->gen == k->gen && e->loc == k->loc && e->k == k->k && e->limit == k->limit &&
        e->qlen == k->qlen && memcmp(e->q, k->q, k->qlen) == 0)
      return w;
  }
  return -1;
}

bool sg__ac_get(const sg__ac_key *k, sg__ac_answer *out) {
  sketch *sk = sk_get();
  if (sk) count(sk, k->set, k->tag);
  ac_set *s = &sets[k->set];
  pthread_mutex_lock(&s->mu);
  int w = find(s, k);
  if (w >= 0) {
    s->used[w] = ++s->clock;
    const sg__ac_answer *a = &s->e[w].a;
    out->n = a->n;
    memcpy(out->it, a->it, a->n * sizeof a->it[0]);
    memcpy(out->pairs, a->pairs, sizeof a->pairs);
    out->has_rid = a->has_rid;
    if (a->has_rid) {
      memcpy(out->key_digest, a->key_digest, sizeof a->key_digest);
      memcpy(out->rid_hex, a->rid_hex, sizeof a->rid_hex);
      memcpy(out->body_tag, a->body_tag, sizeof a->body_tag);
    }
  }
  pthread_mutex_unlock(&s->mu);
  return w >= 0;
}

bool sg__ac_put(const sg__ac_key *k, const sg__ac_answer *a) {
  if (a->n > SG_BUCKET_ITEMS) return false;
  for (unsigned i = 0; i < a->n; i++)
    if (a->it[i].np > SG__AC_PAIRS - a->it[i].first) return false;
  ac_set *s = &sets[k->set];
  sketch *sk = sk_get();
  pthread_mutex_lock(&s->mu);
  bool held = find(s, k) >= 0; /* another worker answered it meanwhile */
  if (!held) {
    int w = 0; /* an empty way, else the least recently used */
    bool empty = false;
    for (int i = 0; i < SG__AC_WAYS; i++) {
      if (!s->tag[i]) {
        w = i;
        empty = true;
        break;
      }
      /* The oldest by age from the set's clock, which wraps: ages stay right. */
      if (s->clock - s->used[i] > s->clock - s->used[w]) w = i;
    }
    /* Full: admitted only over a way asked less often lately. */
    if (empty || (sk && freq(sk, k->set, k->tag) > freq(sk, k->set, s->tag[w]))) {
      ac_entry *e = &s->e[w];
      e->gen = k->gen;
      e->loc = k->loc;
      e->k = k->k;
      e->limit = k->limit;
      e->qlen = k->qlen;
      memcpy(e->q, k->q, k->qlen);
      e->a.n = a->n;
      memcpy(e->a.it, a->it, a->n * sizeof a->it[0]);
      memcpy(e->a.pairs, a->pairs, sizeof a->pairs);
      e->a.has_rid = false;
      s->tag[w] = k->tag;
      s->used[w] = ++s->clock;
      held = true;
    }
  }
  pthread_mutex_unlock(&s->mu);
  return held;
}

void sg__ac_set_rid(const sg__ac_key *k, const uint8_t key_digest[32], const char rid_hex[32],
                    const uint8_t body_tag[16]) {
  ac_set *s = &sets[k->set];
  pthread_mutex_lock(&s->mu);
  int w = find(s, k);
  if (w >= 0) {
    sg__ac_answer *a = &s->e[w].a;
    memcpy(a->key_digest, key_digest, sizeof a->key_digest);
    memcpy(a->rid_hex, rid_hex, sizeof a->rid_hex);
    memcpy(a->body_tag, body_tag, sizeof a->body_tag);
    a->has_rid = true;
  }
  pthread_mutex_unlock(&s->mu);
}
