/*
 * The synonyms resource above the seam (store.h, "synonyms"): argument checks, the stored
 * form of the sets and their ETag, the same for every backend.
 */
#include <stdlib.h>
#include <string.h>

#include "store/store_internal.h"

void sg_store_synonyms_etag(const json_t *sets, char out[48]) {
  json_t *doc = json_pack("{s:O}", "synonyms", (json_t *)sets);
  sg_store_list_etag(doc ? doc : sets, out);
  json_decref(doc);
}

sg_err sg_store_synonyms_get(sg_store *st, const char *workspace_id, const char *list_id,
                             json_t **out) {
  if (!st || !out) return SG_E_INTERNAL;
  if (!sg__store_id_ok(list_id)) return SG_E_INVALID_LIST;
  if (!st->ops->synonyms_get) return SG_E_INTERNAL;
  return st->ops->synonyms_get(st, workspace_id, list_id, out);
}

sg_err sg_store_synonyms_put(sg_store *st, const char *workspace_id, const char *list_id,
                             const json_t *sets, const char *if_match, json_t **out) {
  if (!st || !out || !json_is_array(sets)) return SG_E_INTERNAL;
  if (!sg__store_id_ok(list_id)) return SG_E_INVALID_LIST;
  if (!st->ops->synonyms_put) return SG_E_INTERNAL;
  /* The stored form: compact, members in the order sent (the GET answers them as sent). */
  char *text = json_dumps(sets, JSON_COMPACT | JSON_PRESERVE_ORDER);
  if (!text) return SG_E_INTERNAL;
  sg_err rc = st->ops->synonyms_put(st, workspace_id, list_id, text, if_match, out);
  free(text);
  return rc;
}

sg_err sg_store_snapshot_synonyms(sg_store *st, const char *list_id, int64_t snapshot_seq,
                                  json_t **out) {
  if (!st || !out) return SG_E_INTERNAL;
  if (!sg__store_id_ok(list_id)) return SG_E_INVALID_LIST;
  if (!st->ops->snapshot_synonyms) return SG_E_INTERNAL;
  return st->ops->snapshot_synonyms(st, list_id, snapshot_seq, out);
}
