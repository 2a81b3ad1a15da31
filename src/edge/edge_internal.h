/*
 * Backend interface behind sg_edge (internal to src/edge).
 *
 * edge.c validates arguments (ids, hashes, sizes) and dispatches; a backend only does
 * the storage. Every function follows the conventions of edge.h (0 or -1 + errno).
 */
#ifndef SG_EDGE_INTERNAL_H
#define SG_EDGE_INTERNAL_H

#include "edge/edge.h"

typedef struct {
  int (*put_artifact)(sg_edge *e, const char *hex, const void *data, size_t len);
  int (*artifact_stat)(sg_edge *e, const char *hex, uint64_t *size);
  int (*artifact_load)(sg_edge *e, const char *hex, sg_artifact **out);
  int (*artifacts)(sg_edge *e, sg_edge_artifact_cb cb, void *ctx);
  int (*del_artifact)(sg_edge *e, const char *hex);
  int (*sweep_temp)(sg_edge *e, int64_t older_than_s, size_t *removed);
  int (*put)(sg_edge *e, sg_edge_kind k, const char *id, const char *json, size_t len,
             uint64_t *rev);
  int (*del)(sg_edge *e, sg_edge_kind k, const char *id, uint64_t *rev);
  int (*update)(sg_edge *e, sg_edge_kind k, const char *id, sg_edge_build_cb build, void *ctx,
                uint64_t *rev);
  int (*put_if_newer)(sg_edge *e, sg_edge_kind k, const char *id, const char *json, size_t len,
                      uint64_t seq, uint64_t *rev);
  int (*del_if_newer)(sg_edge *e, sg_edge_kind k, const char *id, uint64_t seq, uint64_t *rev);
  int (*changes_since)(sg_edge *e, uint64_t since, sg_edge_change_cb cb, void *ctx, uint64_t *upto);
  int (*get)(sg_edge *e, sg_edge_kind k, const char *id, char **json, size_t *len);
  int (*revision)(sg_edge *e, uint64_t *rev);
  /* sg_edge_wait; NULL: no sign of changes (ENOTSUP) */
  int (*wait)(sg_edge *e, int stop_fd, int timeout_ms);
  int (*foreach)(sg_edge *e, sg_edge_kind k, sg_edge_foreach_cb cb, void *ctx);
  /* the stamp's text (NUL-terminated, at most 71 bytes) into out, or ENOENT */
  int (*stamp_get)(sg_edge *e, char out[72]);
  /* writes text when the condition of sg_edge_stamp_put holds (expect NULL: s above) */
  int (*stamp_put)(sg_edge *e, const sg_edge_stamp *expect, const sg_edge_stamp *s,
                   const char *text);
  int (*raise_revision)(sg_edge *e, uint64_t min, uint64_t *rev);
  /* where fetched artifacts are kept (dir exists); a backend whose artifacts are local
   * files already keeps no cache and answers 0 */
  int (*set_cache_dir)(sg_edge *e, const char *dir);
  /* removes cached artifacts not in keep[0..n) older than older_than_s; counts them in
   * *removed (set to 0 first by the caller) */
  int (*cache_prune)(sg_edge *e, const char *const *keep, size_t n, int64_t older_than_s,
                     size_t *removed);
  /* runtime presence (edge.h): put with an expiry of ttl_s, delete (absent: 0), and the
   * walk over the records the backend holds live */
  int (*runtime_put)(sg_edge *e, const char *id, const char *json, size_t len, int64_t ttl_s);
  int (*runtime_del)(sg_edge *e, const char *id);
  int (*runtimes)(sg_edge *e, sg_edge_foreach_cb cb, void *ctx);
  /* what the backend checks beyond a readable revision (sg_edge_check); NULL: nothing */
  int (*check)(sg_edge *e);
  void (*close)(sg_edge *e);
} sg__edge_ops;

/* A backend's handle begins with this (its own fields follow). */
struct sg_edge {
  const sg__edge_ops *ops;
};

/* Directory backend: opens/creates the layout under dir. */
int sg__edge_dir_open(const char *dir, sg_edge **out);
/* Redis backend (src/edge/redis): url as sg_redisx_parse reads it. */
int sg__edge_redis_open(const char *url, sg_edge **out);

#endif
