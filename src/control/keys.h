/*
 * Issuing keys: shared by the admin CLI and the dashboard's applications area, so a key
 * issued either way is the same kind of key and the runtime sees it the same way. The
 * edge records a key needs are marked by the store in the key's own transaction (the
 * edge outbox, control/edge_sync.h), so a failed edge write is retried until it lands.
 */
#ifndef SG_CONTROL_KEYS_H
#define SG_CONTROL_KEYS_H

#include <jansson.h>
#include <stdbool.h>

#include "edge/edge.h"
#include "store/store.h"

/* Issues a secret key "sk_<id>_<secret>" for the application: only the SHA-256 of the
 * secret part is stored. id[32] gets the key id, key[96] the whole key (shown once; the
 * caller must not keep or log it). SG_E_NOT_FOUND for an unknown application. */
sg_err sg_secret_key_issue(sg_store *st, const char *application_id, char id[32], char key[96]);

/* Issues a publishable key "pk_…" for the application and list with the given origins (a
 * JSON array of canonical origin strings, borrowed), then writes the dirty edge records
 * (edge may be NULL: the reconciler writes them). id[32] and key[96] as above.
 * SG_E_NOT_FOUND, SG_E_INVALID_LIST as sg_store_publishable_key_create. *edge_pending
 * (may be NULL) is set when an edge write failed: the key exists and serves once the
 * outbox is written. */
sg_err sg_publishable_key_issue(sg_store *st, sg_edge *edge, const char *application_id,
                                const char *list_id, const json_t *origins, char id[32],
                                char key[96], bool *edge_pending);
/* Revokes a publishable key, then writes the dirty edge records as above. */
sg_err sg_publishable_key_retire(sg_store *st, sg_edge *edge, const char *id, bool *edge_pending);

#endif
