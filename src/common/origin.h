/*
 * Web origins as publishable-key allow-list entries and as request Origin headers.
 *
 * The canonical form is lower-case "scheme://host[:port]":
 * - scheme http or https (an allow-list entry can only ever match a web page);
 * - host a DNS name (labels of letters, digits, '-' and '_', 1-63 bytes, not starting or
 *   ending with '-', at most 253 bytes in all), an IPv4 address or a bracketed IPv6
 *   address;
 * - port 1-65535, dropped when it is the scheme's default (https://a:443 is https://a,
 *   as a browser sends it);
 * - one trailing '/' is ignored; any other path, a query, a fragment or userinfo is
 *   refused.
 * With allow_wildcard the host may start with "*." standing for one or more whole labels.
 * The rest must be a DNS name of at least two labels that is not itself a public suffix:
 * without the Public Suffix List we refuse the common pattern of two-label suffixes, a
 * two-letter country code under a generic second level (co.uk, com.au, co.jp, or.jp,
 * gov.br, ...). So the host *.example.com is accepted; *.com and *.co.uk are refused.
 */
#ifndef SG_COMMON_ORIGIN_H
#define SG_COMMON_ORIGIN_H

#include <stdbool.h>
#include <stddef.h>

#define SG_ORIGIN_MAX 256

/* Writes the canonical form of in[0..len) into out (outsz bytes) and returns its length,
 * or returns -1 and (when why is not NULL) points *why at a short reason. */
long sg_origin_canon(const char *in, size_t len, bool allow_wildcard, char *out, size_t outsz,
                     const char **why);

#endif
