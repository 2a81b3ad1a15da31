/*
 * Key issuing and edge mirroring shared by the admin CLI and the dashboard.
 */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "control/edge_sync.h"
#include "control/keys.h"

sg_err sg_secret_key_issue(sg_store *st, const char *application_id, char id[32], char key[96]) {
  /* The key is "sk_<id>_<secret>": the id finds the record, the secret's SHA-256 is the
   * only thing stored, and it is compared in constant time. */
  char secret[32], secret2[32], full_secret[64];
  sg_random_id("sk_", id, 32);
  sg_random_id("", secret, sizeof secret);
  sg_random_id("", secret2, sizeof secret2);
  snprintf(full_secret, sizeof full_secret, "%s%s", secret, secret2);
  snprintf(key, 96, "%s_%s", id, full_secret);
  uint8_t digest[32];
  sg_sha256(full_secret, strlen(full_secret), digest);
  sg_err e = sg_store_secret_key_create(st, application_id, id, digest);
  sodium_memzero(full_secret, sizeof full_secret);
  if (e != SG_E_OK) sodium_memzero(key, 96);
  return e;
}

/* Writes the records the store marked dirty; a failure leaves them marked for the
 * reconciler. */
static void flush(sg_store *st, sg_edge *edge, bool *edge_pending) {
  bool pending = edge && sg_edge_sync_pending(st, edge) != 0;
  if (edge_pending) *edge_pending = pending;
}

sg_err sg_publishable_key_issue(sg_store *st, sg_edge *edge, const char *application_id,
                                const char *list_id, const json_t *origins, char id[32],
                                char key[96], bool *edge_pending) {
  char a1[32], a2[32], digest[65];
  sg_random_id("pub_", id, 32);
  sg_random_id("", a1, sizeof a1);
  sg_random_id("", a2, sizeof a2);
  snprintf(key, 96, "pk_%s%s", a1, a2);
  sg_edge_key_digest(key, strlen(key), digest);
  json_t *rec = NULL;
  sg_err e =
      sg_store_publishable_key_create(st, id, application_id, list_id, digest, origins, &rec);
  json_decref(rec);
  if (e != SG_E_OK) {
    sodium_memzero(key, 96);
    return e;
  }
  flush(st, edge, edge_pending);
  return SG_E_OK;
}

sg_err sg_publishable_key_retire(sg_store *st, sg_edge *edge, const char *id, bool *edge_pending) {
  json_t *rec = NULL;
  char digest[65];
  sg_err e = sg_store_publishable_key_revoke(st, id, &rec, digest);
  json_decref(rec);
  if (e == SG_E_OK) flush(st, edge, edge_pending);
  return e;
}
