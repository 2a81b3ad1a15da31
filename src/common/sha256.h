/*
 * SHA-256 of large inputs through libcrypto (OpenSSL), which uses the CPU's SHA
 * instructions where it has them (SHA-NI: about 1.7 GB/s on the bench machine, against
 * about 0.3 GB/s for libsodium's portable C). What hashes artifacts: the runtime checks
 * every artifact it loads against its contentHash, so this is most of an activation's
 * time (docs/PERFORMANCE.md, "Activation and cold start"). The digests are the same
 * SHA-256 as sg_sha256's; short inputs (keys, request bodies) stay on libsodium there.
 */
#ifndef SG_COMMON_SHA256_H
#define SG_COMMON_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct sg_sha256_ctx sg_sha256_ctx;

/* A streaming hash: NULL with errno ENOMEM when none can be had. */
sg_sha256_ctx *sg_sha256_begin(void);
void sg_sha256_add(sg_sha256_ctx *c, const void *data, size_t n);
/* The digest into out, and frees c. -1 (errno EIO) when libcrypto failed on the way. */
int sg_sha256_end(sg_sha256_ctx *c, uint8_t out[32]);
/* Frees c without a digest (NULL is a no-op). */
void sg_sha256_abort(sg_sha256_ctx *c);

/* One-shot digest of data[0..n). -1 (errno ENOMEM or EIO) when libcrypto failed. */
int sg_sha256_big(const void *data, size_t n, uint8_t out[32]);

#endif
