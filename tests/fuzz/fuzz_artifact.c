/* libFuzzer target: arbitrary bytes opened as an artifact must be rejected, or answer
 * queries without reading out of bounds. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/artifact.h"

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
    }
    sum += (unsigned)sg_artifact_item_count(a);
    g_sink = sum;
    sg_artifact_close(a);
  }
  free(cp);
  return 0;
}
