/* libFuzzer target: normalisation never crashes, all entry points agree, and the
 * output has the documented shape (valid UTF-8, single inner spaces, trimmed). The offset
 * map (sg_normalize_map) gives the same text, one pair per code point, each a non-empty
 * range inside the input's UTF-16 length. */
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
  static uint32_t map[2 * (4096 * 18 + 1)];
  size_t ncp = 0;
  static char mout[4096 * 18 * 4 + 1];
  long m = sg_normalize_map(in, size, mout, sizeof mout, map, 4096 * 18 + 1, &ncp);
  if ((m == -1) != (n == -1)) abort();
  if (m >= 0) {
    if (m != n || memcmp(mout, out, (size_t)n) != 0) abort();
    size_t cps = 0, units = 0;
    for (long i = 0; i < n; i++) cps += ((unsigned char)out[i] & 0xC0) != 0x80;
    for (size_t i = 0; i < size; i++) {
      unsigned char c = data[i];
      if ((c & 0xC0) != 0x80) units += c >= 0xF0 ? 2 : 1;
    }
    if (cps != ncp) abort();
    for (size_t k = 0; k < ncp; k++)
      if (map[2 * k] >= map[2 * k + 1] || map[2 * k + 1] > units) abort();
  }
  free(h);
  return 0;
}
