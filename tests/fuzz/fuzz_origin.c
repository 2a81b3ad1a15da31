/*
 * libFuzzer target: the small parsers of request headers shared by both listeners — the
 * Origin canonicaliser (allow-list entries and request Origins) and the Bearer credential
 * of Authorization. Checks: canonical forms are fixed points, lower case, never longer
 * than the input, and a canonical request origin always matches itself.
 */
#include <ctype.h>
#include <stdint.h>
#include <string.h>

#include "common/bearer.h"
#include "common/origin.h"
#include "runtime/rt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char in[SG_ORIGIN_MAX + 64];
  if (size >= sizeof in) return 0;
  memcpy(in, data, size);
  in[size] = '\0';
  for (int wild = 0; wild < 2; wild++) {
    char out[SG_ORIGIN_MAX + 1], again[SG_ORIGIN_MAX + 1];
    const char *why = NULL;
    long n = sg_origin_canon(in, size, wild, out, sizeof out, &why);
    if (n < 0) {
      if (!why) __builtin_trap();
      continue;
    }
    if ((size_t)n != strlen(out) || (size_t)n > size) __builtin_trap();
    for (long i = 0; i < n; i++)
      if (isupper((unsigned char)out[i])) __builtin_trap();
    if (sg_origin_canon(out, (size_t)n, wild, again, sizeof again, NULL) != n ||
        strcmp(out, again) != 0)
      __builtin_trap();
    char *entries[1] = {out};
    if (!wild && !sg__origin_allowed(entries, 1, in, size)) __builtin_trap();
  }
  const char *tok;
  size_t len;
  if (sg_bearer_token(in, &tok, &len)) {
    if (len == 0 || tok < in + 7 || tok + len > in + size) __builtin_trap();
    for (size_t i = 0; i < len; i++)
      if (tok[i] == ' ' || (unsigned char)tok[i] < 0x21) __builtin_trap();
  }
  return 0;
}
