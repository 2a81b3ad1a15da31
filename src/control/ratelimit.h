/*
 * Token-bucket rate limiter keyed by a string (secret key id, client IP).
 *
 * A bucket holds `per_minute` tokens and refills at per_minute/60 per second, so a
 * client may burst the whole minute's allowance and is then held to the average.
 * Memory is bounded: idle, full buckets are dropped when the table grows.
 */
#ifndef SG_CONTROL_RATELIMIT_H
#define SG_CONTROL_RATELIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sg_ratelimit sg_ratelimit;

/* per_minute 0 disables limiting. */
sg_ratelimit *sg_ratelimit_new(uint32_t per_minute);
void sg_ratelimit_free(sg_ratelimit *rl);
/* Takes one token for key at time now_ms (monotonic). False when none is left. */
bool sg_ratelimit_take(sg_ratelimit *rl, const char *key, int64_t now_ms);
/* Number of buckets held (for tests of the memory bound). */
size_t sg_ratelimit_size(sg_ratelimit *rl);

#endif
