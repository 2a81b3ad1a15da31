/* libFuzzer target: normalisation never crashes, both entry points agree, and the
 * output has the documented shape (valid UTF-8, single inner spaces, trimmed). */
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <stdint.h>

#include "common/util.h"
#include "compiler/normalize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096) return 0;
  const char *in = (const char *)data;
  static char out[4096 * 18 * 4 + 1];
  long n = sg_normalize_into(in, size, out, sizeof out);
  char small[8];
  long s = sg_normalize_into(in, size, small, sizeof small);
  char *h = NULL;
  size_t hl = 0;
  int r = sg_normalize(in, size, &h, &hl);
  if ((n == -1) != (r == -1)) abort();
  if (n >= 0) {
    if ((size_t)n != hl || memcmp(out, h, hl) != 0) abort();
    if (s >= 0 && (s != n || memcmp(small, out, (size_t)s) != 0)) abort();
    if (!sg_utf8_valid(out, (size_t)n)) abort();
    if (n > 0 && (out[0] == ' ' || out[n - 1] == ' ')) abort();
    if (memmem(out, (size_t)n, "  ", 2)) abort();
  } else if (s != -1) {
    abort();
  }
  free(h);
  return 0;
}
