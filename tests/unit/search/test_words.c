/*
 * The examples of docs/DESIGN.md §3.3 (tiers 3 and 4: words in any order, words run
 * together) through the compiled artifact, with keys and highlights; that typos never
 * apply to these tiers; the limits (2-6 words, 4 code points); a format-5 artifact
 * (0.2.0's rules: no tiers 3 and 4); corrupted extension sections are refused; and the
 * word index's paths, without it too, against the brute force, alone and in threads.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compiler/compiler.h"
#include "compiler/format.h"
#include "compiler/normalize.h"
#include "compiler/typo.h"
#include "compiler/words.h"
#include "search/artifact.h"
#include "bruteforce.h"

static sg_compile_item mk(const char *id, const char *dv, int64_t rank, const char *const *al,
                          size_t nal) {
  sg_compile_item it = {0};
  it.id = id;
  it.value = dv;
  it.display_value = dv;
  it.rank = rank;
  it.aliases = al;
  it.n_aliases = nal;
  return it;
}

static const char *const redbull_alias[] = {"Energy Drink Austria"};
static sg_compile_item g_items[7];

static sg_artifact *compile_examples(sg_buf *out) {
  g_items[0] = mk("itm_newyork", "New York", 100, NULL, 0);
  g_items[1] = mk("itm_nycity", "New York City", 50, NULL, 0);
  g_items[2] = mk("itm_redbull", "Red Bull", 10, redbull_alias, 1);
  g_items[3] = mk("itm_redbull2", "Redbull", 5, NULL, 0);
  g_items[4] = mk("itm_yorkshire", "Yorkshire", 1, NULL, 0);
  g_items[5] = mk("itm_seven", "a b c d e f g", 0, NULL, 0);
  g_items[6] = mk("itm_yorknev", "York Nev", 1000, NULL, 0);
  sg_compile_opts opts = {"en", (const char *const[]){"en"}, 1, 0};
  sg_buf_init(out, 0);
  assert_int_equal(sg_compile(g_items, 7, &opts, out), 0);
  sg_artifact *a;
  assert_int_equal(sg_artifact_open_mem(out->data, out->len, &a), 0);
  return a;
}

/* "id:edits:tier:[s,e)[s,e)…" for each item, joined by spaces, for query q with budget k. */
static void answer(const sg_artifact *a, const char *q, unsigned k, char *out, size_t cap) {
  char nq[256];
  long n = sg_normalize_into(q, strlen(q), nq, sizeof nq);
  assert_true(n >= 0);
  sg_query_result r;
  sg_artifact_query_k(a, 0, nq, (size_t)n, k, &r);
  size_t o = 0;
  out[0] = '\0';
  for (size_t i = 0; i < r.n; i++) {
    const char *id = strstr(r.items[i].json, "itm_");
    size_t idl = strcspn(id, "\"");
    o += (size_t)snprintf(out + o, cap - o, "%s%.*s:%u:%u:", i ? " " : "", (int)idl, id,
                          r.items[i].edits, r.items[i].tier);
    char dv[512];
    long dl = sg_fragment_display_value(&r.items[i], dv, sizeof dv);
    assert_true(dl >= 0);
    uint32_t h[32];
    long nh =
        sg_typo_highlight(dv, (size_t)dl, nq, (size_t)n, r.items[i].edits, r.items[i].tier, h, 16);
    assert_true(nh >= 0);
    for (long j = 0; j < nh; j++)
      o += (size_t)snprintf(out + o, cap - o, "[%u,%u)", h[2 * j], h[2 * j + 1]);
  }
}

static void expect(const sg_artifact *a, const char *q, unsigned k, const char *want) {
  char got[2048];
  answer(a, q, k, got, sizeof got);
  if (strcmp(got, want) != 0) fail_msg("q [%s] k %u:\n  got  %s\n  want %s", q, k, got, want);
}

