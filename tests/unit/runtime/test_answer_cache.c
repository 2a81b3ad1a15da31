/*
 * The process-wide answer cache (src/runtime/answer_cache.c): a key finds only its own
 * answer (artifact generation, locale, budget, limit and q each tell keys apart, also
 * where set and tag agree), under any number of artifacts; a malformed answer is not kept; a full
 * set admits a newcomer only over a way asked less often lately; the requestId recorded for an
 * entry comes back with it; and under worker threads that ask, keep and record overlapping keys at
 * once, every hit is the whole answer of its own key (a copy torn by a concurrent replacement would
 * mix two answers; ThreadSanitizer, `make unit-tsan`, reports an unlocked access).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "runtime/answer_cache.h"

/* Two artifacts' generations, made once (main). */
static uint64_t HASH_A, HASH_B;

/* An answer that names its key: every field derives from (q, salt). */
static void make_answer(const char *q, uint32_t salt, sg__ac_answer *a) {
  uint32_t h = salt;
  for (const char *p = q; *p; p++) h = h * 31 + (unsigned char)*p;
  memset(a, 0, sizeof *a);
  a->n = (uint8_t)(1 + h % SG_BUCKET_ITEMS);
  for (unsigned i = 0; i < a->n; i++) {
    a->it[i] = (sg__ac_item){.off = h + i,
                             .len = 7 + i,
                             .edits = (uint8_t)(i % 3),
                             .tier = 1,
                             .np = 1,
                             .first = (uint8_t)i};
    a->pairs[i][0] = (uint16_t)(h + i);
    a->pairs[i][1] = (uint16_t)(h + 2 * i);
  }
}

static bool same(const sg__ac_answer *x, const sg__ac_answer *y) {
  if (x->n != y->n) return false;
  for (unsigned i = 0; i < x->n; i++) {
    const sg__ac_item *a = &x->it[i], *b = &y->it[i];
    if (a->off != b->off || a->len != b->len || a->edits != b->edits || a->tier != b->tier ||
        a->np != b->np || a->first != b->first || x->pairs[i][0] != y->pairs[i][0] ||
        x->pairs[i][1] != y->pairs[i][1])
      return false;
  }
  return true;
}

static void key(sg__ac_key *k, uint64_t hash, int loc, unsigned budget, unsigned limit,
                const char *q) {
  assert_true(sg__ac_key_make(k, hash, loc, budget, limit, q, strlen(q)));
}

