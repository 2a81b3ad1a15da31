/*
 * Mirrors a list's served fields into the edge store, where the runtime reads them.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/internal.h"
#include "edge/edge.h"

/* Serialises edge writes of list records in this process. Each writer re-reads the list
 * from the store inside it, so the last write always carries the latest committed state:
 * a PATCH and a publish racing on one list cannot leave the edge record with the older
 * activeContentHash (or the older visibility) of whichever read first. */
static pthread_mutex_t sync_mu = PTHREAD_MUTEX_INITIALIZER;

json_t *sg__edge_sync_list(sg_control *c, const sg_principal *who, const json_t *list) {
  const char *id = json_string_value(json_object_get(list, "id")); /* the caller's */
  pthread_mutex_lock(&sync_mu);
  json_t *fresh = NULL;
  if (sg_store_list_get(c->cfg.store, who->workspace_id, id, &fresh) == SG_E_OK) list = fresh;
  json_t *rec = json_object();
  json_object_set(rec, "id", json_object_get(list, "id"));
  json_object_set_new(rec, "workspaceId", json_string(who->workspace_id));
  static const char *const copied[] = {
      "visibility",        "status", "queryPolicy", "localePolicy", "activeVersionNumber",
      "activeContentHash", NULL};
  for (const char *const *k = copied; *k; k++) {
    json_t *v = json_object_get(list, *k);
    json_object_set(rec, *k, v ? v : json_null());
  }
  char *enc = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS);
  json_decref(rec);
  uint64_t rev = 0;
  int rc = enc ? sg_edge_put(c->cfg.edge, SG_EDGE_LIST, id, enc, strlen(enc), &rev) : -1;
  free(enc);
  json_decref(fresh);
  pthread_mutex_unlock(&sync_mu);
  if (rc != 0) {
    fprintf(stderr, "{\"level\":\"error\",\"msg\":\"edge sync failed\",\"list\":\"%s\"}\n", id);
    sg_edge_revision(c->cfg.edge, &rev);
  }
  return json_pack("{s:I,s:s}", "revision", (json_int_t)rev, "state",
                   rc == 0 ? "synced" : "pending");
}
