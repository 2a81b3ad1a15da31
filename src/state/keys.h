/*
 * Redis key names of the runtime's shared state (state/redis.c), which the
 * control plane also reads: its selection drain (control/drain.c) and the dashboard's
 * usage page. One place, so writer and readers cannot drift apart. Every key begins with
 * the URL's prefix and a colon (common/redisx.h; "sg:" by default):
 *
 *   state:rl:<32 hex>              selection token bucket of a publishable key (hash
 *                                  t = tokens, ts = ms of the last take), expires once
 *                                  full again
 *   state:seen:<uuid>              a selectionId seen, expires after 24 h
 *   state:selections               the selection event stream (field e = the event's
 *                                  JSON line), drained by group "drain"
 *   state:quota:<YYYY-MM>:<app>    served queries of an application in a UTC month
 *   state:analytics                analytics shipments (field a = the shipment's JSON),
 *                                  drained by group "drain" like the selections
 */
#ifndef SG_STATE_KEYS_H
#define SG_STATE_KEYS_H

#define SG_STATE_KEY_RATE "state:rl:"
#define SG_STATE_KEY_SEEN "state:seen:"
#define SG_STATE_KEY_STREAM "state:selections"
#define SG_STATE_STREAM_GROUP "drain"
#define SG_STATE_KEY_QUOTA "state:quota:"
#define SG_STATE_KEY_ANALYTICS "state:analytics"
/* Shipments are refused (kept by the runtime, then dropped) beyond this many undrained. */
#define SG_STATE_ANALYTICS_MAX 100000
/* Selections are refused (503) rather than appended once the stream holds this many
 * undrained events: the drain is far behind, and trimming would lose events. */
#define SG_STATE_STREAM_MAX 5000000
/* Monthly counters are kept this long, so past months stay readable. */
#define SG_STATE_QUOTA_TTL_S (400 * 86400)

#endif
