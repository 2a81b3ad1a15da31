/*
 * GET /api/v1/lists/{id}/versions/{versionNumber}: one version; ETag = its contentHash
 * (quoted) once it has an artifact. A number the list never allocated, or one that is
 * not a positive decimal integer, answers 400 invalid_request naming field "version".
 */
#include "common/util.h"
#include "control/internal.h"

void sg__h_version_get(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp) {
  int64_t number;
  /* An unparsable number is looked up as 0, which no list allocates: the list's own
   * existence is still checked first, so an unknown list stays a 404. */
  if (sg_parse_i64(req->params[1], 1, INT64_MAX, &number)) number = 0;
  json_t *v = NULL;
  sg_err e = sg_store_version_get(c->cfg.store, who->workspace_id, req->params[0], number, &v);
  if (e == SG_E_NOT_FOUND) {
    json_t *f = NULL;
    sg_field_error(&f, "version", "not a version number this list allocated");
    sg_resp_invalid_fields(resp, req, f);
    return;
  }
  if (e != SG_E_OK) {
    sg__store_error(req, resp, e);
    return;
  }
  sg__send_version(req, resp, 200, v);
}
