/* libFuzzer target: the typo search (sg_artifact_query_k), words in any order and run
 * together (tiers 3 and 4) and the highlight against the brute force of docs/DESIGN.md
 * §3.1–3.3 (tests/unit/search/bruteforce.c) on tiny
 * random lists. The first 8 bytes seed the list (randlist.c: aliases, locales, word
 * starts, accents, CJK), the next picks the size and the budget, the rest is the query
 * (normalised first, as the runtime does). Any difference aborts. */
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
  if (size < 9 || size > 200) return 0;
  uint64_t seed;
  memcpy(&seed, data, 8);
  size_t n = 1 + data[8] % 40;
  unsigned k = (data[8] >> 6) % 3;
  char nq[4096];
  long nl = sg_normalize_into((const char *)data + 9, size - 9, nq, sizeof nq);
  if (nl < 0) return 0;
  sgt_list l;
  sgt_list_gen(&l, n, seed);
  /* A query starting with "1": words of one of the list's texts shuffled or run
   * together (tiers 3 and 4, docs/DESIGN.md §3.3), the rest of the input choosing. */
  if ((nl = sgt_words_from_input(&l, seed, nq, nl, sizeof nq)) < 0) {
    sgt_list_free(&l);
    return 0;
  }
  sg_compile_opts opts = {"en", sgt_locales, 3, 0};
  sg_buf out;
  sg_buf_init(&out, 0);
  if (sg_compile(l.items, l.n, &opts, &out) != 0) abort();
  sg_artifact *art;
  if (sg_artifact_open_mem(out.data, out.len, &art) != 0) abort();
  sgt_typo_stats st = {0};
  for (int loc = 0; loc < 3; loc++) {
    sgt_bf *bf = sgt_bf_new(l.items, l.n, sgt_locales[loc]);
    if (!bf) abort();
    if (sgt_check_typo(art, loc, bf, l.items, nq, (size_t)nl, k, &st)) abort();
    sgt_bf_free(bf);
  }
  sg_artifact_close(art);
  sg_buf_free(&out);
  sgt_list_free(&l);
  return 0;
}
