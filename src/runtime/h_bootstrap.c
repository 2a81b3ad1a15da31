/*
 * GET /v1/bootstrap?key=…
 *
 * The list's policies and active version hash, prebuilt in the snapshot: never metered,
 * never reads an artifact. Errors: invalid_key, origin_not_allowed, invalid_token
 * (private list), list_not_published. Answers If-None-Match with 304.
 */
#include <string.h>

#include "common/util.h"
#include "runtime/rt.h"

void sg__h_bootstrap(sg__rt_req *r) {
  size_t klen = 0;
  const char *key = sg__h1_arg_get(r->req, "key", &klen);
  const sg__rt_snapshot *s = sg__rcu_enter(&r->rt->rcu);
  const sg__rt_key *k = NULL;
  sg_err e = sg__rt_authorize(r, s, key, klen, &k);
  if (e == SG_E_OK && k->list->visibility == SG__VIS_PRIVATE) {
    e = sg__token_verify(s, r->req->authorization.p, k, sg_now_s());
  }
  if (e == SG_E_OK && !k->list->published) e = SG_E_LIST_NOT_PUBLISHED;
  if (e != SG_E_OK) {
    sg__rcu_leave(&r->rt->rcu);
    sg__rt_error(r, e, NULL, NULL);
    return;
  }
  const sg__rt_list *l = k->list;
  char *body = sg__rt_scratch();
  size_t len = l->bootstrap_len < SG__RT_SCRATCH ? l->bootstrap_len : 0;
  memcpy(body, l->bootstrap, len);
  char etag[sizeof l->bootstrap_etag];
  memcpy(etag, l->bootstrap_etag, sizeof etag);
  sg__rt_hdrs h = {.etag = etag,
                   .cache_control =
                       l->visibility == SG__VIS_PRIVATE ? "private, no-store" : "no-cache"};
  sg__rcu_leave(&r->rt->rcu);
  if (sg__rt_inm_matches(r, etag))
    sg__rt_respond(r, 304, "", 0, &h);
  else
    sg__rt_respond(r, 200, body, len, &h);
}
