/*
 * Text normalisation (docs/DESIGN.md §3), shared by the compiler and the runtime.
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

/* ---- the offset map ------------------------------------------------------------------ */

static long map_ascii(const char *in, size_t len, char *out, size_t cap, uint32_t *map,
                      size_t map_cp, size_t *ncp) {
  size_t o = 0, k = 0;
  size_t run_start = 0;
  bool pending_space = false;
  for (size_t i = 0; i < len; i++) {
    unsigned char c;
    if (!ascii_alnum((unsigned char)in[i], &c)) {
      if (!pending_space) run_start = i;
      pending_space = o > 0;
      continue;
    }
    if (pending_space) {
      if (o >= cap || k >= map_cp) return -2;
      out[o++] = ' ';
      map[2 * k] = (uint32_t)run_start;
      map[2 * k + 1] = (uint32_t)i;
      k++;
      pending_space = false;
    }
    if (o >= cap || k >= map_cp) return -2;
    out[o++] = (char)c;
    map[2 * k] = (uint32_t)i;
    map[2 * k + 1] = (uint32_t)i + 1;
    k++;
  }
  if (o >= cap) return -2;
  out[o] = '\0';
  *ncp = k;
  return (long)o;
}

/* Scratch of the mapped normalisation: per input character its UTF-16 offset, per
 * decomposed code point the input characters [lo, hi] it came from, and the composed
 * code points. */
typedef struct {
  uint32_t *off16;         /* n_in + 1 */
  utf8proc_int32_t *dec;   /* decomposed code points */
  uint32_t *lo, *hi;       /* their input characters */
  utf8proc_int32_t *comp;  /* recomposed */
  utf8proc_int32_t *whole; /* the whole-string pipeline, to check against */
} map_scratch;

/* Tags every decomposed code point with its input character, recomposes, and aligns the
 * composed code points with runs of decomposed ones. Fills cps[0..*m) and their input
 * character ranges in lo/hi (reused in place). Returns 0, or -1 when the per-character
 * pipeline does not reproduce the whole-string one (the caller then maps every code
 * point to the whole input). */
static int map_compose(const char *in, size_t len, map_scratch *s, size_t cap_dec, size_t *n_in,
                       size_t *m) {
  const utf8proc_uint8_t *u = (const utf8proc_uint8_t *)in;
  size_t pos = 0, ni = 0, nd = 0;
  uint32_t off = 0;
  while (pos < len) {
    utf8proc_int32_t cp;
    utf8proc_ssize_t r = utf8proc_iterate(u + pos, (utf8proc_ssize_t)(len - pos), &cp);
    if (r <= 0) return -1;
    pos += (size_t)r;
    s->off16[ni] = off;
    off += cp >= 0x10000 ? 2u : 1u;
    utf8proc_int32_t tmp[64];
    int bound = 0;
    utf8proc_ssize_t k = utf8proc_decompose_char(cp, tmp, 64, DECOMPOSE_OPTS, &bound);
    if (k < 0 || k > 64 || (size_t)k > cap_dec - nd) return -1;
    if (k == 0 && nd > 0) s->hi[nd - 1] = (uint32_t)ni; /* a stripped mark joins the last */
    for (utf8proc_ssize_t j = 0; j < k; j++) {
      s->dec[nd] = tmp[j];
      s->lo[nd] = s->hi[nd] = (uint32_t)ni;
      nd++;
    }
    ni++;
  }
  s->off16[ni] = off;
  *n_in = ni;
  /* Canonical ordering, as utf8proc_decompose does it, carrying the tags along. */
  for (size_t p = 0; p + 1 < nd;) {
    int c1 = utf8proc_get_property(s->dec[p])->combining_class;
    int c2 = utf8proc_get_property(s->dec[p + 1])->combining_class;
    if (c1 > c2 && c2 > 0) {
      utf8proc_int32_t t = s->dec[p];
      s->dec[p] = s->dec[p + 1];
      s->dec[p + 1] = t;
      uint32_t a = s->lo[p], b = s->hi[p];
      s->lo[p] = s->lo[p + 1];
      s->hi[p] = s->hi[p + 1];
      s->lo[p + 1] = a;
      s->hi[p + 1] = b;
      if (p > 0) p--;
      continue;
    }
    p++;
  }
  memcpy(s->comp, s->dec, nd * sizeof *s->dec);
  utf8proc_ssize_t mc = utf8proc_normalize_utf32(s->comp, (utf8proc_ssize_t)nd, COMPOSE_OPTS);
  if (mc < 0) return -1;
  /* Align: each composed code point is a run of decomposed ones (composition only joins
   * a starter with what follows it). */
  size_t d = 0;
  for (size_t k = 0; k < (size_t)mc; k++) {
    if (d >= nd) return -1;
    size_t run = 0;
    if (s->dec[d] == s->comp[k]) {
      run = 1;
    } else {
      for (size_t r = 2; r <= 8 && d + r <= nd && !run; r++) {
        utf8proc_int32_t t[8];
        memcpy(t, s->dec + d, r * sizeof *t);
        if (utf8proc_normalize_utf32(t, (utf8proc_ssize_t)r, COMPOSE_OPTS) == 1 &&
            t[0] == s->comp[k])
          run = r;
      }
      if (!run) return -1;
    }
    uint32_t lo = s->lo[d], hi = s->hi[d];
    for (size_t j = d + 1; j < d + run; j++) {
      if (s->lo[j] < lo) lo = s->lo[j];
      if (s->hi[j] > hi) hi = s->hi[j];
    }
    s->lo[k] = lo;
    s->hi[k] = hi;
    d += run;
  }
  if (d != nd) return -1;
  *m = (size_t)mc;
  return 0;
}

