/*
 * The two-edit search through the skip tables (docs/ARTIFACT.md, "Two edits near the
 * start"), case by case against the brute force of docs/DESIGN.md §3.1: a list dense
 * near the root (many keys share their first letters, so both edits can fall among them
 * and the capped walk alone would miss the match) and queries placed at each boundary the
 * split depends on:
 * - both edits before row L, then an exact rest (the straight lookups), for table 0
 *   (queries of 10+ code points) and table 1 (8 and 9);
 * - one edit before row L and a swap of the key's code points L and L + 1 (the swap
 *   lookups), for both tables;
 * - the same with a prefix too long for a record's head (non-ASCII: the record holds its
 *   key and the search reads the text);
 * - one query shorter than the tables (the plain walk).
 * Every query is also compared with every 1- and 2-edit variant of it that the random
 * generator makes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bruteforce.h"
#include "common/buf.h"
#include "compiler/compiler.h"
#include "compiler/format.h"
#include "compiler/normalize.h"
#include "compiler/typo.h"
#include "search/artifact.h"
#include "search/internal.h"
#include "typocheck.h"

/* The texts the queries below are edits of, then filler: every 2-letter start and
 * several 3-letter ones, so that the two-edit neighbourhood of each query's start is
 * full of keys. */
static const char *const fixed[] = {
    "Manocalzati",
    "Manocalzata",
    "abcdefghijkl",
    "abcdefgh",
    "Łódź Kaliska",
    "Łódź Fabryczna",
    "react native custom markdown",
    "react native pusher",
    "sotorassa",
    "Zürich Strasse",
    "ab",
    /* A trie node (more than 8 keys) below which no 'c' follows: the swap in "ech rpc
     * serv" must get past row L + 1 of the capped walk (cap_row). */
    "ech mcp server",
    "ech mcp a1",
    "ech mcp a2",
    "ech mcp a3",
    "ech mcp a4",
    "ech mcp a5",
    "ech mcp a6",
    "ech mcp a7",
    "ech mcp a8",
    "ech mcp a9",
    "ech mcp b1",
    "ech mcp b2",
};

typedef struct {
  sg_compile_item *items;
  char **strs;
  size_t n, ns;
} list;

static char *keep(list *l, char *s) {
  l->strs[l->ns++] = s;
  return s;
}

static void build(list *l) {
  size_t cap = 4096;
  l->items = calloc(cap, sizeof *l->items);
  l->strs = calloc(3 * cap, sizeof *l->strs);
  l->n = l->ns = 0;
  uint64_t st = 42;
  for (size_t i = 0; i < sizeof fixed / sizeof *fixed + 2600; i++) {
    char buf[64];
    if (i < sizeof fixed / sizeof *fixed) {
      snprintf(buf, sizeof buf, "%s", fixed[i]);
    } else {
      /* Filler: a first letter among a few (dense subtrees), then random letters. */
      static const char first[] = "amrsz";
      size_t len = 4 + (st >> 33) % 9;
      buf[0] = first[(st >> 20) % 5];
      for (size_t c = 1; c < len; c++) {
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        buf[c] = (char)('a' + (st >> 40) % 26);
        if (c == 6 && (st >> 50) % 4 == 0) buf[c] = ' ';
      }
      buf[len] = '\0';
      st = st * 6364136223846793005ull + 1442695040888963407ull;
    }
    char id[32];
    snprintf(id, sizeof id, "itm_%05zu", i);
    sg_compile_item *it = &l->items[l->n++];
    it->id = keep(l, strdup(id));
    it->value = keep(l, strdup(buf));
    it->display_value = it->value;
    it->rank = (int64_t)(i % 7);
  }
}

static void release(list *l) {
  for (size_t i = 0; i < l->ns; i++) free(l->strs[i]);
  free(l->strs);
  free(l->items);
}

static int check(const sg_artifact *art, const sgt_bf *bf, const list *l, const char *q,
                 sgt_typo_stats *stats) {
  char nq[256];
  long nl = sg_normalize_into(q, strlen(q), nq, sizeof nq);
  assert_true(nl > 0);
  return sgt_check_typo(art, 0, bf, l->items, nq, (size_t)nl, SG_TYPO_MAX_K, stats);
}

/* The list of build() compiled with leave_out into *out (initialised here). */
static void compile_list(list *l, unsigned leave_out, sg_buf *out) {
  build(l);
  const char *const locs[] = {"en"};
  sg_compile_opts opts = {"en", locs, 1, 0};
  sg_buf_init(out, 0);
  assert_int_equal(sg_compile_leaving_out(l->items, l->n, &opts, leave_out, out), 0);
}

/* The list of build() compiled with leave_out into *out, opened. */
static sg_artifact *open_list(list *l, unsigned leave_out, sg_buf *out) {
  compile_list(l, leave_out, out);
  sg_artifact *art;
  assert_int_equal(sg_artifact_open_mem(out->data, out->len, &art), 0);
  return art;
}

