/*
 * GET /docs/errors: the error reference that every error body's docsUrl points to, an HTML
 * page generated from the one error table so it can never drift from what the service
 * sends. Each code has a section with id="<code>" (the docsUrl anchor); each row with a
 * details.reason also has id="<code>-<reason>".
 */
#include <string.h>

#include "control/internal.h"

/* Appends s with the five HTML-special characters escaped. */
static void put_html(sg_buf *b, const char *s) {
  for (; *s; s++) {
    switch (*s) {
    case '<': sg_buf_puts(b, "&lt;"); break;
    case '>': sg_buf_puts(b, "&gt;"); break;
    case '&': sg_buf_puts(b, "&amp;"); break;
    case '"': sg_buf_puts(b, "&quot;"); break;
    case '\'': sg_buf_puts(b, "&#39;"); break;
    default: sg_buf_putc(b, *s);
    }
  }
}

void sg__h_docs_errors(sg_req *req, sg_resp *resp);
void sg__h_docs_errors(sg_req *req, sg_resp *resp) {
  sg_buf *b = &resp->body;
  sg_buf_puts(b, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                 "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                 "<title>suggestd errors</title><style>"
                 "body{font:16px/1.45 system-ui,sans-serif;max-width:60rem;margin:2rem auto;"
                 "padding:0 1rem}table{border-collapse:collapse;width:100%}"
                 "td,th{border:1px solid #ccc;padding:.35rem .5rem;text-align:left;"
                 "vertical-align:top}:target,tr:target{background:#fff6cc}code{font-size:.95em}"
                 "</style></head><body>\n<h1>suggestd errors</h1>\n"
                 "<p>Every error body carries <code>code</code> (switch on it), a human "
                 "<code>message</code>, <code>requestId</code>, <code>details</code> "
                 "(<code>details.reason</code> refines the code; <code>details.fields</code> "
                 "names each invalid field) and <code>docsUrl</code>, a link to the section "
                 "below. Runtime (<code>/v1</code>) errors carry "
                 "<code>{code, message, requestId}</code>.</p>\n");
  for (int e = 1; e < SG_E__COUNT; e++) {
    const char *code = sg_err_code((sg_err)e);
    int first = 1; /* the first row of a code opens its section */
    for (int p = 1; p < e; p++)
      if (strcmp(sg_err_code((sg_err)p), code) == 0) first = 0;
    if (first) {
      sg_buf_printf(b,
                    "<section id=\"%s\"><h2><code>%s</code></h2>\n<table><tr><th>status"
                    "</th><th>details.reason</th><th>meaning</th><th>what to do</th></tr>\n",
                    code, code);
      for (int r = e; r < SG_E__COUNT; r++) {
        if (strcmp(sg_err_code((sg_err)r), code) != 0) continue;
        const char *reason = sg_err_reason((sg_err)r);
        if (reason)
          sg_buf_printf(b, "<tr id=\"%s-%s\"><td>%d</td><td><code>%s</code></td><td>", code, reason,
                        sg_err_status((sg_err)r), reason);
        else
          sg_buf_printf(b, "<tr><td>%d</td><td></td><td>", sg_err_status((sg_err)r));
        put_html(b, sg_err_message((sg_err)r));
        sg_buf_puts(b, "</td><td>");
        put_html(b, sg_resp_remediation((sg_err)r));
        sg_buf_puts(b, "</td></tr>\n");
      }
      sg_buf_puts(b, "</table></section>\n");
    }
  }
  sg_buf_puts(b, "</body></html>\n");
  resp->status = 200;
  resp->content_type = "text/html; charset=utf-8";
}