static void test_a_key_finds_only_its_own_answer(void **state) {
  (void)state;
  assert_true(sg__ac_init());
  sg__ac_key k, other;
  sg__ac_answer a, got;
  key(&k, HASH_A, 0, 1, 10, "unit-own");
  make_answer("unit-own", 1, &a);
  assert_false(sg__ac_get(&k, &got));
  assert_true(sg__ac_put(&k, &a));
  assert_true(sg__ac_get(&k, &got));
  assert_true(same(&got, &a));
  assert_false(got.has_rid);
  /* Each part of the key tells answers apart, even where the set and the tag agree. */
  sg__ac_key v[5];
  key(&v[0], HASH_B, 0, 1, 10, "unit-own");
  key(&v[1], HASH_A, 1, 1, 10, "unit-own");
  key(&v[2], HASH_A, 0, 2, 10, "unit-own");
  key(&v[3], HASH_A, 0, 1, 5, "unit-own");
  key(&v[4], HASH_A, 0, 1, 10, "unit-owN");
  for (int i = 0; i < 5; i++) {
    v[i].set = k.set;
    v[i].tag = k.tag;
    assert_false(sg__ac_get(&v[i], &got));
  }
  /* And where they do not. */
  key(&other, HASH_B, 0, 1, 10, "unit-own");
  assert_false(sg__ac_get(&other, &got));
  key(&other, HASH_A, 1, 1, 10, "unit-own");
  assert_false(sg__ac_get(&other, &got));
  key(&other, HASH_A, 0, 2, 10, "unit-own");
  assert_false(sg__ac_get(&other, &got));
  key(&other, HASH_A, 0, 1, 5, "unit-own");
  assert_false(sg__ac_get(&other, &got));
  key(&other, HASH_A, 0, 1, 10, "unit-owN");
  assert_false(sg__ac_get(&other, &got));
  /* Not kept: q too long for an entry, or no content hash. */
  char longq[SG__AC_Q + 1];
  memset(longq, 'x', SG__AC_Q);
  longq[SG__AC_Q] = '\0';
  assert_false(sg__ac_key_make(&other, HASH_A, 0, 1, 10, longq, SG__AC_Q));
  assert_false(sg__ac_key_make(&other, 0, 0, 1, 10, "q", 1)); /* no artifact generation */
  assert_false(sg__ac_key_make(&other, HASH_A, 0, 256, 10, "q", 1));
  assert_false(sg__ac_key_make(&other, HASH_A, 0, 1, 256, "q", 1));
  /* A malformed answer is not kept. */
  sg__ac_answer bad;
  make_answer("unit-bad", 1, &bad);
  bad.n = SG_BUCKET_ITEMS + 1;
  key(&other, HASH_A, 0, 1, 10, "unit-bad");
  assert_false(sg__ac_put(&other, &bad));
  make_answer("unit-bad", 1, &bad);
  bad.it[0].first = SG__AC_PAIRS - 1;
  bad.it[0].np = 2;
  assert_false(sg__ac_put(&other, &bad));
  assert_false(sg__ac_get(&other, &got));

  /* The requestId recorded for the entry comes back with it, and a new answer under
   * the key drops it (a replaced entry has none). */
  uint8_t digest[32], tag[16];
  memset(digest, 7, sizeof digest);
  memset(tag, 9, sizeof tag);
  char rid[32];
  memset(rid, 'e', sizeof rid);
  sg__ac_set_rid(&k, digest, rid, tag);
  assert_true(sg__ac_get(&k, &got));
  assert_true(got.has_rid);
  assert_memory_equal(got.key_digest, digest, 32);
  assert_memory_equal(got.rid_hex, rid, 32);
  assert_memory_equal(got.body_tag, tag, 16);
  /* Recording for a key the cache does not hold changes nothing. */
  key(&other, HASH_B, 3, 1, 10, "unit-absent");
  sg__ac_set_rid(&other, digest, rid, tag);
  assert_false(sg__ac_get(&other, &got));
}

/* Any number of artifacts share the cache: each generation's answers are found. */
static void test_many_artifacts(void **state) {
  (void)state;
  enum { ARTS = 40 };
  uint64_t gen[ARTS];
  sg__ac_key k;
  sg__ac_answer a, got;
  for (int i = 0; i < ARTS; i++) {
    gen[i] = sg__ac_generation();
    assert_true(gen[i] != 0);
    for (int j = 0; j < i; j++) assert_true(gen[i] != gen[j]);
    key(&k, gen[i], 0, 1, 10, "unit-many");
    make_answer("unit-many", (uint32_t)i, &a);
    assert_true(sg__ac_put(&k, &a));
  }
  for (int r = 0; r < 2; r++)
    for (int i = 0; i < ARTS; i++) {
      key(&k, gen[i], 0, 1, 10, "unit-many");
      make_answer("unit-many", (uint32_t)i, &a);
      assert_true(sg__ac_get(&k, &got));
      assert_true(same(&got, &a));
    }
}

/* Keys of one set: q varied until sg__ac_key_make puts it in set `set`. */
static int same_set_keys(uint32_t set, char qs[][24], int n, const char *prefix) {
  int found = 0;
  for (int i = 0; found < n && i < 10000000; i++) {
    char q[24];
    snprintf(q, sizeof q, "%s%d", prefix, i);
    sg__ac_key k;
    key(&k, HASH_B, 0, 2, 10, q);
    if (k.set == set) memcpy(qs[found++], q, sizeof q);
  }
  return found;
}

