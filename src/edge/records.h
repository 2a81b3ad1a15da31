/*
 * The edge record codec: the one place that knows the JSON of each record kind
 * (docs/EDGE.md "Records"). Writers encode with sg_edge_record_encode (the edge outbox,
 * src/control/edge_sync.c); the runtime decodes with sg_edge_*_decode
 * (src/runtime/snapshot.c). Decoding is lenient, as the runtime must be: a missing or
 * invalid member takes its documented default, and only a record the runtime cannot use at
 * all is refused.
 *
 * Decoded strings are borrowed from the jansson object passed in and live as long as it.
 */
#ifndef SG_EDGE_RECORDS_H
#define SG_EDGE_RECORDS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "compiler/typo.h"
#include "edge/edge.h"

/* A signing key retired longer ago than a token lives (plus skew and a margin) has
 * nothing left to verify: its record leaves the edge. */
#define SG_EDGE_SIGNING_KEY_KEEP_S (2 * 3600)

/* Builds the record of kind k from src, the store's view of it (a list as the control
 * plane answers it, a publishable key, …), at time now_s. Returns 0 with *json (malloc'd)
 * and *len, 1 when the record must not be on the edge (delete it), -1 when out of memory. */
int sg_edge_record_encode(sg_edge_kind k, const json_t *src, int64_t now_s, char **json,
                          size_t *len);

typedef enum { SG_EDGE_VIS_PRIVATE, SG_EDGE_VIS_PUBLIC, SG_EDGE_VIS_SHARED } sg_edge_visibility;

typedef struct {
  const char *id; /* the record's own id, else the id it is stored under */
  const char *workspace_id;
  sg_edge_visibility visibility; /* unknown: private */
  bool archived;
  const char *content_hash;        /* activeContentHash, NULL when never published */
  int min_query_chars;             /* 1..32, default 1 */
  int debounce_ms;                 /* 0..5000, default 150 */
  sg_typo_policy typo;             /* default SG_TYPO_POLICY_DEFAULT */
  const char *default_locale;      /* default "en" */
  const json_t *supported_locales; /* array (non-strings skipped) or NULL */
} sg_edge_list_rec;

typedef struct {
  const char *id; /* the key's record id ("pk_…"), "" when absent */
  const char *application_id, *list_id;
  const json_t *origins; /* array, or NULL: any origin */
  bool active;
} sg_edge_key_rec;

typedef struct {
  const char *id, *workspace_id;
  bool active;
  bool limited;           /* monthlyQuota is a number */
  uint64_t monthly_quota; /* when limited */
} sg_edge_app_rec;

typedef struct {
  const char *id;
  bool active;
} sg_edge_workspace_rec;

typedef struct {
  const char *workspace_id, *list_id;
  bool active;
} sg_edge_subscription_rec;

typedef struct {
  const char *kid;
  uint8_t public_key[32];
} sg_edge_signing_key_rec;

/* Each returns 0, or 1 when the record is unusable (treat it as absent). stored_id is the
 * id the record is stored under. */
int sg_edge_list_decode(const json_t *o, const char *stored_id, sg_edge_list_rec *out);
int sg_edge_key_decode(const json_t *o, sg_edge_key_rec *out);
int sg_edge_app_decode(const json_t *o, const char *stored_id, sg_edge_app_rec *out);
int sg_edge_workspace_decode(const json_t *o, const char *stored_id, sg_edge_workspace_rec *out);
int sg_edge_subscription_decode(const json_t *o, sg_edge_subscription_rec *out);
int sg_edge_signing_key_decode(const json_t *o, sg_edge_signing_key_rec *out);

#endif
