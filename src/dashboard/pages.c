/*
 * The dashboard's built-in pages: one HTML shell at /dashboard/, its script and style,
 * and the browser widget (clients/js/dist/suggestd.js) for the list page's preview. The
 * files live in src/dashboard/assets/ and are compiled in by scripts/embed.sh, so nothing
 * is read from disk or loaded from the internet; the script is a separate asset so the
 * Content-Security-Policy can forbid inline script.
 */
#include <stdio.h>
#include <string.h>

#include "dashboard/internal.h"
#include "dashboard_assets.h"

typedef struct {
  const char *path;
  const char *type;
  const unsigned char *body;
  size_t len;
} asset;

#define ASSET(p, t, a)                                                                             \
  { p, t, a, sizeof a }
static const asset assets[] = {
    ASSET("/dashboard/", "text/html; charset=utf-8", asset_index_html),
    ASSET("/dashboard/app.js", "text/javascript; charset=utf-8", asset_app_js),
    ASSET("/dashboard/app.css", "text/css; charset=utf-8", asset_app_css),
    ASSET("/dashboard/suggestd.js", "text/javascript; charset=utf-8", asset_suggestd_js),
    ASSET("/dashboard/favicon.svg", "image/svg+xml", asset_favicon_svg),
};

static void page(sg_resp *resp, const asset *a, const char *runtime_url) {
  resp->status = 200;
  resp->content_type = a->type;
  if (sg_buf_append(&resp->body, a->body, a->len) != 0) {
    resp->status = 500;
    return;
  }
  /* Own scripts only, no framing (clickjacking), no referrer leaking paths. The runtime's
   * origin (validated by the flag's parser) is the one other place the page may fetch
   * from: the list page's live preview queries it. */
  char csp[512];
  snprintf(csp, sizeof csp,
           "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
           "connect-src 'self'%s%s; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
           runtime_url ? " " : "", runtime_url ? runtime_url : "");
  sg_resp_header(resp, "Content-Security-Policy", csp);
  sg_resp_header(resp, "X-Frame-Options", "DENY");
  sg_resp_header(resp, "Referrer-Policy", "no-referrer");
  sg_resp_header(resp, "X-Content-Type-Options", "nosniff");
}

bool sg__dashboard_page(sg_req *req, sg_resp *resp, const char *runtime_url) {
  if (strcmp(req->method, "GET") != 0 && strcmp(req->method, "HEAD") != 0) return false;
  if (strcmp(req->path, "/dashboard") == 0) {
    resp->status = 308;
    sg_resp_header(resp, "Location", "/dashboard/");
    return true;
  }
  for (size_t i = 0; i < sizeof assets / sizeof assets[0]; i++)
    if (strcmp(req->path, assets[i].path) == 0) {
      page(resp, &assets[i], runtime_url);
      return true;
    }
  return false;
}