long sg_normalize_map(const char *in, size_t len, char *out, size_t cap, uint32_t *map,
                      size_t map_cp, size_t *ncp) {
  if (all_ascii(in, len)) return map_ascii(in, len, out, cap, map, map_cp, ncp);
  /* The reference: the whole-string pipeline. */
  utf8proc_int32_t stack[SG_NORMALIZE_STACK_CP];
  utf8proc_int32_t *buf = stack, *heap = NULL;
  size_t bufcap = SG_NORMALIZE_STACK_CP;
  long n = decompose(in, len, &buf, &bufcap, &heap);
  if (n < 0) {
    free(heap);
    return -1;
  }
  /* Scratch for the tagged pipeline: the decomposition of each character is at most 18
   * code points, but the whole one is already known to be n, so n + 64 bounds it. */
  size_t cap_dec = (size_t)n + 64, cap_in = len + 1;
  enum { STACK_DEC = 512 };
  utf8proc_int32_t s_dec[STACK_DEC], s_comp[STACK_DEC];
  uint32_t s_lo[STACK_DEC], s_hi[STACK_DEC], s_off[STACK_DEC + 1];
  map_scratch s = {s_off, s_dec, s_lo, s_hi, s_comp, buf};
  void *mheap = NULL;
  if (cap_dec > STACK_DEC || cap_in > STACK_DEC + 1) {
    mheap = malloc(cap_in * sizeof(uint32_t) +
                   cap_dec * (2 * sizeof(utf8proc_int32_t) + 2 * sizeof(uint32_t)));
    if (!mheap) {
      free(heap);
      return -1;
    }
    s.off16 = mheap;
    s.dec = (utf8proc_int32_t *)(s.off16 + cap_in);
    s.comp = s.dec + cap_dec;
    s.lo = (uint32_t *)(s.comp + cap_dec);
    s.hi = s.lo + cap_dec;
  } else {
    cap_dec = STACK_DEC;
  }
  size_t n_in = 0, m = 0;
  bool exact = map_compose(in, len, &s, cap_dec, &n_in, &m) == 0 && m == (size_t)n &&
               memcmp(s.comp, buf, m * sizeof *buf) == 0;
  /* Without an exact per-character account, every code point maps to the whole text:
   * a wider highlight, never a wrong text. */
  uint32_t whole16 = 0;
  if (!exact) {
    const utf8proc_uint8_t *u = (const utf8proc_uint8_t *)in;
    for (size_t p = 0; p < len;) {
      utf8proc_int32_t cp;
      utf8proc_ssize_t r = utf8proc_iterate(u + p, (utf8proc_ssize_t)(len - p), &cp);
      if (r <= 0) break;
      p += (size_t)r;
      whole16 += cp >= 0x10000 ? 2u : 1u;
    }
  }
  /* emit() with the map: a space covers its whole run of non-letters. */
  size_t o = 0, k = 0;
  bool pending_space = false;
  uint32_t run_lo = 0, run_hi = 0;
  long rc = 0;
  for (size_t i = 0; i < (size_t)n && rc == 0; i++) {
    uint32_t a = exact ? s.off16[s.lo[i]] : 0, b = exact ? s.off16[s.hi[i] + 1] : whole16;
    if (!is_letter_or_number(buf[i])) {
      if (!pending_space) run_lo = a;
      run_hi = b;
      pending_space = o > 0;
      continue;
    }
    utf8proc_uint8_t enc[4];
    utf8proc_ssize_t el = utf8proc_encode_char(buf[i], enc);
    if (el <= 0) {
      rc = -1;
      break;
    }
    if (pending_space) {
      if (o >= cap || k >= map_cp) {
        rc = -2;
        break;
      }
      out[o++] = ' ';
      map[2 * k] = run_lo;
      map[2 * k + 1] = run_hi;
      k++;
      pending_space = false;
    }
    if ((size_t)el > cap - o || k >= map_cp) {
      rc = -2;
      break;
    }
    memcpy(out + o, enc, (size_t)el);
    o += (size_t)el;
    map[2 * k] = a;
    map[2 * k + 1] = b;
    k++;
  }
  if (rc == 0 && o >= cap) rc = -2;
  free(heap);
  free(mheap);
  if (rc) return rc;
  out[o] = '\0';
  *ncp = k;
  return (long)o;
}
