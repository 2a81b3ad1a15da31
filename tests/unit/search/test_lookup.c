/*
 * The prefix range of src/search/lookup.c (sg__prefix_range) against the sorted keys read
 * one by one. It walks the trie for the query's leading code points, stops early where a
 * node's next mask rules the next code point out, and searches the rest among the keys
 * between the node's children around that code point: each of those steps has a case here, on a
 * list dense enough to have deep nodes (more than SG__TRIE_MIN keys share long prefixes), with
 * non-ASCII text: the random lists of the property tests (randlist.h).
 * - every byte prefix of every key (so also cuts inside a code point);
 * - the same with its last byte replaced (a code point no key has next, one some key has,
 *   a space, a stray continuation byte, 0xFF);
 * - random bytes;
 * and the range's node, when it returns one, holds exactly the range's keys. The same
 * queries on the view without its trie (the binary search alone) give the same ranges.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/buf.h"
#include "compiler/compiler.h"
#include "compiler/format.h"
#include "search/artifact.h"
#include "search/internal.h"
#include "randlist.h"

static const char *key_at(const locale_view *v, uint64_t k) {
  return v->text + sg__rd32(v->keys + k * SG__KEY_SIZE);
}

static size_t checked, nonempty, by_node, deads;

/* sg__prefix_range on v (and on v without its trie) against the keys read one by one. */
static void check(const locale_view *v, const char *q, size_t len) {
  uint64_t lo = 0, hi = 0;
  bool seen = false;
  size_t common = 0; /* the longest start of q that some key starts with */
  for (uint64_t k = 0; k < v->n_keys; k++) {
    const char *t = key_at(v, k);
    size_t c = 0;
    while (c < len && t[c] != '\0' && t[c] == q[c]) c++;
    if (c > common) common = c;
    bool in = c == len;
    if (in && !seen) lo = k;
    if (in) hi = k + 1;
    if (in && seen && hi != k + 1) fail_msg("keys starting with the query are not contiguous");
    seen |= in;
  }
  uint64_t l, h;
  size_t dead;
  uint32_t x = sg__prefix_range_dead(v, q, len, &l, &h, &dead);
  checked++;
  if (dead != SIZE_MAX) { /* no key may start with q[0..dead) */
    if (dead > len || dead <= common)
      fail_msg("query [%.*s]: dead %zu, but a key starts with its first %zu bytes", (int)len, q,
               dead, common);
    deads++;
  }
  if (!seen) {
    if (l < h)
      fail_msg("query of %zu bytes: [%llu, %llu) where no key starts with it", len,
               (unsigned long long)l, (unsigned long long)h);
    assert_int_equal(x, 0);
    return;
  }
  nonempty++;
  if (l != lo || h != hi)
    fail_msg("query [%.*s]: [%llu, %llu), the keys say [%llu, %llu)", (int)len, q,
             (unsigned long long)l, (unsigned long long)h, (unsigned long long)lo,
             (unsigned long long)hi);
  if (x) {
    by_node++;
    uint32_t tlo, thi;
    sg__trie_span(v, x, &tlo, &thi);
    assert_int_equal(tlo, lo);
    assert_int_equal(thi, hi);
  }
  locale_view plain = *v;
  plain.n_trie = 0;
  assert_int_equal(sg__prefix_range(&plain, q, len, &l, &h), 0);
  assert_int_equal(l, lo);
  assert_int_equal(h, hi);
}

static void test_prefix_range_against_the_keys(void **state) {
  (void)state;
  sgt_list lst;
  sgt_list_gen(&lst, 3000, 11);
  sg_compile_opts opts = {"en", sgt_locales, 3, 0};
  sg_buf out;
  sg_buf_init(&out, 0);
  assert_int_equal(sg_compile(lst.items, lst.n, &opts, &out), 0);
  sg_artifact *art;
  assert_int_equal(sg_artifact_open_mem(out.data, out.len, &art), 0);
  const locale_view *v = &art->loc[0];
  assert_true(v->n_trie > 100);
  static const unsigned char last[] = {'a', 'q', 'z', ' ', 0x80, 0xC3, 0xFF, '0'};
  for (uint64_t k = 0; k < v->n_keys; k += 3) {
    const char *t = key_at(v, k);
    size_t tl = strlen(t);
    for (size_t len = 1; len <= tl && len <= 40; len++) {
      check(v, t, len);
      char q[64];
      memcpy(q, t, len);
      q[len - 1] = (char)last[(k + len) % sizeof last];
      check(v, q, len);
    }
  }
  uint64_t st = 5;
  for (int i = 0; i < 2000; i++) {
    char q[8];
    size_t len = 1 + i % 6;
    for (size_t c = 0; c < len; c++) {
      st = st * 6364136223846793005ull + 1442695040888963407ull;
      unsigned b = (unsigned)(st >> 56);
      q[c] = (char)(b % 4 ? 'a' + b % 26 : b | 0x80);
    }
    check(v, q, len);
  }
  fprintf(stderr,
          "prefix ranges: %zu queries, %zu non-empty, %zu named by a trie node, %zu "
          "with a dead start\n",
          checked, nonempty, by_node, deads);
  assert_true(by_node > 1000 && nonempty > by_node && checked > nonempty && deads > 1000);
  sg_artifact_close(art);
  sg_buf_free(&out);
  sgt_list_free(&lst);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_prefix_range_against_the_keys),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
