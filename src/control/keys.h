/*
 * Issuing keys and mirroring tenant records to the edge store: shared by the admin CLI
 * and the dashboard's applications area, so a key issued either way is the same kind of
 * key and the runtime sees it the same way.
 */
#ifndef SG_CONTROL_KEYS_H
#define SG_CONTROL_KEYS_H

#include <jansson.h>

#include "edge/edge.h"
#include "store/store.h"

/* Issues a secret key "sk_<id>_<secret>" for the application: only the SHA-256 of the
 * secret part is stored. id[32] gets the key id, key[96] the whole key (shown once; the
 * caller must not keep or log it). SG_E_NOT_FOUND for an unknown application. */
sg_err sg_secret_key_issue(sg_store *st, const char *application_id, char id[32], char key[96]);

/* Issues a publishable key "pk_…" for the application and list with the given origins (a
 * JSON array of validated origin strings, borrowed), and writes the application,
 * workspace and key records to the edge store so the runtime can resolve it. id[32] and
 * key[96] as above. SG_E_NOT_FOUND, SG_E_INVALID_LIST as sg_store_publishable_key_create;
 * SG_E_UNAVAILABLE when an edge write failed (the key exists but may not serve yet). */
sg_err sg_publishable_key_issue(sg_store *st, sg_edge *edge, const char *application_id,
                                const char *list_id, const json_t *origins, char id[32],
                                char key[96]);
/* Revokes a publishable key and writes its revoked edge record. */
sg_err sg_publishable_key_retire(sg_store *st, sg_edge *edge, const char *id);

/* Writes the application's / workspace's current record to the edge store. SG_E_OK,
 * SG_E_NOT_FOUND, or SG_E_UNAVAILABLE when the edge write failed. */
sg_err sg_edge_mirror_application(sg_store *st, sg_edge *edge, const char *id);
sg_err sg_edge_mirror_workspace(sg_store *st, sg_edge *edge, const char *id);

#endif
