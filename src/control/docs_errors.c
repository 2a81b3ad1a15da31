/*
 * GET /docs/errors: the error reference that every error body's docsUrl points to,
 * generated from the one error table so it can never drift from what the service sends.
 */
#include "control/internal.h"

void sg__h_docs_errors(sg_req *req, sg_resp *resp);
void sg__h_docs_errors(sg_req *req, sg_resp *resp) {
  sg_buf_puts(&resp->body, "# suggestd errors\n\n| status | code | details.reason | meaning |\n"
                           "|---|---|---|---|\n");
  for (int e = 1; e < SG_E__COUNT; e++) {
    const char *reason = sg_err_reason((sg_err)e);
    sg_buf_printf(&resp->body, "| %d | %s | %s | %s |\n", sg_err_status((sg_err)e),
                  sg_err_code((sg_err)e), reason ? reason : "", sg_err_message((sg_err)e));
  }
  resp->status = 200;
  resp->content_type = "text/markdown; charset=utf-8";
}
