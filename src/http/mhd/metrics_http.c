/*
 * The metrics listener: one route, GET /metrics.
 */
#include "http/mhd/metrics_http.h"

#include <stdio.h>
#include <string.h>

#include "common/metrics.h"
#include "http/common/listen.h"

static void handle(sg_req *req, sg_resp *resp) {
  if (strcmp(req->path, "/metrics") != 0) {
    sg_resp_error(resp, req, SG_E_NOT_FOUND, NULL, NULL);
    return;
  }
  req->route = "/metrics";
  if (strcmp(req->method, "GET") != 0 && strcmp(req->method, "HEAD") != 0) {
    sg_resp_header(resp, "Allow", "GET, HEAD");
    sg_resp_error(resp, req, SG_E_METHOD_NOT_ALLOWED, NULL, NULL);
    return;
  }
  if (sg_metrics_render(&resp->body)) {
    sg_resp_error(resp, req, SG_E_INTERNAL, NULL, NULL);
    return;
  }
  resp->status = 200;
  resp->content_type = SG_METRICS_CONTENT_TYPE;
  sg_resp_header(resp, "Cache-Control", "no-store");
}

int sg_metrics_http_start(const char *addr, sg_http_server **out, char *err, size_t errsz) {
  sg_http_config hc = {
      .listen = addr,
      .max_body = 4096,
      .threads = 2,
      .handler = handle,
      .log_name = "metrics",
  };
  if (sg_http_start(&hc, out, err, errsz)) return -1;
  sg_listen_addr la;
  if (sg_listen_parse(addr, &la, err, errsz) == 0)
    fprintf(
        stderr,
        "{\"level\":\"info\",\"msg\":\"metrics listening\",\"url\":\"http://%s%s%s:%u/metrics\"}\n",
        la.v6 ? "[" : "", la.host, la.v6 ? "]" : "", sg_http_port(*out));
  return 0;
}
