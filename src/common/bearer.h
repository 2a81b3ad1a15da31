/*
 * The Bearer credential of an Authorization header (RFC 6750 §2.1), parsed the same way
 * on both listeners: the scheme "Bearer" in any case (RFC 7235: auth-schemes are
 * case-insensitive), one or more spaces, then one non-empty b64token (letters, digits and
 * "-._~+/", then any number of "="). Spaces or tabs after it are ignored; anything else
 * (a second word, a control character, an empty credential) is not a Bearer credential.
 */
#ifndef SG_COMMON_BEARER_H
#define SG_COMMON_BEARER_H

#include <stdbool.h>
#include <stddef.h>

/* On success points *tok at the credential inside header and sets *len. header may be
 * NULL (no header: false). */
bool sg_bearer_token(const char *header, const char **tok, size_t *len);

#endif
