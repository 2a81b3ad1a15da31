/* libFuzzer target: synonym aliases (docs/DESIGN.md §3.4) compiled into the artifact
 * against the brute force's (tests/unit/search/bruteforce.c, sgt_bf_add_synonyms), through
 * the exact and the typo search, on tiny random lists. The first 8 bytes seed the list and
 * its sets (randlist.c's vocabulary, so phrases occur in the texts), the next picks the
 * list size, the number of sets and the typo budget, the rest is the query (normalised
 * first, as the runtime does). Any difference aborts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/search/bruteforce.c"
#include "../unit/search/randlist.c"
#include "../unit/search/typocheck.c"
#include "compiler/normalize.h"
#include "search/artifact.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 10 || size > 200) return 0;
  uint64_t seed;
  memcpy(&seed, data, 8);
  size_t n = 1 + data[8] % 24;
  unsigned k = (data[8] >> 6) % 3;
  size_t n_sets = 1 + data[9] % 8;
  char nq[4096];
  long nl = sg_normalize_into((const char *)data + 10, size - 10, nq, sizeof nq);
  if (nl < 0) return 0;
  sgt_list l;
  sgt_list_gen(&l, n, seed);
  sg_synonym_set sets[8];
  const char *phrases[8][4];
  uint64_t st = seed ^ 0x5a5a;
  for (size_t i = 0; i < n_sets; i++) {
    int one_way = sgt_rand_below(&st, 3) == 0;
    size_t np = (one_way ? 1 : 2) + sgt_rand_below(&st, 3);
    for (size_t j = 0; j < np; j++) phrases[i][j] = sgt_list_text(&l, &st, 2);
    sets[i] = (sg_synonym_set){one_way ? sgt_list_text(&l, &st, 2) : NULL, phrases[i], np};
  }
  sg_compile_opts opts = {"en", sgt_locales, 3, 0};
  sg_buf out;
  sg_buf_init(&out, 0);
  if (sg_compile_synonyms(l.items, l.n, &opts, sets, n_sets, &out) != 0) abort();
  sg_artifact *art;
  if (sg_artifact_open_mem(out.data, out.len, &art) != 0) abort();
  sgt_typo_stats ts = {0};
  for (int loc = 0; loc < 3; loc++) {
    sgt_bf *bf = sgt_bf_new(l.items, l.n, sgt_locales[loc]);
    if (!bf || sgt_bf_add_synonyms(bf, sets, n_sets)) abort();
    if (sgt_check_typo(art, loc, bf, l.items, nq, (size_t)nl, k, &ts)) abort();
    sgt_bf_free(bf);
  }
  sg_artifact_close(art);
  sg_buf_free(&out);
  sgt_list_free(&l);
  return 0;
}
