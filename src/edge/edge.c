/*
 * sg_edge: argument checks and dispatch to the backend named by the spec.
 */
#include "edge/edge.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "common/redisx.h"
#include "common/util.h"
#include "edge/edge_internal.h"

static const char *const kind_names[SG_EDGE__KINDS] = {
    [SG_EDGE_LIST] = "lists",
    [SG_EDGE_KEY] = "keys",
    [SG_EDGE_APP] = "apps",
    [SG_EDGE_WORKSPACE] = "workspaces",
    [SG_EDGE_SUBSCRIPTION] = "subscriptions",
    [SG_EDGE_SIGNING_KEY] = "signing-keys",
};

const char *sg_edge_kind_name(sg_edge_kind k) {
  return ((unsigned)k < SG_EDGE__KINDS) ? kind_names[k] : NULL;
}

bool sg_edge_id_valid(const char *id) {
  if (!id) return false;
  size_t n = 0;
  for (const char *p = id; *p; p++, n++) {
    char c = *p;
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-';
    if (!ok || n >= SG_EDGE_MAX_ID) return false;
  }
  return n > 0;
}

void sg_edge_key_digest(const char *publishable_key, size_t len, char out[65]) {
  uint8_t d[32];
  sg_sha256(publishable_key, len, d);
  sg_hex(d, sizeof d, out);
}

/* Accepts "sha256:<64 lower hex>" or the bare hex; points *hex at the 64 digits. */
static int parse_hash(const char *h, const char **hex) {
  if (!h) return -1;
  if (strncmp(h, "sha256:", 7) == 0) h += 7;
  size_t n = 0;
  for (; h[n]; n++)
    if (!((h[n] >= '0' && h[n] <= '9') || (h[n] >= 'a' && h[n] <= 'f'))) return -1;
  if (n != 64) return -1;
  *hex = h;
  return 0;
}

static int bad_arg(void) {
  errno = EINVAL;
  return -1;
}

int sg_edge_open(const char *spec, sg_edge **out) {
  if (!spec || !*spec || !out) return bad_arg();
  if (sg_redisx_is_url(spec)) return sg__edge_redis_open(spec, out);
  if (strncmp(spec, "file://", 7) == 0) spec += 7;
  return sg__edge_dir_open(spec, out);
}

int sg_edge_open_data_dir(const char *data_dir, sg_edge **out) {
  char p[PATH_MAX];
  if (!data_dir || snprintf(p, sizeof p, "%s/edge", data_dir) >= (int)sizeof p) return bad_arg();
  return sg_edge_open(p, out);
}

int sg_edge_set_cache_dir(sg_edge *e, const char *dir) {
  if (!e || !dir || !*dir) return bad_arg();
  return e->ops->set_cache_dir(e, dir);
}

int sg_edge_cache_prune(sg_edge *e, const char *const *keep, size_t n, int64_t older_than_s,
                        size_t *removed) {
  size_t k = 0;
  if (!e || (!keep && n) || older_than_s < 0) return bad_arg();
  int rc = e->ops->cache_prune(e, keep, n, older_than_s, &k);
  if (removed) *removed = k;
  return rc;
}

int sg_edge_check(sg_edge *e) {
  if (!e) return bad_arg();
  if (e->ops->check && e->ops->check(e)) return -1;
  uint64_t rev;
  return sg_edge_revision(e, &rev);
}

void sg_edge_close(sg_edge *e) {
  if (e) e->ops->close(e);
}

int sg_edge_put_artifact(sg_edge *e, const char *content_hash, const void *data, size_t len) {
  const char *hex;
  if (!e || (!data && len) || parse_hash(content_hash, &hex)) return bad_arg();
  return e->ops->put_artifact(e, hex, data, len);
}

int sg_edge_artifact_stat(sg_edge *e, const char *content_hash, uint64_t *size) {
  const char *hex;
  uint64_t n = 0;
  if (!e || parse_hash(content_hash, &hex)) return bad_arg();
  int rc = e->ops->artifact_stat(e, hex, &n);
  if (rc == 0 && size) *size = n;
  return rc;
}

