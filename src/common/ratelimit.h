/*
 * Token-bucket rate limiter keyed by a string (secret key id, client IP).
 *
 * A bucket holds `per_minute` tokens and refills at per_minute/60 per second, so a
 * client may burst the whole minute's allowance and is then held to the average.
 * Memory is bounded: idle, full buckets are dropped when the table grows. One limiter
 * serves the control plane (per secret key, per client IP) and the runtime's selection
 * route (per publishable key).
 */
#ifndef SG_COMMON_RATELIMIT_H
#define SG_COMMON_RATELIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sg_ratelimit sg_ratelimit;

/* per_minute 0 disables limiting. */
sg_ratelimit *sg_ratelimit_new(uint32_t per_minute);
void sg_ratelimit_free(sg_ratelimit *rl);
/* Takes one token for key at time now_ms (monotonic). False when none is left. */
bool sg_ratelimit_take(sg_ratelimit *rl, const char *key, int64_t now_ms);
/* Like sg_ratelimit_take; when refused, *retry_after_s gets the whole seconds until the
 * next token (at least 1), for a retry-after header. */
bool sg_ratelimit_take_retry(sg_ratelimit *rl, const char *key, int64_t now_ms, int *retry_after_s);
/* Number of buckets held (for tests of the memory bound). */
size_t sg_ratelimit_size(sg_ratelimit *rl);

#endif