static void test_examples(void **s) {
  (void)s;
  sg_buf out;
  sg_artifact *a = compile_examples(&out);
  /* Any order: whole words, the last a prefix; the highlight covers each matched word. */
  expect(a, "york new", 0, "itm_newyork:0:3:[0,3)[4,8) itm_nycity:0:3:[0,3)[4,8)");
  expect(a, "city new", 0, "itm_nycity:0:3:[0,3)[9,13)");
  expect(a, "york ne", 0,
         "itm_yorknev:0:0:[0,7) itm_newyork:0:3:[0,2)[4,8) itm_nycity:0:3:[0,2)[4,8)");
  /* A word that is not whole before the last does not match at tier 3. */
  expect(a, "yor new", 0, "");
  /* Run together, from the start of c only: Red Bull, the alias never highlighted. */
  expect(a, "redbull", 0, "itm_redbull2:0:0:[0,7) itm_redbull:0:4:[0,8)");
  expect(a, "red bu", 0, "itm_redbull:0:0:[0,6) itm_redbull2:0:4:[0,5)");
  expect(a, "newyork", 0, "itm_newyork:0:4:[0,8) itm_nycity:0:4:[0,8)");
  expect(a, "energydrink", 0, "itm_redbull:0:4:");
  expect(a, "yorkcity", 0, ""); /* not from the start of c */
  expect(a, "re dbu", 0, "itm_redbull:0:4:[0,6) itm_redbull2:0:4:[0,5)");
  /* Three code points run together: no tier 4. */
  expect(a, "r ed", 0, "");
  expect(a, "ne w", 0, "");
  expect(a, "ne wy", 0, "itm_newyork:0:4:[0,5) itm_nycity:0:4:[0,5)");
  /* Six words match at tier 3, seven do not. */
  expect(a, "f e d c b a", 0, "itm_seven:0:3:[0,1)[2,3)[4,5)[6,7)[8,9)[10,11)");
  expect(a, "g f e d c b a", 0, "");
  /* Typos never apply to tiers 3 and 4: one edit away from both is a typo match of tiers
   * 0-2 or nothing, and a zero-edit tier-3/4 match outranks every typo match. */
  expect(a, "yrok new", 2, "itm_yorknev:2:0:[0,7)");
  expect(a, "york new", 1,
         "itm_newyork:0:3:[0,3)[4,8) itm_nycity:0:3:[0,3)[4,8) itm_yorknev:1:0:[0,7)");
  expect(a, "newyrok", 2, "itm_newyork:2:0:[0,8) itm_nycity:2:0:[0,8)");
  expect(a, "redbul", 1, "itm_redbull2:0:0:[0,6) itm_redbull:0:4:[0,7)");
  expect(a, "york n", 1,
         "itm_yorknev:0:0:[0,6) itm_newyork:0:3:[0,1)[4,8) itm_nycity:0:3:[0,1)[4,8)");
  sg_artifact_close(a);
  sg_buf_free(&out);
}

static void test_format5_has_no_words(void **s) {
  (void)s;
  /* 0.2.0's artifact of the fuzz corpus: served by its rules, tiers 0-2 only. */
  sg_artifact *a;
  assert_int_equal(sg_artifact_open_file("tests/fuzz/corpus/artifact/andorra.art", &a), 0);
  assert_int_equal(sg_artifact_format(a), 5);
  sg_query_result r;
  sg_artifact_query_k(a, 0, "vella andorra", 13, 2, &r);
  assert_int_equal(r.n, 0);
  sg_artifact_query_k(a, 0, "andorralave", 11, 0, &r);
  assert_int_equal(r.n, 0);
  sg_artifact_query_k(a, 0, "andorra la", 10, 0, &r);
  assert_true(r.n > 0);
  for (size_t i = 0; i < r.n; i++) assert_true(r.items[i].tier <= 2);
  sg_artifact_close(a);
}

/* Every byte of both extension sections flipped in turn (and random values): the
 * artifact is refused or still answers within bounds (ASan in the -san build). */
