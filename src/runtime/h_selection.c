/*
 * POST /v1/selection — a fire-and-forget report that the user picked an item.
 *
 * Body: see selection_parse.c (JSON, or text/plain holding JSON, at most 4 KiB; the key
 * travels in the body). Checks, in order: body is a JSON object (400 invalid_request;
 * over 4 KiB 413), key (401 invalid_key), Origin (403), fields (400 invalid_request),
 * access token of a private list (401 invalid_token), list published (404
 * list_not_published), listId equals the key's list (400 invalid_request), per-key rate
 * limit (429 rate_limited with retry-after). A duplicate selectionId (24 h) is answered
 * 200 like the first but not recorded twice. The event is queued for the writer thread.
 */
#include <jansson.h>
#include <string.h>

#include "common/util.h"
#include "compiler/normalize.h"
#include "runtime/rt.h"
#include "state/state.h"

static _Thread_local char tl_norm[SG__SELECTION_MAX_QUERY * 4 + 16];

/* An accepted report into the analytics: its query normalised as a query is, kept only
 * when at least the list's minQueryChars (else the report counts without a query). */
static void count_selection(sg__rt_req *r, const sg__rt_list *l, const sg__selection *sel) {
  sg_analytics *a = sg_rt_state_analytics(r->rt->state);
  if (!a) return;
  long nlen = 0;
  size_t raw_len = sel->query ? strlen(sel->query) : 0;
  if (sel->query) {
    nlen = sg_normalize_into(sel->query, raw_len, tl_norm, sizeof tl_norm);
    if (nlen > 0 && (long)sg_utf8_count(tl_norm, (size_t)nlen) < l->min_query_chars) nlen = 0;
  }
  if (nlen < 0) nlen = 0;
  sg_analytics_selection(a, l->id, sg_now_s(), nlen ? tl_norm : NULL, (size_t)nlen, sel->query,
                         raw_len, sel->item_id, sel->position);
}

void sg__h_selection(sg__rt_req *r) {
  sg__selection sel;
  sg_err e = sg__selection_parse(r->req->body, r->req->body_len, &sel);
  if (e != SG_E_OK) {
    sg__selection_free(&sel);
    r->cors = true;
    if (e == SG_E_INVALID_REQUEST)
      r->message = "The body must be a JSON object with the fields key, selectionId, "
                   "queryRequestId, listId, itemId and position.";
    sg__rt_error(r, e, NULL, NULL);
    return;
  }
  const sg__rt_snapshot *s = sg__rcu_enter(&r->rt->rcu);
  const sg__rt_key *k = NULL;
  e = sg__rt_authorize(r, s, sel.key, sel.key_len, &k);
  if (e == SG_E_OK && sel.bad_field) {
    e = SG_E_INVALID_REQUEST;
    r->message = sel.bad_message;
    r->field = sel.bad_field;
  }
  if (e == SG_E_OK && k->list->visibility == SG__VIS_PRIVATE) {
    e = sg__token_verify(s, r->req->authorization.p, k, sg_now_s());
    if (e == SG_E_INVALID_TOKEN) r->message = sg__rt_token_hint(r->req->authorization.p);
  }
  if (e == SG_E_OK && !k->list->published) e = SG_E_LIST_NOT_PUBLISHED;
  if (e == SG_E_OK && strcmp(sel.list_id, k->list->id) != 0) {
    e = SG_E_INVALID_REQUEST;
    r->message = "The field listId must be the id of the key's list: the listId of the query "
                 "answer.";
    r->field = "listId";
  }
  /* An item the list does not serve is never counted: anyone holding the public key
   * could otherwise invent top items (docs/DESIGN.md §4.1). The artifact's sorted ids
   * answer without allocating or locking. */
  if (e == SG_E_OK && !k->list->art) e = SG_E_ARTIFACT_UNAVAILABLE;
  if (e == SG_E_OK && !sg_artifact_has_item(k->list->art->a, sel.item_id, strlen(sel.item_id))) {
    e = SG_E_INVALID_REQUEST;
    r->message = "The field itemId must be the id of an item of the list's published version: "
                 "the itemId of an item in the query answer.";
    r->field = "itemId";
  }
  sg__rt_hdrs h = {0};
  if (e == SG_E_OK) {
    char rkey[33];
    int retry = 1;
    sg_hex(r->key_digest, 16, rkey);
    sg__ev_result res = sg_rt_state_selection_record(r->rt->state, &sel, k->app->id, k->id, rkey,
                                                     sg_now_ms(), &retry);
    if (res == SG__EV_ACCEPTED) count_selection(r, k->list, &sel);
    if (res == SG__EV_RATE_LIMITED) {
      e = SG_E_RATE_LIMITED;
      h.retry_after = retry;
    } else if (res == SG__EV_BUSY) {
      /* Not recorded (queue full, shared state unreachable): the client retries. */
      e = SG_E_UNAVAILABLE;
      h.retry_after = 1;
    }
  }
  sg__rcu_leave(&r->rt->rcu);
  if (e != SG_E_OK) {
    sg__rt_error(r, e, NULL, &h);
  } else {
    /* The selectionId exactly as sent (validated: hex digits and dashes only). */
    char body[64];
    const char *sent = json_string_value(json_object_get(sel.root, "selectionId"));
    int n = snprintf(body, sizeof body, "{\"selectionId\":\"%s\"}", sent);
    sg__rt_respond(r, 200, body, (size_t)n, NULL);
  }
  sg__selection_free(&sel);
}
