/*
 * One percent-decoder for both HTTP stacks (percent.h). It runs on the runtime's request
 * path, so it allocates nothing and reads each byte once.
 */
#include "http/common/percent.h"

#include "common/util.h"

static int hexval(unsigned char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  ch |= 0x20;
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  return -1;
}

sg_err sg_http_percent_decode(const char *s, size_t n, sg_http_pct_rule rule, char *out, size_t cap,
                              size_t *out_len) {
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    if (o == cap) return SG_E_INVALID_REQUEST;
    char ch = s[i];
    if (ch == '%') {
      /* A '%' that does not start a full escape is malformed, not a literal: guessing
       * would let "100%" and "100%25" name the same thing on one listener and not on
       * the other. */
      if (n - i < 3) return SG_E_INVALID_REQUEST;
      int hi = hexval((unsigned char)s[i + 1]), lo = hexval((unsigned char)s[i + 2]);
      if (hi < 0 || lo < 0) return SG_E_INVALID_REQUEST;
      ch = (char)(hi << 4 | lo);
      i += 2;
      /* A path is split into segments on its literal '/' only: an escaped one would let
       * "/v1%2Fbootstrap" reach the route "/v1/bootstrap" past a proxy's rule on the
       * prefix "/v1/", so it is refused rather than decoded into a separator. */
      if (ch == '/' && rule == SG_HTTP_PCT_PATH) return SG_E_INVALID_REQUEST;
    } else if (ch == '+' && rule == SG_HTTP_PCT_QUERY) {
      ch = ' ';
    }
    out[o++] = ch;
  }
  /* sg_utf8_valid refuses a NUL byte as well: a decoded value stays a C string that
   * means what it says ("lst_X%00junk" cannot name lst_X). */
  if (!sg_utf8_valid(out, o)) return SG_E_INVALID_REQUEST;
  *out_len = o;
  return SG_E_OK;
}