/* The cases below on the list compiled with leave_out (compiler.h): 0 searches through
 * the skip tables, SG_LEAVE_OUT_SKIP takes the plain walk (the reference `make bench`
 * measures the tables against); both must give the brute force's answers. Returns the
 * artifact's size. */
static size_t run_cases(unsigned leave_out) {
  list l;
  sg_buf out;
  sg_artifact *art = open_list(&l, leave_out, &out);
  sgt_bf *bf = sgt_bf_new(l.items, l.n, "en");
  assert_non_null(bf);
  /* Each with the item it must find (at 2 edits) and why. */
  static const struct {
    const char *q, *want;
  } cases[] = {
      {"msnoaclzat", "Manocalzati"},    /* table 0: a substitution, then a swap across row 5 */
      {"mxnocalzati", "Manocalzati"},   /* table 0: one edit before row 5, one after */
      {"mxyocalzati", "Manocalzati"},   /* table 0: both edits before row 5 (straight) */
      {"maocclzati", "Manocalzati"},    /* table 0: delete and insert around row 5 */
      {"abxdfeghij", "abcdefghijkl"},   /* table 0: substitution, swap of t[5] and t[6] */
      {"abxdfegh", "abcdefgh"},         /* table 1 (8): substitution, swap across row 4 */
      {"axydefgh", "abcdefgh"},         /* table 1 (8): both edits before row 4 */
      {"sotoraxsa", "sotorassa"},       /* table 1 (9) */
      {"łdóź kaliska", "Łódź Kaliska"}, /* heads too long for 8 bytes: the stored key */
      {"łxdź fabryczna", "Łódź Fabryczna"},
      {"react native ustom makrd", "react native custom markdown"},
      {"zürihc strasse", "Zürich Strasse"},
      {"abdcefg", "abcdefgh"}, /* 7 code points: no table, the plain walk */
      /* A substitution before row 5, then a swap across row 6 from a cell of 1. */
      {"ech rpc serv", "ech mcp server"},
  };
  sgt_typo_stats stats = {0};
  uint64_t st = 7;
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    assert_int_equal(check(art, bf, &l, cases[c].q, &stats), 0);
    /* The brute force agrees with the artifact; also make sure the case tests what it
     * says: the item it names is among the answers. */
    char nq[256];
    long nl = sg_normalize_into(cases[c].q, strlen(cases[c].q), nq, sizeof nq);
    sg_query_result r;
    sg_artifact_query_k(art, 0, nq, (size_t)nl, SG_TYPO_MAX_K, &r);
    int found = 0;
    for (size_t i = 0; i < r.n; i++) {
      char dv[256];
      long dl = sg_fragment_display_value(&r.items[i], dv, sizeof dv);
      if (dl > 0 && strcmp(dv, cases[c].want) == 0) found = 1;
    }
    if (!found) fail_msg("query [%s] did not find %s", cases[c].q, cases[c].want);
    /* Random 1- and 2-edit variants of the wanted text, of the same lengths. */
    char nt[256];
    long tl = sg_normalize_into(cases[c].want, strlen(cases[c].want), nt, sizeof nt);
    for (int v = 0; v < 40; v++) {
      char vq[256];
      size_t vl = sgt_random_edits(nt, (size_t)tl, &st, vq, sizeof vq);
      /* The variant and its prefixes down to three code points shorter (on code point
       * boundaries), so each table's shortest queries are met too. */
      for (size_t cut = vl, dropped = 0; cut > 0 && dropped <= 3; cut--) {
        if (cut < vl && ((unsigned char)vq[cut] & 0xC0) == 0x80) continue;
        if (cut < vl) dropped++;
        assert_int_equal(sgt_check_typo(art, 0, bf, l.items, vq, cut, SG_TYPO_MAX_K, &stats), 0);
      }
    }
  }
  fprintf(stderr, "skip tables %s: %zu queries compared (%zu with matches, %zu items with edits)\n",
          leave_out ? "left out" : "in", stats.queries, stats.nonempty, stats.fuzzy_items);
  size_t bytes = out.len;
  sgt_bf_free(bf);
  sg_artifact_close(art);
  sg_buf_free(&out);
  release(&l);
  return bytes;
}

static void test_skip_tables_against_brute_force(void **state) {
  (void)state;
  run_cases(0);
}

/* Without the tables (`suggestd compile --without-skip-tables`) every pass takes the plain
 * walk: the same answers, and the artifact is smaller by the tables' records. */
static void test_without_skip_tables_the_same_answers(void **state) {
  (void)state;
  size_t without = run_cases(SG_LEAVE_OUT_SKIP);
  list l;
  sg_buf with;
  compile_list(&l, 0, &with);
  assert_true(without + 100 * SG__SKIP_SIZE < with.len);
  sg_buf_free(&with);
  release(&l);
}