int sg_edge_artifact_load(sg_edge *e, const char *content_hash, sg_artifact **out) {
  const char *hex;
  if (!e || !out || parse_hash(content_hash, &hex)) return bad_arg();
  *out = NULL;
  return e->ops->artifact_load(e, hex, out);
}

int sg_edge_artifacts(sg_edge *e, sg_edge_artifact_cb cb, void *ctx) {
  if (!e || !cb) return bad_arg();
  return e->ops->artifacts(e, cb, ctx);
}

int sg_edge_delete_artifact(sg_edge *e, const char *content_hash) {
  const char *hex;
  if (!e || parse_hash(content_hash, &hex)) return bad_arg();
  return e->ops->del_artifact(e, hex);
}

int sg_edge_sweep_temp(sg_edge *e, int64_t older_than_s, size_t *removed) {
  size_t n = 0;
  if (!e || older_than_s < 0) return bad_arg();
  int rc = e->ops->sweep_temp(e, older_than_s, &n);
  if (removed) *removed = n;
  return rc;
}

int sg_edge_put(sg_edge *e, sg_edge_kind k, const char *id, const char *json, size_t len,
                uint64_t *revision_out) {
  if (!e || !sg_edge_kind_name(k) || !sg_edge_id_valid(id) || (!json && len)) return bad_arg();
  if (len > SG_EDGE_MAX_RECORD) {
    errno = EFBIG;
    return -1;
  }
  return e->ops->put(e, k, id, json, len, revision_out);
}

int sg_edge_delete(sg_edge *e, sg_edge_kind k, const char *id, uint64_t *revision_out) {
  if (!e || !sg_edge_kind_name(k) || !sg_edge_id_valid(id)) return bad_arg();
  return e->ops->del(e, k, id, revision_out);
}

int sg_edge_update(sg_edge *e, sg_edge_kind k, const char *id, sg_edge_build_cb build, void *ctx,
                   uint64_t *revision_out) {
  if (!e || !build || !sg_edge_kind_name(k) || !sg_edge_id_valid(id)) return bad_arg();
  uint64_t rev = 0;
  int rc = e->ops->update(e, k, id, build, ctx, &rev);
  if (rc >= 0 && revision_out) *revision_out = rev;
  return rc;
}

int sg_edge_put_if_newer(sg_edge *e, sg_edge_kind k, const char *id, const char *json, size_t len,
                         uint64_t seq, uint64_t *revision_out) {
  if (!e || !sg_edge_kind_name(k) || !sg_edge_id_valid(id) || (!json && len) || seq > INT64_MAX)
    return bad_arg();
  if (len > SG_EDGE_MAX_RECORD) {
    errno = EFBIG;
    return -1;
  }
  uint64_t rev = 0;
  int rc = e->ops->put_if_newer(e, k, id, json, len, seq, &rev);
  if (rc >= 0 && revision_out) *revision_out = rev;
  return rc;
}

int sg_edge_delete_if_newer(sg_edge *e, sg_edge_kind k, const char *id, uint64_t seq,
                            uint64_t *revision_out) {
  if (!e || !sg_edge_kind_name(k) || !sg_edge_id_valid(id) || seq > INT64_MAX) return bad_arg();
  uint64_t rev = 0;
  int rc = e->ops->del_if_newer(e, k, id, seq, &rev);
  if (rc >= 0 && revision_out) *revision_out = rev;
  return rc;
}

int sg_edge_changes_since(sg_edge *e, uint64_t since, sg_edge_change_cb cb, void *ctx,
                          uint64_t *upto) {
  if (!e || !cb || !upto) return bad_arg();
  return e->ops->changes_since(e, since, cb, ctx, upto);
}