static void test_a_full_set_admits_only_what_is_asked_more_often(void **state) {
  (void)state;
  assert_true(sg__ac_init());
  enum { N = SG__AC_WAYS + 8 };
  char hot[SG__AC_WAYS][24], cold[N][24];
  sg__ac_key k, own;
  key(&own, HASH_A, 0, 1, 10, "unit-own"); /* the first test's entry: not in this set */
  char probe[24];
  for (int i = 0;; i++) {
    snprintf(probe, sizeof probe, "probe%d", i);
    key(&k, HASH_B, 0, 2, 10, probe);
    if (k.set != own.set) break;
  }
  uint32_t set = k.set;
  assert_int_equal(same_set_keys(set, hot, SG__AC_WAYS, "hot"), SG__AC_WAYS);
  assert_int_equal(same_set_keys(set, cold, N, "cold"), N);
  sg__ac_answer a, got;
  /* The set filled with answers asked three times each. */
  for (int i = 0; i < SG__AC_WAYS; i++) {
    key(&k, HASH_B, 0, 2, 10, hot[i]);
    make_answer(hot[i], 2, &a);
    for (int r = 0; r < 3; r++)
      if (!sg__ac_get(&k, &got)) assert_true(sg__ac_put(&k, &a));
  }
  /* Newcomers asked once each are refused, and the hot answers all stay. */
  for (int i = 0; i < N; i++) {
    key(&k, HASH_B, 0, 2, 10, cold[i]);
    make_answer(cold[i], 2, &a);
    assert_false(sg__ac_get(&k, &got));
    assert_false(sg__ac_put(&k, &a));
  }
  for (int i = 0; i < SG__AC_WAYS; i++) {
    key(&k, HASH_B, 0, 2, 10, hot[i]);
    make_answer(hot[i], 2, &a);
    assert_true(sg__ac_get(&k, &got));
    assert_true(same(&got, &a));
  }
  /* A newcomer asked more often than the least recently used way replaces it. */
  key(&k, HASH_B, 0, 2, 10, cold[0]);
  make_answer(cold[0], 2, &a);
  for (int r = 0; r < 8; r++) (void)sg__ac_get(&k, &got);
  assert_true(sg__ac_put(&k, &a));
  assert_true(sg__ac_get(&k, &got));
  assert_true(same(&got, &a));
}

/* ---- worker threads at once ------------------------------------------------------ */

#define THREADS 4
#define KEYS 64 /* few keys over few sets: threads replace each other's entries */
#define ROUNDS 20000

typedef struct {
  int id;
  long hits, bad;
} worker_arg;

static void *worker(void *p) {
  worker_arg *w = p;
  char q[24];
  sg__ac_answer a, got;
  uint8_t digest[32], tag[16];
  char rid[32];
  for (int r = 0; r < ROUNDS; r++) {
    int i = (r * 7 + w->id * 13) % KEYS;
    snprintf(q, sizeof q, "t%d", i);
    sg__ac_key k;
    if (!sg__ac_key_make(&k, HASH_A, 5, 2, 10, q, strlen(q))) {
      w->bad++;
      continue;
    }
    /* Four sets only: keys collide and replace each other all the time. */
    k.set &= 3;
    make_answer(q, 3, &a);
    if (sg__ac_get(&k, &got)) {
      w->hits++;
      if (!same(&got, &a)) w->bad++;
      /* A recorded requestId is the one recorded for this key. */
      if (got.has_rid && (got.rid_hex[0] != q[1] || got.body_tag[0] != (uint8_t)i)) w->bad++;
    } else if (sg__ac_put(&k, &a)) {
      memset(digest, w->id, sizeof digest);
      memset(rid, q[1], sizeof rid);
      memset(tag, i, sizeof tag);
      sg__ac_set_rid(&k, digest, rid, tag);
    }
  }
  return NULL;
}

static void test_worker_threads_at_once(void **state) {
  (void)state;
  assert_true(sg__ac_init());
  pthread_t t[THREADS];
  worker_arg args[THREADS];
  for (int i = 0; i < THREADS; i++) {
    args[i] = (worker_arg){.id = i};
    assert_int_equal(pthread_create(&t[i], NULL, worker, &args[i]), 0);
  }
  long hits = 0;
  for (int i = 0; i < THREADS; i++) {
    assert_int_equal(pthread_join(t[i], NULL), 0);
    assert_int_equal(args[i].bad, 0);
    hits += args[i].hits;
  }
  assert_true(hits > 0);
}

int main(void) {
  HASH_A = sg__ac_generation();
  HASH_B = sg__ac_generation();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_a_key_finds_only_its_own_answer),
      cmocka_unit_test(test_a_full_set_admits_only_what_is_asked_more_often),
      cmocka_unit_test(test_many_artifacts),
      cmocka_unit_test(test_worker_threads_at_once),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
