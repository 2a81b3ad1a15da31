/*
 * libFuzzer target: the percent-decoder both listeners use for paths and query strings
 * (src/http/common/percent.c). Checks, under every rule: no write past the buffer (the
 * buffer is exactly the input's size, so ASan sees an overrun); a success is valid UTF-8
 * without NUL and never longer than the input; decoding in place gives the same bytes;
 * re-encoding every byte as %XX (a '/' as itself under the path rule, which refuses %2F)
 * decodes back to the same result; and a buffer one byte short of the result is refused.
 * Under the path rule a success also has exactly as many '/' as the input.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "http/common/percent.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096) return 0;
  const char *in = (const char *)data;
  char *out = malloc(size ? size : 1), *same = malloc(size ? size : 1);
  char *enc = malloc(size * 3 + 1), *back = malloc(size ? size : 1);
  if (!out || !same || !enc || !back) abort();
  const sg_http_pct_rule rules[] = {SG_HTTP_PCT_PATH, SG_HTTP_PCT_QUERY, SG_HTTP_PCT_CHECKED};
  for (size_t r = 0; r < sizeof rules / sizeof rules[0]; r++) {
    sg_http_pct_rule rule = rules[r];
    size_t n = 0, m = 0;
    sg_err e = sg_http_percent_decode(in, size, rule, out, size, &n);
    memcpy(same, in, size);
    sg_err e2 = sg_http_percent_decode(same, size, rule, same, size, &m);
    if (e != e2) __builtin_trap();
    if (e != SG_E_OK) {
      if (e != SG_E_INVALID_REQUEST) __builtin_trap();
      continue;
    }
    if (n > size || m != n || memcmp(out, same, n) != 0) __builtin_trap();
    if (!sg_utf8_valid(out, n) || memchr(out, 0, n)) __builtin_trap();
    if (rule == SG_HTTP_PCT_PATH) {
      size_t si = 0, so = 0;
      for (size_t i = 0; i < size; i++) si += in[i] == '/';
      for (size_t i = 0; i < n; i++) so += out[i] == '/';
      if (si != so) __builtin_trap(); /* no escape added a separator */
    }
    size_t el = 0;
    for (size_t i = 0; i < n; i++) {
      if (rule == SG_HTTP_PCT_PATH && out[i] == '/')
        enc[el++] = '/';
      else
        el += (size_t)snprintf(enc + el, 4, "%%%02X", (unsigned char)out[i]);
    }
    size_t k = 0;
    if (sg_http_percent_decode(enc, el, rule, back, n, &k) != SG_E_OK || k != n ||
        memcmp(back, out, n) != 0)
      __builtin_trap();
    if (n && sg_http_percent_decode(in, size, rule, back, n - 1, &k) == SG_E_OK) __builtin_trap();
  }
  free(out);
  free(same);
  free(enc);
  free(back);
  return 0;
}