static void test_corrupt_sections(void **s) {
  (void)s;
  sg_buf out;
  sg_artifact *a = compile_examples(&out);
  sg_artifact_close(a);
  const unsigned char *d = (const unsigned char *)out.data;
  uint64_t ext_off = sg__rd64(d + SG__HDR_EXT_OFF), n_ext = sg__rd64(d + SG__HDR_EXT_N);
  assert_int_equal(n_ext, 3);
  unsigned char *cp = malloc(out.len);
  assert_non_null(cp);
  size_t refused = 0, opened = 0;
  static const char *const qs[] = {"york new", "newyork", "red bu", "city new york", "e d c b"};
  for (uint64_t e = 0; e < n_ext; e++) {
    const unsigned char *r = d + ext_off + e * SG__EXT_SIZE;
    uint64_t so = sg__rd64(r + 8), sl = sg__rd64(r + 16);
    for (uint64_t b = 0; b < sl; b++)
      for (int v = 0; v < 3; v++) {
        memcpy(cp, d, out.len);
        cp[so + b] = v == 0 ? (unsigned char)(cp[so + b] ^ 0x80) : v == 1 ? 0xFF : 0x07;
        if (sg_artifact_open_mem(cp, out.len, &a) != 0) {
          refused++;
          continue;
        }
        opened++;
        for (size_t q = 0; q < sizeof qs / sizeof *qs; q++) {
          sg_query_result res;
          sg_artifact_query_k(a, 0, qs[q], strlen(qs[q]), 2, &res);
          assert_true(res.n <= 10);
        }
        sg_artifact_close(a);
      }
  }
  assert_true(refused > 0 && opened > 0);
  free(cp);
  sg_buf_free(&out);
}

/* The word index's signatures (SG__EXT_WORDS, docs/ARTIFACT.md): beside every posting,
 * its item's signature, the same for all of an item's postings and exactly the OR of
 * sg__word_sig over the words whose lists hold the item; the section's length counts
 * them. The search skips an item whose signature lacks wm's bits, so a missing bit
 * would lose a match. */
static void test_word_signatures(void **s) {
  (void)s;
  sg_buf out;
  sg_artifact *a = compile_examples(&out);
  sg_artifact_close(a);
  const unsigned char *d = (const unsigned char *)out.data;
  uint64_t ext_off = sg__rd64(d + SG__HDR_EXT_OFF), n_ext = sg__rd64(d + SG__HDR_EXT_N);
  const unsigned char *w = NULL;
  uint64_t wlen = 0;
  for (uint64_t e = 0; e < n_ext; e++) {
    const unsigned char *r = d + ext_off + e * SG__EXT_SIZE;
    if (sg__rd32(r) == SG__EXT_WORDS && sg__rd32(r + 4) == 0) {
      w = d + sg__rd64(r + 8);
      wlen = sg__rd64(r + 16);
    }
  }
  assert_non_null(w);
  uint64_t nw = sg__rd64(w), np = sg__rd64(w + 8);
  assert_true(nw > 0 && np > 0);
  assert_int_equal(wlen, 16 + 4 * (2 * nw + 1) + 6 * np);
  const unsigned char *klo = w + 16, *ps = klo + 4 * nw, *post = ps + 4 * (nw + 1),
                      *sig = post + 4 * np;
  const unsigned char *loc = d + sg__hdr_size(sg__rd32(d + SG__HDR_VERSION));
  const char *text = (const char *)d + sg__rd64(loc + SG__LOC_TEXT_OFF);
  const unsigned char *keys = d + sg__rd64(loc + SG__LOC_KEYS_OFF);
  uint32_t n = sg__rd32(d + SG__HDR_ITEM_COUNT), want[16] = {0}, got[16] = {0};
  bool seen[16] = {false};
  assert_true(n <= 16);
  for (uint64_t x = 0; x < nw; x++) {
    const char *t = text + sg__rd32(keys + (uint64_t)sg__rd32(klo + 4 * x) * SG__KEY_SIZE);
    size_t tl = strcspn(t, " ");
    for (uint32_t i = sg__rd32(ps + 4 * x); i < sg__rd32(ps + 4 * (x + 1)); i++) {
      uint32_t o = sg__rd32(post + 4 * (uint64_t)i);
      uint16_t g = sg__rd16(sig + 2 * (uint64_t)i);
      assert_true(o < n);
      if (seen[o]) assert_int_equal(g, got[o]); /* one signature per item */
      seen[o] = true;
      got[o] = g;
      want[o] |= sg__word_sig(t, tl);
    }
  }
  for (uint32_t o = 0; o < n; o++) {
    assert_true(seen[o]);
    assert_int_equal(got[o], want[o]);
  }
  sg_buf_free(&out);
}

