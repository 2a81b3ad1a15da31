/* libFuzzer target: the filter by ancestor (sg_artifact_within + sg_artifact_query_within,
 * docs/DESIGN.md §3.5) against the brute force restricted to the ancestor's descendants
 * (tests/unit/search/bruteforce.c) on tiny random lists with random hierarchies.
 *
 * Input: 8 bytes seed the list (randlist.c: aliases, locales, word starts, accents, CJK);
 * byte 8 picks the size and the typo budget; byte 9 the hierarchy (how often an item
 * gets a parent, and whether the subtree index SG__EXT_WSUB covers every subtree holding
 * a key or none of the small ones); byte 10 the ancestor (an item of the list, or an id
 * it does not hold); the rest is the query, normalised first as the runtime does (one
 * starting with "1" is replaced by words of one of the list's texts shuffled or run
 * together: tiers 3 and 4). Any difference aborts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/search/bruteforce.c"
#include "../unit/search/randlist.c"
#include "../unit/search/typocheck.c"
#include "compiler/format.h"
#include "compiler/normalize.h"
#include "search/artifact.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 11 || size > 200) return 0;
  uint64_t seed;
  memcpy(&seed, data, 8);
  size_t n = 1 + data[8] % 40;
  unsigned k = (data[8] >> 6) % 3;
  char nq[4096];
  long nl = sg_normalize_into((const char *)data + 11, size - 11, nq, sizeof nq);
  if (nl < 0) return 0;
  sgt_list l;
  sgt_list_gen(&l, n, seed);
  /* A random forest in place of randlist's: each item after the first gets a parent
   * among the items before it (so no cycle) one time in 1 + data[9] % 4, within the
   * depth limit; chains onto the item just before half the time, to go deep. */
  uint64_t st = seed ^ 0x77697468696eull;
  size_t *depth = calloc(l.n, sizeof *depth);
  if (!depth) abort();
  unsigned every = 1 + (data[9] & 3);
  for (size_t i = 0; i < l.n; i++) {
    l.items[i].parent_id = NULL;
    depth[i] = 1;
    if (i == 0 || sgt_rand_below(&st, every) != 0) continue;
    size_t p = sgt_rand_below(&st, 2) ? i - 1 : sgt_rand_below(&st, i);
    if (depth[p] < SG_MAX_HIERARCHY_DEPTH) {
      l.items[i].parent_id = l.items[p].id;
      depth[i] = depth[p] + 1;
    }
  }
  free(depth);
  if ((nl = sgt_words_from_input(&l, seed, nq, nl, sizeof nq)) < 0) {
    sgt_list_free(&l);
    return 0;
  }
  const char *within = data[10] == 0xFF ? "itm_absentAbsentAbsent000" : l.items[data[10] % l.n].id;
  sg_compile_opts opts = {"en", sgt_locales, 3, 0};
  sg_buf out;
  sg_buf_init(&out, 0);
  sg__wsub_min_refs = data[9] & 4 ? SG__WSUB_MIN_REFS : 1;
  int rc = sg_compile(l.items, l.n, &opts, &out);
  sg__wsub_min_refs = SG__WSUB_MIN_REFS;
  if (rc != 0) abort();
  sg_artifact *art;
  if (sg_artifact_open_mem(out.data, out.len, &art) != 0) abort();
  sgt_typo_stats ts = {0};
  for (int loc = 0; loc < 3; loc++) {
    sgt_bf *bf = sgt_bf_new(l.items, l.n, sgt_locales[loc]);
    if (!bf) abort();
    sgt_bf_set_within(bf, within);
    if (sgt_check_within(art, loc, bf, l.items, nq, (size_t)nl, k, within, &ts)) abort();
    sgt_bf_free(bf);
  }
  sg_artifact_close(art);
  sg_buf_free(&out);
  sgt_list_free(&l);
  return 0;
}
