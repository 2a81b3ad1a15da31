/*
 * Response helpers: JSON bodies and the control-plane error body, built from the one
 * error table in common/error.h.
 */
#include <stdlib.h>
#include <string.h>

#include "http/mhd/http.h"

void sg_resp_header(sg_resp *r, const char *name, const char *value) {
  if (r->nheaders >= SG_HTTP_MAX_HEADERS) return;
  char *n = strdup(name), *v = strdup(value);
  if (!n || !v) {
    free(n);
    free(v);
    return;
  }
  r->hname[r->nheaders] = n;
  r->hvalue[r->nheaders] = v;
  r->nheaders++;
}

void sg_resp_json(sg_resp *r, int status, json_t *body) {
  r->status = status;
  sg_buf_reset(&r->body);
  char *s = body ? json_dumps(body, JSON_COMPACT) : NULL;
  if (s) {
    sg_buf_puts(&r->body, s);
    free(s);
  }
  json_decref(body);
}

const char *sg_resp_remediation(sg_err e) {
  switch (e) {
  case SG_E_INVALID_KEY: return "Send Authorization: Bearer <secret key> with an active key.";
  case SG_E_INVALID_LIST: return "Check the list id; list ids are only visible to their workspace.";
  case SG_E_INVALID_REQUEST: return "Fix the fields named in details.fields and send again.";
  case SG_E_PRECONDITION_FAILED: return "GET the resource, then retry with its current ETag.";
  case SG_E_IDEMPOTENCY_KEY_REUSED: return "Use a new Idempotency-Key for a different request.";
  case SG_E_IDEMPOTENCY_KEY_IN_FLIGHT: return "Retry after one second.";
  case SG_E_RATE_LIMITED: return "Wait for the number of seconds in retry-after.";
  case SG_E_UNAVAILABLE: return "Retry after the number of seconds in retry-after.";
  case SG_E_ARTIFACT_WRITE_FAILED:
    return "Publish again after the number of seconds in retry-after; it fails the same way "
           "while the edge store (or the database) is unreachable.";
  case SG_E_BUSY: return "Retry after the number of seconds in retry-after.";
  case SG_E_TOKEN_MINTING_UNAVAILABLE: return "Retry later; an operator must create a signing key.";
  case SG_E_PAYLOAD_TOO_LARGE: return "Send a smaller body.";
  case SG_E_HEADERS_TOO_LARGE: return "Send a shorter URL and fewer or smaller headers (16 KiB).";
  case SG_E_DUPLICATE_VALUE: return "Use a value not yet in the list.";
  case SG_E_INVALID_ITEM: return "Check the item id; GET the list's items to find it.";
  case SG_E_ITEM_HAS_CHILDREN: return "Delete or re-parent the items under it first.";
  case SG_E_UNSUPPORTED_MEDIA_TYPE: return "Send the Content-Type this route documents.";
  case SG_E_LIST_ARCHIVED: return "Set the list's status to active first.";
  case SG_E_METHOD_NOT_ALLOWED: return "See the Allow header for the methods this route takes.";
  case SG_E_NOT_FOUND: return "Check the path; control-plane routes live under /api/v1.";
  case SG_E_INVALID_SESSION: return "Sign in again at /dashboard/.";
  case SG_E_INVALID_CREDENTIALS: return "Check the email and password; ask an admin to reset it.";
  case SG_E_INSUFFICIENT_ROLE: return "Ask an admin or owner of the workspace to do it.";
  case SG_E_CSRF_TOKEN_INVALID:
    return "Send X-CSRF-Token with the csrfToken of GET /dashboard/api/me.";
  case SG_E_CROSS_ORIGIN: return "Call the dashboard API from the dashboard's own origin.";
  case SG_E_LAST_OWNER: return "Make another member an owner first.";
  case SG_E_INVALID_TOKEN:
    return "A private list needs an access token: mint one on your server with POST "
           "/api/v1/token and send it as Authorization: Bearer, or make the list public.";
  case SG_E_ORIGIN_NOT_ALLOWED:
    return "Add the page's origin to the publishable key's allowed origins, or use a key "
           "issued for this origin.";
  case SG_E_QUERY_TOO_SHORT: return "Wait for more characters (the list's minQueryChars).";
  case SG_E_QUERY_TOO_LONG: return "Send a shorter q.";
  case SG_E_QUOTA_EXCEEDED: return "Raise the application's monthly quota, or wait for next month.";
  case SG_E_LIST_NOT_PUBLISHED:
    return "Publish the list (POST /api/v1/lists/{id}/versions) and query again.";
  case SG_E_MEMBER_EXISTS: return "Use another email, or change the existing member's role.";
  case SG_E_EMAIL_MEMBERSHIP_LIMIT: return "Invite this person with another email address.";
  case SG_E_WORKSPACE_REQUIRED:
    return "Sign in again with workspaceId set to one of details.workspaces.";
  case SG_E_LIST_LIMIT:
    return "Reuse an archived list, or ask the operator to raise --max-lists-per-workspace.";
  case SG_E_MEMBER_LIMIT:
    return "Remove members who no longer need access, or ask the operator to raise "
           "--max-members-per-workspace.";
  case SG_E_PUBLISHABLE_KEY_LIMIT:
    return "Revoke publishable keys no longer in use, or ask the operator to raise "
           "--max-publishable-keys-per-application.";
  case SG_E_SECRET_KEY_LIMIT:
    return "Revoke secret keys no longer in use, or ask the operator to raise "
           "--max-secret-keys-per-application.";
  default: return "Retry later; if it persists, report the requestId.";
  }
}

