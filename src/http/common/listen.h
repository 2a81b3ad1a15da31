/*
 * The listen-address grammar of every --*-listen flag (control, runtime, metrics), shared
 * by both HTTP stacks so that an address means the same thing, and fails with the same
 * message, on every listener.
 *
 *   host:port     host is a numeric IPv4 address or "localhost" (127.0.0.1)
 *   [v6]:port     a numeric IPv6 address in brackets ("[::]" for every interface)
 *   :port         every IPv4 interface (0.0.0.0)
 *
 * port is 0-65535 in decimal (0 picks a free port). Host names other than "localhost" are
 * refused: a name that resolves to several addresses would bind one of them by chance.
 */
#ifndef SG_HTTP_COMMON_LISTEN_H
#define SG_HTTP_COMMON_LISTEN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

typedef struct {
  char host[48]; /* numeric address, without brackets ("0.0.0.0" for ":port") */
  unsigned port;
  bool v6;
  struct sockaddr_storage sa; /* the address to bind */
  socklen_t sa_len;
} sg_listen_addr;

/* Parses s. Returns 0, or -1 with a message naming s and what is wrong in err. */
int sg_listen_parse(const char *s, sg_listen_addr *out, char *err, size_t errsz);

#endif
