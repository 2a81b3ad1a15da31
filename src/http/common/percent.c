/*
 * One percent-decoder for both HTTP stacks (percent.h). It runs on the runtime's request
 * path, so it allocates nothing, reads each byte once and copies runs of plain bytes whole.
 */
#include "http/common/percent.h"

#include <string.h>

#include "common/util.h"

static int hexval(unsigned char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  ch |= 0x20;
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  return -1;
}

/* A byte every rule keeps as it is, and that needs no UTF-8 check: 0x01..0x7f but '%'
 * and '+'. */
static bool plain(unsigned char ch) {
  return (unsigned char)(ch - 1) < 0x7f && ch != '%' && ch != '+';
}

/* The length of the run of plain bytes that starts s[0..n): eight bytes a step, then one. */
static size_t plain_run(const char *s, size_t n) {
  size_t i = 0;
  for (; n - i >= 8; i += 8) {
    uint64_t w;
    memcpy(&w, s + i, 8);
    if (sg_swar_high(w) | sg_swar_zero(w) | sg_swar_eq(w, '%') | sg_swar_eq(w, '+')) break;
  }
  while (i < n && plain((unsigned char)s[i])) i++;
  return i;
}

sg_err sg_http_percent_decode(const char *s, size_t n, sg_http_pct_rule rule, char *out, size_t cap,
                              size_t *out_len) {
  size_t o = 0, i = 0;
  bool ascii = true; /* every byte out is in 0x01..0x7f: UTF-8 without NUL, nothing to check */
  while (i < n) {
    /* Runs of plain bytes are copied whole; decoding in place, a run before the first
     * escape is already where it belongs. */
    size_t run = plain_run(s + i, n - i);
    if (run > cap - o) return SG_E_INVALID_REQUEST;
    if (out + o != s + i) memmove(out + o, s + i, run);
    o += run;
    i += run;
    if (i == n) break;
    if (o == cap) return SG_E_INVALID_REQUEST;
    unsigned char ch = (unsigned char)s[i];
    if (ch == '%') {
      /* A '%' that does not start a full escape is malformed, not a literal: guessing
       * would let "100%" and "100%25" name the same thing on one listener and not on
       * the other. */
      if (n - i < 3) return SG_E_INVALID_REQUEST;
      int hi = hexval((unsigned char)s[i + 1]), lo = hexval((unsigned char)s[i + 2]);
      if (hi < 0 || lo < 0) return SG_E_INVALID_REQUEST;
      ch = (unsigned char)(hi << 4 | lo);
      i += 2;
      /* A path is split into segments on its literal '/' only: an escaped one would let
       * "/v1%2Fbootstrap" reach the route "/v1/bootstrap" past a proxy's rule on the
       * prefix "/v1/", so it is refused rather than decoded into a separator. */
      if (ch == '/' && rule == SG_HTTP_PCT_PATH) return SG_E_INVALID_REQUEST;
    } else if (ch == '+' && rule == SG_HTTP_PCT_QUERY) {
      ch = ' ';
    }
    if (ch == 0 || ch >= 0x80) ascii = false;
    out[o++] = (char)ch;
    i++;
  }
  /* sg_utf8_valid refuses a NUL byte as well: a decoded value stays a C string that
   * means what it says ("lst_X%00junk" cannot name lst_X). */
  if (!ascii && !sg_utf8_valid(out, o)) return SG_E_INVALID_REQUEST;
  *out_len = o;
  return SG_E_OK;
}