void sg_resp_error(sg_resp *r, const sg_req *req, sg_err e, json_t *details, const char *message) {
  if (!details) details = json_object();
  const char *reason = sg_err_reason(e);
  if (reason && !json_object_get(details, "reason"))
    json_object_set_new(details, "reason", json_string(reason));
  char docs[128];
  snprintf(docs, sizeof docs, "/docs/errors#%s", sg_err_code(e));
  json_t *b = json_object();
  json_object_set_new(b, "code", json_string(sg_err_code(e)));
  json_object_set_new(b, "message", json_string(message ? message : sg_err_message(e)));
  json_object_set_new(b, "requestId", json_string(req->request_id));
  json_object_set_new(b, "details", details);
  json_object_set_new(b, "docsUrl", json_string(docs));
  json_object_set_new(b, "remediation", json_string(sg_resp_remediation(e)));
  if (e == SG_E_INVALID_KEY) sg_resp_header(r, "WWW-Authenticate", "Bearer");
  if (e == SG_E_RATE_LIMITED) sg_resp_header(r, "retry-after", "60");
  if (e == SG_E_IDEMPOTENCY_KEY_IN_FLIGHT) sg_resp_header(r, "retry-after", "1");
  /* The database is unreachable or overloaded (or a transaction kept colliding): a
   * client retries shortly; the idempotency layer never records a 5xx. */
  if (e == SG_E_UNAVAILABLE || e == SG_E_ARTIFACT_WRITE_FAILED)
    sg_resp_header(r, "retry-after", "2");
  sg_resp_json(r, sg_err_status(e), b);
}

void sg_resp_too_large(sg_resp *r, const sg_req *req, uint64_t limit) {
  char msg[160];
  if (limit >= (1u << 20) && limit % (1u << 20) == 0)
    snprintf(msg, sizeof msg,
             "The request body is larger than this route accepts: at most %llu MiB.",
             (unsigned long long)(limit >> 20));
  else
    snprintf(msg, sizeof msg,
             "The request body is larger than this route accepts: at most %llu bytes.",
             (unsigned long long)limit);
  json_t *d = json_object();
  json_object_set_new(d, "limitBytes", json_integer((json_int_t)limit));
  sg_resp_error(r, req, SG_E_PAYLOAD_TOO_LARGE, d, msg);
}

void sg_field_error(json_t **fields, const char *path, const char *reason) {
  if (!*fields) *fields = json_array();
  json_t *f = json_object();
  json_object_set_new(f, "path", json_string(path));
  json_object_set_new(f, "reason", json_string(reason));
  json_array_append_new(*fields, f);
}

void sg_resp_invalid_fields(sg_resp *r, const sg_req *req, json_t *fields) {
  json_t *d = json_object();
  json_object_set_new(d, "fields", fields ? fields : json_array());
  sg_resp_error(r, req, SG_E_INVALID_REQUEST, d, NULL);
}
