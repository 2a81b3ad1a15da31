/*
 * Runtime presence on the edge (edge.h "runtime presence", docs/EDGE.md "Runtime
 * records"): the record codec, the liveness rule and the dispatch to the backends.
 *
 * A record is hostile input to whoever reads it (any process that can write the edge can
 * write one), so decoding is bounded and strict about the two things that matter: the id
 * and the formats. Everything else is informative.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "edge/edge.h"
#include "edge/edge_internal.h"

static int bad_arg(void) {
  errno = EINVAL;
  return -1;
}

static int64_t clamp_ttl(int64_t t) {
  if (t < 1) return 1;
  return t > SG_EDGE_RUNTIME_TTL_MAX ? SG_EDGE_RUNTIME_TTL_MAX : t;
}

int sg_edge_runtime_encode(const sg_edge_runtime_rec *r, char **json, size_t *len) {
  if (!r || !json || !len || !sg_edge_id_valid(r->id) || !(r->formats & ~(uint64_t)1))
    return bad_arg();
  json_t *fm = json_array();
  for (int v = 1; fm && v < 64; v++)
    if (r->formats & ((uint64_t)1 << v)) json_array_append_new(fm, json_integer(v));
  json_t *o = fm ? json_pack("{s:s,s:o,s:s,s:I,s:I}", "runtimeId", r->id, "formats", fm, "version",
                             r->version, "heartbeatMs", (json_int_t)r->heartbeat_ms, "ttlSeconds",
                             (json_int_t)clamp_ttl(r->ttl_s))
                 : NULL;
  char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
  json_decref(o);
  if (!s) {
    errno = ENOMEM;
    return -1;
  }
  *json = s;
  *len = strlen(s);
  return 0;
}

int sg_edge_runtime_decode(const char *json, size_t len, sg_edge_runtime_rec *out) {
  if (!json || !out || len > SG_EDGE_RUNTIME_MAX) return -1;
  memset(out, 0, sizeof *out);
  json_t *o = json_loadb(json, len, JSON_REJECT_DUPLICATES, NULL);
  int rc = -1;
  if (!json_is_object(o)) goto out;
  const char *id = json_string_value(json_object_get(o, "runtimeId"));
  if (!sg_edge_id_valid(id)) goto out;
  snprintf(out->id, sizeof out->id, "%s", id);
  json_t *fm = json_object_get(o, "formats"), *v;
  size_t i;
  if (!json_is_array(fm) || json_array_size(fm) > 64) goto out;
  json_array_foreach(fm, i, v) {
    json_int_t f = json_integer_value(v);
    if (json_is_integer(v) && f >= 1 && f <= 63) out->formats |= (uint64_t)1 << f;
  }
  if (!out->formats) goto out;
  json_t *hb = json_object_get(o, "heartbeatMs"), *ttl = json_object_get(o, "ttlSeconds");
  out->heartbeat_ms = json_is_integer(hb) ? (int64_t)json_integer_value(hb) : 0;
  out->ttl_s =
      clamp_ttl(json_is_integer(ttl) ? (int64_t)json_integer_value(ttl) : SG_EDGE_RUNTIME_TTL_S);
  const char *ver = json_string_value(json_object_get(o, "version"));
  snprintf(out->version, sizeof out->version, "%s", ver ? ver : "");
  rc = 0;
out:
  json_decref(o);
  return rc;
}

bool sg_edge_runtime_live(const sg_edge_runtime_rec *r, int64_t now_ms) {
  if (!r || r->heartbeat_ms <= 0) return false;
  int64_t ttl_ms = clamp_ttl(r->ttl_s) * 1000;
  /* heartbeat_ms is checked positive; a sum past INT64_MAX is a clock nobody has. */
  if (r->heartbeat_ms > INT64_MAX - ttl_ms) return true;
  return now_ms < r->heartbeat_ms + ttl_ms;
}

int sg_edge_runtime_put(sg_edge *e, const char *id, const char *json, size_t len, int64_t ttl_s) {
  if (!e || !sg_edge_id_valid(id) || !json || ttl_s < 1 || ttl_s > SG_EDGE_RUNTIME_TTL_MAX)
    return bad_arg();
  if (len > SG_EDGE_RUNTIME_MAX) {
    errno = EFBIG;
    return -1;
  }
  return e->ops->runtime_put(e, id, json, len, ttl_s);
}

int sg_edge_runtime_delete(sg_edge *e, const char *id) {
  if (!e || !sg_edge_id_valid(id)) return bad_arg();
  return e->ops->runtime_del(e, id);
}

int sg_edge_runtimes(sg_edge *e, sg_edge_foreach_cb cb, void *ctx) {
  if (!e || !cb) return bad_arg();
  return e->ops->runtimes(e, cb, ctx);
}
