/*
 * The metrics listener (--metrics-listen ADDR): GET /metrics answers the Prometheus text
 * exposition of common/metrics.h. It is a separate listener so that it can stay on a
 * private address while the API listeners are public.
 */
#ifndef SG_HTTP_METRICS_HTTP_H
#define SG_HTTP_METRICS_HTTP_H

#include <stddef.h>

#include "http/mhd/http.h"

/* Starts the listener on addr ("host:port"; port 0 picks a free one) and prints
 * {"level":"info","msg":"metrics listening","url":"http://host:port/metrics"} to stderr.
 * Returns 0 and *out (stop it with sg_http_stop), or -1 with a message in err. */
int sg_metrics_http_start(const char *addr, sg_http_server **out, char *err, size_t errsz);

#endif