int sg_edge_get(sg_edge *e, sg_edge_kind k, const char *id, char **json, size_t *len) {
  if (!e || !json || !sg_edge_kind_name(k) || !sg_edge_id_valid(id)) return bad_arg();
  return e->ops->get(e, k, id, json, len);
}

int sg_edge_revision(sg_edge *e, uint64_t *rev) {
  if (!e || !rev) return bad_arg();
  return e->ops->revision(e, rev);
}

int sg_edge_wait(sg_edge *e, int stop_fd, int timeout_ms) {
  if (!e || timeout_ms < 0) return bad_arg();
  if (!e->ops->wait) {
    errno = ENOTSUP;
    return -1;
  }
  return e->ops->wait(e, stop_fd, timeout_ms);
}

int sg_edge_foreach(sg_edge *e, sg_edge_kind k, sg_edge_foreach_cb cb, void *ctx) {
  if (!e || !cb || !sg_edge_kind_name(k)) return bad_arg();
  return e->ops->foreach (e, k, cb, ctx);
}

/* ---- the guard stamp ------------------------------------------------------------------ */

int sg_edge_stamp_format(const sg_edge_stamp *s, char out[72]) {
  if (!s || s->heartbeat_ms < 0 || s->epoch > INT64_MAX || s->revision > INT64_MAX)
    return bad_arg();
  snprintf(out, 72, "%llu %lld %llu", (unsigned long long)s->epoch, (long long)s->heartbeat_ms,
           (unsigned long long)s->revision);
  return 0;
}

int sg_edge_stamp_parse(const char *text, size_t len, sg_edge_stamp *out) {
  char buf[72];
  if (!text || len == 0 || len >= sizeof buf) return -1;
  memcpy(buf, text, len);
  buf[len] = '\0';
  while (len > 0 && buf[len - 1] == '\n') buf[--len] = '\0';
  char *f[3], *save = NULL;
  int n = 0;
  for (char *t = strtok_r(buf, " ", &save); t && n < 4; t = strtok_r(NULL, " ", &save)) {
    if (n == 3) return -1;
    f[n++] = t;
  }
  int64_t ep, hb, rev;
  if (n != 3 || sg_parse_i64(f[0], 0, INT64_MAX, &ep) || sg_parse_i64(f[1], 0, INT64_MAX, &hb) ||
      sg_parse_i64(f[2], 0, INT64_MAX, &rev))
    return -1;
  *out = (sg_edge_stamp){true, (uint64_t)ep, hb, (uint64_t)rev};
  return 0;
}

int sg_edge_stamp_cmp(const sg_edge_stamp *a, const sg_edge_stamp *b) {
  if (a->epoch != b->epoch) return a->epoch < b->epoch ? -1 : 1;
  if (a->heartbeat_ms != b->heartbeat_ms) return a->heartbeat_ms < b->heartbeat_ms ? -1 : 1;
  return 0;
}

int sg_edge_stamp_get(sg_edge *e, sg_edge_stamp *out) {
  if (!e || !out) return bad_arg();
  char text[72];
  *out = (sg_edge_stamp){0};
  if (e->ops->stamp_get(e, text)) return errno == ENOENT ? 0 : -1;
  /* A stamp that does not parse is treated like a damaged record: as absent, so the guard
   * rewrites the edge and a reader that saw a stamp before holds what it has. */
  if (sg_edge_stamp_parse(text, strlen(text), out)) *out = (sg_edge_stamp){0};
  return 0;
}

int sg_edge_stamp_put(sg_edge *e, const sg_edge_stamp *expect, const sg_edge_stamp *s) {
  char text[72];
  if (!e || !s || sg_edge_stamp_format(s, text)) return bad_arg();
  return e->ops->stamp_put(e, expect, s, text);
}

int sg_edge_raise_revision(sg_edge *e, uint64_t min, uint64_t *rev) {
  uint64_t r = 0;
  if (!e || min > INT64_MAX) return bad_arg();
  int rc = e->ops->raise_revision(e, min, &r);
  if (rc == 0 && rev) *rev = r;
  return rc;
}