/* The word index's ways with the last word (src/search/words.c): a prefix of at most 4
 * words (one cursor per word: "kab29 ba"); of more, with few postings next to the
 * smallest exact word's (gathered, sorted, leading the walk: "base yv", "base base
 * zq00"); with up to 4 times as many (marked: "gamma base yv", "other base kab2", "base
 * k"); with more (left to the signatures beside the postings and the verification: "yv05
 * g", "other zq", "base base g"), each against the brute force, with ranks that mix the
 * orders; and run-together queries (tier 4) whose ranges hold 0 to thousands of records. */
/* Every query of qs answers, through a, the brute force's items in its order (typos off). */
static void answers_match(const sg_artifact *a, sgt_bf *bf, const sg_compile_item *items,
                          const char *const *qs, size_t nq) {
  for (size_t q = 0; q < nq; q++) {
    size_t want[10];
    size_t nw = sgt_bf_query(bf, qs[q], strlen(qs[q]), want);
    sg_query_result r;
    sg_artifact_query_k(a, 0, qs[q], strlen(qs[q]), 0, &r);
    assert_int_equal(r.n, nw);
    for (size_t i = 0; i < nw; i++) {
      char want_id[40];
      snprintf(want_id, sizeof want_id, "\"%s\"", items[want[i]].id);
      if (!memmem(r.items[i].json, r.items[i].len, want_id, strlen(want_id)))
        fail_msg("%s: item %zu is not %s", qs[q], i, want_id);
    }
  }
}

/* The answers of qs through a, as one FNV-1a digest of their items' JSON. */
typedef struct {
  const sg_artifact *a;
  const char *const *qs;
  size_t nq;
  uint64_t digest;
} digest_job;

static void *answers_digest(void *arg) {
  digest_job *j = arg;
  uint64_t h = 1469598103934665603ull;
  for (size_t q = 0; q < j->nq; q++) {
    sg_query_result r;
    sg_artifact_query_k(j->a, 0, j->qs[q], strlen(j->qs[q]), 0, &r);
    for (size_t i = 0; i < r.n; i++)
      for (uint32_t c = 0; c < r.items[i].len; c++)
        h = (h ^ (unsigned char)r.items[i].json[c]) * 1099511628211ull;
    h = (h ^ r.n) * 1099511628211ull;
  }
  j->digest = h;
  return NULL;
}

/* Threads that search at once and then end: each maps its own tier-3 scratch at its first
 * search and unmaps it when it ends (ThreadSanitizer and ASan builds: no race between
 * their marks and sets, nothing used after it is unmapped), and each gets the answers of
 * the thread that searched alone. */
static void same_answers_in_threads(const sg_artifact *a, const char *const *qs, size_t nq) {
  enum { T = 4 };
  digest_job alone = {a, qs, nq, 0}, job[T];
  answers_digest(&alone);
  for (int round = 0; round < 2; round++) {
    pthread_t th[T];
    for (int t = 0; t < T; t++) {
      job[t] = (digest_job){a, qs, nq, 0};
      assert_int_equal(pthread_create(&th[t], NULL, answers_digest, &job[t]), 0);
    }
    for (int t = 0; t < T; t++) {
      assert_int_equal(pthread_join(th[t], NULL), 0);
      assert_true(job[t].digest == alone.digest);
    }
  }
}

