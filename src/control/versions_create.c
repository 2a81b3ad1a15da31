/*
 * POST /api/v1/lists/{id}/versions: publish the list's current items.
 *
 * The version is allocated "queued" with its snapshot in one store transaction. A list
 * of at most --sync-publish-limit items is then published in this request: 200 with the
 * resolved version (active, or draft with validationErrors; when a concurrent publish has
 * already superseded it, the state this request reached: active). A bigger list, or one whose
 * publish lock stays busy for more than SYNC_WAIT_MS, answers 202 with the queued version
 * and the background worker resolves it; the client polls GET …/versions/{n}. A body is
 * optional; when sent it must be an empty JSON object.
 */
#include <string.h>

#include "control/internal.h"

/* How long a synchronous publish waits for another publish of the same list. */
#define SYNC_WAIT_MS 10000

void sg__h_versions_create(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp) {
  if (req->body_len > 0) {
    json_t *body = sg__body_object(req, resp);
    if (!body) return;
    static const char *const allowed[] = {NULL};
    json_t *fields = NULL;
    sg__reject_unknown(body, allowed, "", &fields);
    json_decref(body);
    if (fields) {
      sg_resp_invalid_fields(resp, req, fields);
      return;
    }
  }
  sg__publish_respond(c, who, req->params[0], req, resp);
}

void sg__publish_respond(sg_control *c, const sg_principal *who, const char *list_id, sg_req *req,
                         sg_resp *resp) {
  json_t *v = NULL;
  sg_err e = sg_store_version_create(c->cfg.store, who->workspace_id, list_id, &v);
  if (e != SG_E_OK) {
    sg__store_error(req, resp, e);
    return;
  }
  int64_t number = json_integer_value(json_object_get(v, "versionNumber"));
  json_int_t count = json_integer_value(json_object_get(v, "itemCount"));
  if ((uint64_t)count > c->cfg.sync_publish_limit) {
    /* A queued (202) version may be coalesced into a newer one (docs/PUBLISHING.md). */
    sg_store_version_set_async(c->cfg.store, list_id, number);
    sg__publish_kick(c);
    sg__send_version_of(req, resp, 202, list_id, v);
    return;
  }
  int r = sg__publish_run(c, list_id, number, SYNC_WAIT_MS);
  if (r == 1) {
    sg_store_version_set_async(c->cfg.store, list_id, number);
    sg__publish_kick(c);
    sg__send_version_of(req, resp, 202, list_id, v);
    return;
  }
  json_decref(v);
  v = NULL;
  e = sg_store_version_get(c->cfg.store, who->workspace_id, list_id, number, &v);
  if (e != SG_E_OK) {
    sg__store_error(req, resp, e);
    return;
  }
  const char *state = json_string_value(json_object_get(v, "state"));
  if (r < 0 || (state && strcmp(state, SG_VERSION_FAILED) == 0)) {
    /* A 5xx is never remembered for idempotency, so the client may simply retry. An
     * artifact the edge store (or the store's copy) did not take is an outage that passes
     * (Redis restarting, or this process's edge client still in its reconnect backoff):
     * 503 with Retry-After, as for an unreachable store; any other failure stays 500. */
    json_t *why = json_object_get(v, "failureReason");
    bool outage =
        json_is_string(why) && strcmp(json_string_value(why), SG__WHY_ARTIFACT_WRITE) == 0;
    json_t *details = json_pack("{s:I,s:O}", "versionNumber", (json_int_t)number, "reason",
                                why ? why : json_null());
    json_decref(v);
    if (outage)
      sg_resp_error(resp, req, SG_E_ARTIFACT_WRITE_FAILED, details, NULL);
    else
      sg_resp_error(resp, req, SG_E_INTERNAL, details, "The publish failed; retry it.");
    return;
  }
  if (state && strcmp(state, SG_VERSION_SUPERSEDED) == 0) {
    /* Another publish of the list activated a newer version between this run and the
     * read above. This version was active (versions resolve in number order, see
     * sg__publish_run): answer the state it reached, which is what this request did.
     * Without activatedAt it was never served: the client polls like after a 202. */
    if (json_is_null(json_object_get(v, "activatedAt"))) {
      sg__send_version_of(req, resp, 202, list_id, v);
      return;
    }
    json_object_set_new(v, "state", json_string(SG_VERSION_ACTIVE));
  }
  sg__send_version_of(req, resp, 200, list_id, v);
}
