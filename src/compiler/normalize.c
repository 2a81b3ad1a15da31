/*
 * Text normalisation (DESIGN.md section 3), shared by the compiler and the runtime.
 *
 * Pipeline: utf8proc_decompose with COMPAT | CASEFOLD | STRIPMARK | DECOMPOSE gives the
 * compatibility decomposition of the case-folded text without marks (canonically
 * ordered); utf8proc_normalize_utf32 with COMPOSE then recomposes it, which together is
 * NFKC of the folded, mark-free text. Finally every run of code points whose general
 * category is not a letter (L*) or a number (N*) becomes one space and the ends are
 * trimmed.
 *
 * The runtime calls sg_normalize_into once per query, so it works in a stack buffer of
 * code points and only falls back to the heap for input whose decomposition is longer
 * than SG_NORMALIZE_STACK_CP code points (far above the 255-character query limit).
 * Pure ASCII input, which is most of real traffic and most item text, takes a fast path
 * that gives the same bytes without calling utf8proc at all.
 */
#include "compiler/normalize.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#define DECOMPOSE_OPTS                                                                             \
  (UTF8PROC_STABLE | UTF8PROC_COMPAT | UTF8PROC_CASEFOLD | UTF8PROC_STRIPMARK | UTF8PROC_DECOMPOSE)
#define COMPOSE_OPTS (UTF8PROC_STABLE | UTF8PROC_COMPAT | UTF8PROC_COMPOSE)

/* ASCII: NFKC and marks do not apply, folding is A-Z -> a-z, and the letters and
 * numbers are exactly [a-z0-9] after folding. */
static bool ascii_alnum(unsigned char c, unsigned char *lower) {
  if (c >= 'A' && c <= 'Z') {
    *lower = (unsigned char)(c + 32);
    return true;
  }
  if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
    *lower = c;
    return true;
  }
  return false;
}

static long normalize_ascii(const char *in, size_t len, char *out, size_t cap) {
  size_t o = 0;
  bool pending_space = false;
  for (size_t i = 0; i < len; i++) {
    unsigned char c;
    if (!ascii_alnum((unsigned char)in[i], &c)) {
      pending_space = o > 0;
      continue;
    }
    if (pending_space) {
      if (o >= cap) return -2;
      out[o++] = ' ';
      pending_space = false;
    }
    if (o >= cap) return -2;
    out[o++] = (char)c;
  }
  if (o >= cap) return -2; /* room for the terminating NUL */
  out[o] = '\0';
  return (long)o;
}

static bool is_letter_or_number(utf8proc_int32_t cp) {
  switch (utf8proc_category(cp)) {
  case UTF8PROC_CATEGORY_LU:
  case UTF8PROC_CATEGORY_LL:
  case UTF8PROC_CATEGORY_LT:
  case UTF8PROC_CATEGORY_LM:
  case UTF8PROC_CATEGORY_LO:
  case UTF8PROC_CATEGORY_ND:
  case UTF8PROC_CATEGORY_NL:
  case UTF8PROC_CATEGORY_NO: return true;
  default: return false;
  }
}

/* Encodes the recomposed code points cp[0..n) with the space-run rule into out. */
static long emit(const utf8proc_int32_t *cp, size_t n, char *out, size_t cap) {
  size_t o = 0;
  bool pending_space = false;
  for (size_t i = 0; i < n; i++) {
    if (!is_letter_or_number(cp[i])) {
      pending_space = o > 0;
      continue;
    }
    utf8proc_uint8_t enc[4];
    utf8proc_ssize_t el = utf8proc_encode_char(cp[i], enc);
    if (el <= 0) return -1;
    if (pending_space) {
      if (o >= cap) return -2;
      out[o++] = ' ';
      pending_space = false;
    }
    if ((size_t)el > cap - o) return -2;
    memcpy(out + o, enc, (size_t)el);
    o += (size_t)el;
  }
  if (o >= cap) return -2;
  out[o] = '\0';
  return (long)o;
}

static bool all_ascii(const char *in, size_t len) {
  for (size_t i = 0; i < len; i++)
    if ((unsigned char)in[i] >= 0x80) return false;
  return true;
}

/* Decomposes in into *buf (capacity *bufcap code points), switching to a heap buffer
 * (stored in *heap, caller frees) when the stack one is too small. Returns the number
 * of code points or -1 on invalid UTF-8 / OOM. */
static long decompose(const char *in, size_t len, utf8proc_int32_t **buf, size_t *bufcap,
                      utf8proc_int32_t **heap) {
  if (len > (size_t)PTRDIFF_MAX / 8) return -1;
  utf8proc_ssize_t n = utf8proc_decompose((const utf8proc_uint8_t *)in, (utf8proc_ssize_t)len, *buf,
                                          (utf8proc_ssize_t)*bufcap, DECOMPOSE_OPTS);
  if (n < 0) return -1;
  if ((size_t)n > *bufcap) {
    utf8proc_int32_t *h = malloc((size_t)n * sizeof *h);
    if (!h) return -1;
    utf8proc_ssize_t m = utf8proc_decompose((const utf8proc_uint8_t *)in, (utf8proc_ssize_t)len, h,
                                            n, DECOMPOSE_OPTS);
    if (m != n) {
      free(h);
      return -1;
    }
    *heap = h;
    *buf = h;
    *bufcap = (size_t)n;
  }
  utf8proc_ssize_t r = utf8proc_normalize_utf32(*buf, n, COMPOSE_OPTS);
  if (r < 0) return -1;
  return (long)r;
}

long sg_normalize_into(const char *in, size_t len, char *out, size_t cap) {
  if (all_ascii(in, len)) return normalize_ascii(in, len, out, cap);
  utf8proc_int32_t stack[SG_NORMALIZE_STACK_CP];
  utf8proc_int32_t *buf = stack, *heap = NULL;
  size_t bufcap = SG_NORMALIZE_STACK_CP;
  long n = decompose(in, len, &buf, &bufcap, &heap);
  long r = n < 0 ? -1 : emit(buf, (size_t)n, out, cap);
  free(heap);
  return r;
}

int sg_normalize(const char *in, size_t len, char **out, size_t *outlen) {
  if (all_ascii(in, len)) {
    char *o = malloc(len + 1);
    if (!o) return -1;
    long r = normalize_ascii(in, len, o, len + 1);
    if (r < 0) {
      free(o);
      return -1;
    }
    *out = o;
    *outlen = (size_t)r;
    return 0;
  }
  utf8proc_int32_t stack[SG_NORMALIZE_STACK_CP];
  utf8proc_int32_t *buf = stack, *heap = NULL;
  size_t bufcap = SG_NORMALIZE_STACK_CP;
  long n = decompose(in, len, &buf, &bufcap, &heap);
  if (n < 0) {
    free(heap);
    return -1;
  }
  /* Each code point encodes to at most 4 bytes, and the spaces only replace others. */
  size_t cap = (size_t)n * 4 + 1;
  char *o = malloc(cap);
  long r = o ? emit(buf, (size_t)n, o, cap) : -1;
  free(heap);
  if (r < 0) {
    free(o);
    return -1;
  }
  *out = o;
  *outlen = (size_t)r;
  return 0;
}