static void test_word_index_paths(void **s) {
  (void)s;
  enum { N = 36000 };
  static char text[N][40], id[N][24];
  static sg_compile_item items[N];
  size_t n = 0;
  uint32_t seed = 12345;
#define NEXT() (seed = seed * 1103515245u + 12345u, (seed >> 8) % 1000)
  for (int w = 0; w < 30; w++) /* kab00 .. kab29: word w in w + 1 items */
    for (int j = 0; j <= w; j++)
      snprintf(text[n++], 40, "%s kab%02d", j % 3 ? "base" : "base other", w);
  for (int w = 0; w < 5000; w++) snprintf(text[n++], 40, "base zq%04d", w);
  for (int w = 0; w < 20; w++) snprintf(text[n++], 40, "yv%02d base gamma", w);
  for (int w = 0; w < 40; w++) /* gx00 .. gx39: 700 items each, 28,000 postings */
    for (int j = 0; j < 700; j++)
      snprintf(text[n++], 40, "%s gx%02d", j % 50 ? "filler" : "base", w);
  assert_true(n <= N);
  for (size_t i = 0; i < n; i++) {
    snprintf(id[i], 24, "itm_%06u", (unsigned)(i % 1000000));
    items[i] = mk(id[i], text[i], (int64_t)NEXT(), NULL, 0);
  }
  sg_compile_opts opts = {"en", (const char *const[]){"en"}, 1, 0};
  sg_buf out;
  sg_buf_init(&out, 0);
  assert_int_equal(sg_compile(items, n, &opts, &out), 0);
  sg_artifact *a;
  assert_int_equal(sg_artifact_open_mem(out.data, out.len, &a), 0);
  sgt_bf *bf = sgt_bf_new(items, n, "en");
  assert_non_null(bf);
  static const char *const qs[] = {
      "kab base", "kab1 base", "base k", "base ka", "base kab", "base kab2", "base kab29",
      "other kab", "other base kab", "base other k", "kab07 base", "kab29 ba", "base zq",
      "base zq1", "base zq49", "zq0001 base", "base gx", "base gx1", "filler gx", "filler gx3",
      "gx05 filler", "gx05 base", "base g", "other zq", "missing base", "base missing", "base base",
      "filler base", "base base g", "base base k", "filler filler gx", "other base g",
      "base other zq2", "gx0 fi", "base yv", "yv05 g", "gamma base yv", "base base zq00",
      "other base kab2", "yv1 gamma b",
      /* tier 4: ranges of every size, their end found galloping from their start */
      "basezq0001", "basezq000", "basezq00", "basezq0", "fillergx0", "basekab2", "baseotherk",
      "basezq49999", "basezq"};
  answers_match(a, bf, items, qs, sizeof qs / sizeof *qs);
  same_answers_in_threads(a, qs, sizeof qs / sizeof *qs);
  sg_artifact_close(a);
  /* The same artifact with its word index left out of the extension directory (the last
   * record, SG__EXT_WORDS sorting last): tier 3 then takes the ranges of the keys, and
   * where the two smallest are both large ("base gx": thousands each) the set of the
   * smaller's items, in its per-thread scratch; the answers are the same. */
  unsigned char *nw = malloc(out.len);
  assert_non_null(nw);
  memcpy(nw, out.data, out.len);
  {
    uint64_t eo = sg__rd64(nw + SG__HDR_EXT_OFF), ne = sg__rd64(nw + SG__HDR_EXT_N);
    assert_true(ne > 0);
    assert_int_equal(sg__rd32(nw + eo + (ne - 1) * SG__EXT_SIZE), SG__EXT_WORDS);
    sg__wr64(nw + SG__HDR_EXT_N, ne - 1);
  }
  assert_int_equal(sg_artifact_open_mem(nw, out.len, &a), 0);
  answers_match(a, bf, items, qs, sizeof qs / sizeof *qs);
  same_answers_in_threads(a, qs, sizeof qs / sizeof *qs);
  sg_artifact_close(a);
  free(nw);
#undef NEXT
  sgt_bf_free(bf);
  /* Refused after the run-together records' sample was built (the word index, checked
   * after them, corrupted): nothing leaks (LeakSanitizer in the -san build). */
  unsigned char *cp = malloc(out.len);
  assert_non_null(cp);
  memcpy(cp, out.data, out.len);
  uint64_t ext_off = sg__rd64(cp + SG__HDR_EXT_OFF), n_ext = sg__rd64(cp + SG__HDR_EXT_N);
  bool hit = false;
  for (uint64_t e = 0; e < n_ext; e++) {
    const unsigned char *r = cp + ext_off + e * SG__EXT_SIZE;
    if (sg__rd32(r) == SG__EXT_WORDS) {
      sg__wr64(cp + sg__rd64(r + 8), UINT32_MAX); /* n_words */
      hit = true;
    }
  }
  assert_true(hit);
  assert_int_not_equal(sg_artifact_open_mem(cp, out.len, &a), 0);
  free(cp);
  sg_buf_free(&out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_examples),         cmocka_unit_test(test_format5_has_no_words),
      cmocka_unit_test(test_corrupt_sections), cmocka_unit_test(test_word_index_paths),
      cmocka_unit_test(test_word_signatures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
