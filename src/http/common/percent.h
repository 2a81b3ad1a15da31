/*
 * The percent-decoding rule of both listeners, for the path and for each query argument:
 * "%XX" becomes the byte XX and, in a query only, '+' becomes a space. Anything that is
 * not clean input is refused rather than guessed at: a truncated or non-hex escape, a
 * result that is not valid UTF-8 or holds a NUL byte, one longer than the caller's
 * buffer, and in a path an escaped '/' (%2F, %2f): a path's segments are the pieces
 * between its literal slashes, so no escape can add or move a separator. Both listeners
 * answer 400 invalid_request (docs/DECISIONS.md "Percent-decoding").
 */
#ifndef SG_HTTP_COMMON_PERCENT_H
#define SG_HTTP_COMMON_PERCENT_H

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"

/* The message both listeners give with that 400: it names what to fix. */
#define SG_HTTP_PERCENT_MESSAGE                                                                    \
  "The path or query string is not valid percent-encoded UTF-8: every '%' must start an "          \
  "escape of two hex digits, the decoded bytes must be UTF-8 without NUL (%00), and the path "     \
  "may not hold an encoded '/' (%2F): its segments are split on a literal '/' only."

/* Which rule a piece of the request target is decoded by. */
typedef enum {
  SG_HTTP_PCT_PATH,  /* the whole path: '+' is a plus, %2F is refused */
  SG_HTTP_PCT_QUERY, /* one query argument's name or value: '+' is a space, %2F is a '/' */
  /* A piece its caller has already split and checked under one of the rules above (the
   * control listener's libmicrohttpd hook sees path and arguments alike, the arguments
   * with '+' already made a space): '+' is a plus, %2F is a '/'. */
  SG_HTTP_PCT_CHECKED,
} sg_http_pct_rule;

/* Decodes s[0..n) into out[0..cap) by rule and sets *out_len. Returns SG_E_OK, or
 * SG_E_INVALID_REQUEST with out's contents unspecified. out may be s itself (decoding
 * never lengthens), so a caller can decode in place. Allocates nothing and writes no
 * terminator. */
sg_err sg_http_percent_decode(const char *s, size_t n, sg_http_pct_rule rule, char *out, size_t cap,
                              size_t *out_len);

#endif
