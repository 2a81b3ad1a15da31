/*
 * The x-request-id rule of both listeners: a client's id is echoed when it is 1 to
 * SG_HTTP_REQUEST_ID_MAX printable ASCII characters without quotes or backslashes (it
 * lands in logs and JSON); anything else is replaced by a generated id.
 * docs/DECISIONS.md "x-request-id" says why 128.
 */
#ifndef SG_HTTP_COMMON_REQUEST_ID_H
#define SG_HTTP_COMMON_REQUEST_ID_H

#include <stdbool.h>

#define SG_HTTP_REQUEST_ID_MAX 128

/* True when s (NUL-terminated) may be echoed. Reads at most SG_HTTP_REQUEST_ID_MAX + 1
 * bytes of s. */
bool sg_http_request_id_ok(const char *s);

#endif
