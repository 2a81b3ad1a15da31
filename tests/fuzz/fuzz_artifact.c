/* libFuzzer target: arbitrary bytes opened as an artifact must be rejected, or answer
 * queries, typo-tolerant ones (the trie walk), words in any order and run together (the
 * extension sections of tiers 3 and 4) and their highlights included, and queries filtered
 * by ancestor (the subtree index too), without reading out of bounds. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/typo.h"
#include "search/artifact.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every byte the reader hands out is summed here so ASan checks it. */
static volatile unsigned g_sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* An exact-size copy so ASan catches any read past the end. */
  unsigned char *cp = malloc(size ? size : 1);
  if (!cp) return 0;
  if (size) memcpy(cp, data, size);
  sg_artifact *a;
  if (sg_artifact_open_mem(cp, size, &a) == 0) {
    static const char *const qs[] = {"", "a", "s", "sa", "san", "b", "x", "new y", "東"};
    static const char *const locs[] = {NULL, "en", "fr-CA", "de-ch", "zz"};
    unsigned sum = 0;
    for (size_t l = 0; l < sizeof locs / sizeof *locs; l++) {
      const char *tag;
      int loc = sg_artifact_resolve_locale(a, locs[l], &tag);
      sum += (unsigned char)tag[0];
      for (size_t i = 0; i < sizeof qs / sizeof *qs; i++) {
        sg_query_result r;
        sg_artifact_query(a, loc, qs[i], strlen(qs[i]), &r);
        for (size_t k = 0; k < r.n; k++)
          for (uint32_t b = 0; b < r.items[k].len; b++) sum += (unsigned char)r.items[k].json[b];
      }
      static const char *const typos[] = {"sna",     "andora",    "nwe yrok", "escladesx",
                                          "東亰",    "sa",        "york new", "la vella andorra",
                                          "newyork", "andorrala", "e d c b a"};
      for (size_t i = 0; i < sizeof typos / sizeof *typos; i++)
        for (unsigned k = 1; k <= 2; k++) {
          sg_query_result r;
          sg_artifact_query_k(a, loc, typos[i], strlen(typos[i]), k, &r);
          for (size_t j = 0; j < r.n; j++) {
            char dv[1024];
            uint32_t h[16];
            long dl = sg_fragment_display_value(&r.items[j], dv, sizeof dv);
            long nh = dl < 0 ? 0
                             : sg_typo_highlight(dv, (size_t)dl, typos[i], strlen(typos[i]),
                                                 r.items[j].edits, r.items[j].tier, h, 8);
            sum += r.items[j].edits + (unsigned)nh;
            for (long p = 0; p < 2 * nh; p++) sum += h[p];
          }
        }
    }
    /* The filter by ancestor: the seeds' parents (the root of tree.jsonl has a subtree
     * large enough for SG__EXT_WSUB) and an id no seed holds. */
    static const char *const anc[] = {"itm_region_all", "itm_city_3041563", "itm_city_3039154",
                                      "itm_absent"};
    static const char *const wq[] = {"",        "s",          "sant",   "andorra",
                                     "la vela", "escaldes x", "newyork"};
    for (size_t i = 0; i < sizeof anc / sizeof *anc; i++) {
      sg_within w;
      if (sg_artifact_within(a, anc[i], strlen(anc[i]), &w) != 0) continue;
      for (size_t j = 0; j < sizeof wq / sizeof *wq; j++)
        for (unsigned k = 0; k <= 2; k++) {
          sg_query_result r;
          sg_artifact_query_within(a, 0, wq[j], strlen(wq[j]), k, &w, &r);
          for (size_t x = 0; x < r.n; x++)
            for (uint32_t b = 0; b < r.items[x].len; b++) sum += (unsigned char)r.items[x].json[b];
        }
    }
    sum += (unsigned)sg_artifact_item_count(a);
    g_sink = sum;
    sg_artifact_close(a);
  }
  free(cp);
  return 0;
}
