/*
 * The percent-decoding rule of both listeners, for the path and for each query argument:
 * "%XX" becomes the byte XX and, in a query only, '+' becomes a space. Anything that is
 * not clean input is refused rather than guessed at: a truncated or non-hex escape, a
 * result that is not valid UTF-8 or holds a NUL byte, or one longer than the caller's
 * buffer. Both answer 400 invalid_request (docs/DECISIONS.md "Percent-decoding").
 */
#ifndef SG_HTTP_COMMON_PERCENT_H
#define SG_HTTP_COMMON_PERCENT_H

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"

/* The message both listeners give with that 400: it names what to fix. */
#define SG_HTTP_PERCENT_MESSAGE                                                                    \
  "The path or query string is not valid percent-encoded UTF-8: every '%' must start an "          \
  "escape of two hex digits, and the decoded bytes must be UTF-8 without NUL (%00)."

/* Decodes s[0..n) into out[0..cap) and sets *out_len; query selects the query rule
 * ('+' is a space). Returns SG_E_OK, or SG_E_INVALID_REQUEST with out's contents
 * unspecified. out may be s itself (decoding never lengthens), so a caller can decode
 * in place. Allocates nothing and writes no terminator. */
sg_err sg_http_percent_decode(const char *s, size_t n, bool query, char *out, size_t cap,
                              size_t *out_len);

#endif
