/*
 * The runtime's answer cache (docs/RUNTIME.md, "The answer cache"): one per process,
 * shared by the worker threads, bounded (SG__AC_SETS sets of SG__AC_WAYS entries, each
 * set behind its own lock). An entry is the answer of one (artifact, served locale,
 * normalised q, typo budget, limit): the items as offsets into the artifact's bytes
 * with their highlight pairs, and the requestId and
 * body tag last derived for it with the SHA-256 of the key they were derived with.
 *
 * Readers get a copy of an entry, taken under its set's lock; nothing a caller holds
 * points into the cache. Admission (TinyLFU) counts each thread's own lookups in a
 * per-thread sketch, so the counting shares no memory between threads.
 */
#ifndef SG_RUNTIME_ANSWER_CACHE_H
#define SG_RUNTIME_ANSWER_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "search/artifact.h"

#define SG__AC_SETS 2048u /* a power of two */
#define SG__AC_WAYS 16
#define SG__AC_Q 48     /* normalised queries of at most SG__AC_Q - 1 bytes are kept */
#define SG__AC_PAIRS 20 /* highlight pairs per entry, shared by its items */

typedef struct {
  uint32_t off, len;              /* the fragment: artifact bytes [off, off + len) */
  uint8_t edits, tier, np, first; /* its highlight: np pairs from pairs[first] */
} sg__ac_item;

/* What an entry is found by; made by sg__ac_key_make. */
typedef struct {
  uint64_t gen; /* the artifact's generation (sg__ac_generation) */
  int32_t loc;
  uint8_t k, limit, qlen;
  const char *q;
  uint32_t set, tag;
} sg__ac_key;

/* An answer as the cache keeps it, and as a hit copies it out. */
typedef struct {
  uint8_t n;
  sg__ac_item it[SG_BUCKET_ITEMS];
  uint16_t pairs[SG__AC_PAIRS][2];
  bool has_rid;
  uint8_t key_digest[32];
  char rid_hex[32]; /* the requestId without its "req_" */
  uint8_t body_tag[16];
} sg__ac_answer;

/* Allocates the cache and makes it resident, once per process (a worker calls it when it
 * starts, so the memory is whole before the first query). Returns false when it cannot. */
bool sg__ac_init(void);

/* A new generation for an artifact the runtime opened (never 0, never given twice): the
 * entries made from its bytes carry it. */
uint64_t sg__ac_generation(void);

/* Fills *k for the answer of (the artifact of generation gen, loc, budget, limit,
 * q[0..qlen)). Returns false when such an answer is not kept: no cache, gen 0, or q too
 * long. */
bool sg__ac_key_make(sg__ac_key *k, uint64_t gen, int loc, unsigned budget, unsigned limit,
                     const char *q, size_t qlen);

/* Counts the lookup (admission) and, when the cache holds the answer, copies it to *out
 * and returns true. */
bool sg__ac_get(const sg__ac_key *k, sg__ac_answer *out);

/* Keeps the answer a (has_rid ignored: a new entry has none) unless its set is full of
 * answers asked more often lately, another thread kept it meanwhile, or it is malformed
 * (more than SG_BUCKET_ITEMS items, pairs past SG__AC_PAIRS). Returns whether
 * the cache holds the key's answer now. */
bool sg__ac_put(const sg__ac_key *k, const sg__ac_answer *a);

/* Records the requestId (its 32 hex digits) and body tag derived for the key's answer
 * with the key whose SHA-256 is key_digest, if the cache still holds that answer. */
void sg__ac_set_rid(const sg__ac_key *k, const uint8_t key_digest[32], const char rid_hex[32],
                    const uint8_t body_tag[16]);

#endif