/* The bytes of the first d code points of NUL-terminated s, or 0 when it has fewer. */
static size_t head_bytes(const char *s, size_t d) {
  size_t b = 0;
  for (size_t c = 0; c < d; c++) {
    if (!s[b]) return 0;
    uint32_t cp;
    b += sg__utf8_next(s + b, &cp);
  }
  return b;
}

/* The text of key k. */
static const char *key_at(const locale_view *v, uint64_t k) {
  return v->text + sg__rd32(v->keys + k * SG__KEY_SIZE);
}

/* Every format-6 skip record names exactly its run (format.h): the keys [lo, hi) all
 * share their first L + G code points, the keys on either side do not, a run of more
 * than SG__TRIE_MIN keys is named by the trie node of that prefix, a shorter one by its
 * first key and count; both forms occur in both tables of this list. */
static void test_skip_records_name_their_runs(void **state) {
  (void)state;
  list l;
  sg_buf out;
  sg_artifact *art = open_list(&l, 0, &out);
  const locale_view *v = &art->loc[0];
  assert_int_equal(v->skip_size, SG__SKIP_SIZE);
  for (unsigned t = 0; t < SG__SKIP_TABLES; t++) {
    const size_t D = sg__skip_l[t] + sg__skip_g[t];
    size_t nodes = 0, shorts = 0, covered = 0;
    for (uint64_t i = 0; i < v->n_skip[t]; i++) {
      const unsigned char *r = v->skip[t] + i * SG__SKIP_SIZE;
      uint32_t lo = 0, hi = 0, x = sg__skip_run(v, r, &lo, &hi);
      if (x != UINT32_MAX) sg__trie_span(v, x, &lo, &hi);
      assert_true(lo < hi && hi <= v->n_keys);
      const char *first = key_at(v, lo);
      size_t b = head_bytes(first, D);
      assert_true(b > 0);
      for (uint32_t k = lo; k <= hi && k < v->n_keys; k++) {
        bool same = strncmp(key_at(v, k), first, b) == 0;
        assert_true(k < hi ? same : !same); /* the run, and the key after it is not */
      }
      if (lo > 0) assert_true(strncmp(key_at(v, lo - 1), first, b) != 0);
      if (x != UINT32_MAX) {
        nodes++;
        assert_true(hi - lo > SG__TRIE_MIN);
        uint32_t last;
        const char *p = first + head_bytes(first, D - 1);
        sg__utf8_next(p, &last);
        assert_int_equal(sg__trie_rd(v, x, SG__T_CP), last);
      } else {
        shorts++;
        assert_true(hi - lo <= SG__TRIE_MIN);
      }
      covered += hi - lo;
    }
    fprintf(stderr, "table %u: %zu node records, %zu short runs, %zu keys\n", t, nodes, shorts,
            covered);
    assert_true(nodes > 0 && shorts > 0);
  }
  sg_artifact_close(art);
  sg_buf_free(&out);
  release(&l);
}

/* Open refuses a skip record that names the trie's root or a node past the trie, or a
 * short run past the keys; the unchanged artifact opens. */
static void test_open_checks_skip_records(void **state) {
  (void)state;
  list l;
  sg_buf out;
  sg_artifact *art = open_list(&l, 0, &out);
  const locale_view *v = &art->loc[0];
  size_t node_at = 0, short_at = 0; /* file offsets of one record's run of each kind */
  uint64_t n_trie = v->n_trie, n_keys = v->n_keys;
  for (uint64_t i = 0; i < v->n_skip[0]; i++) {
    const unsigned char *r = v->skip[0] + i * SG__SKIP_SIZE;
    size_t at = (size_t)(r + 8 - (const unsigned char *)out.data);
    if (sg__rd32(r + 8) & SG__SKIP_NODE)
      node_at = at;
    else
      short_at = at;
  }
  sg_artifact_close(art);
  assert_true(node_at && short_at);
  const uint32_t bad[][2] = {
      {(uint32_t)node_at, SG__SKIP_NODE},                                    /* the root */
      {(uint32_t)node_at, SG__SKIP_NODE | (uint32_t)n_trie},                 /* past the trie */
      {(uint32_t)short_at, 7u << SG__SKIP_LO_BITS | (uint32_t)(n_keys - 1)}, /* past the keys */
  };
  for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
    unsigned char keep[4];
    memcpy(keep, out.data + bad[b][0], 4);
    sg__wr32((unsigned char *)out.data + bad[b][0], bad[b][1]);
    assert_int_equal(sg_artifact_open_mem(out.data, out.len, &art), -1);
    memcpy(out.data + bad[b][0], keep, 4);
  }
  assert_int_equal(sg_artifact_open_mem(out.data, out.len, &art), 0);
  sg_artifact_close(art);
  sg_buf_free(&out);
  release(&l);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_skip_tables_against_brute_force),
      cmocka_unit_test(test_without_skip_tables_the_same_answers),
      cmocka_unit_test(test_skip_records_name_their_runs),
      cmocka_unit_test(test_open_checks_skip_records),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
