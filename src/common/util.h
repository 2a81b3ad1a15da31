/*
 * Small, sharp helpers shared by every part: time, random ids, digests, UTF-8 checks,
 * checked integer parsing, atomic file writes.
 */
#ifndef SG_COMMON_UTIL_H
#define SG_COMMON_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Must be called once at start (initialises libsodium). Returns 0 on success. */
int sg_init(void);

/* Wall clock. SUGGESTD_CLOCK_OFFSET (seconds, may be negative) shifts it, for tests of
 * expiry that must never sleep; it is read once by sg_init. */
int64_t sg_now_ms(void);
int64_t sg_now_s(void);
/* Monotonic milliseconds, for rate windows and latency. */
int64_t sg_mono_ms(void);
/* Formats a Unix time (seconds) as RFC 3339 UTC "2026-11-22T03:13:08Z" into out[32]. */
void sg_rfc3339(int64_t unix_s, char out[32]);

/* Writes prefix + 22 random base62 chars (131 bits) + NUL into out (size >= strlen+23). */
void sg_random_id(const char *prefix, char *out, size_t outsz);
/* Fills out with n random bytes. */
void sg_random_bytes(void *out, size_t n);

/* v in decimal at out (at most 20 bytes, no NUL); returns the number of bytes. Inline:
 * the runtime formats lengths and highlight offsets with it on every answer. */
static inline size_t sg_udec(uint64_t v, char *out) {
  if (v < 10) { /* most numbers the runtime writes per request: highlight offsets, digits */
    out[0] = (char)('0' + v);
    return 1;
  }
  if (v < 100) {
    out[0] = (char)('0' + v / 10);
    out[1] = (char)('0' + v % 10);
    return 2;
  }
  char tmp[20];
  size_t n = 0;
  do {
    tmp[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  for (size_t i = 0; i < n; i++) out[i] = tmp[n - 1 - i];
  return n;
}

/* Lower-case hex of n bytes into out (2n+1 bytes). */
void sg_hex(const void *p, size_t n, char *out);
/* SHA-256 of data as "sha256:<64 hex>" into out[72]. */
void sg_sha256_tagged(const void *data, size_t n, char out[72]);
/* SHA-256 raw. */
void sg_sha256(const void *data, size_t n, uint8_t out[32]);
/* Constant-time equality of two equal-length byte strings. */
bool sg_ct_equal(const void *a, const void *b, size_t n);

/* Eight bytes at a time ("SWAR", Bit Twiddling Hacks): each is non-zero exactly when some
 * byte of w is 0 / is c / is below c (c <= 128) / has its high bit set. A yes or no for
 * the word, not which byte. */
#define SG_SWAR_ONES 0x0101010101010101ull
#define SG_SWAR_HIGHS 0x8080808080808080ull
static inline uint64_t sg_swar_zero(uint64_t w) { return (w - SG_SWAR_ONES) & ~w & SG_SWAR_HIGHS; }
static inline uint64_t sg_swar_eq(uint64_t w, unsigned char c) {
  return sg_swar_zero(w ^ (SG_SWAR_ONES * c));
}
static inline uint64_t sg_swar_below(uint64_t w, unsigned char c) {
  return (w - SG_SWAR_ONES * c) & ~w & SG_SWAR_HIGHS;
}
static inline uint64_t sg_swar_high(uint64_t w) { return w & SG_SWAR_HIGHS; }

/* True when s[0..n) is well-formed UTF-8 without NUL bytes or surrogates. */
bool sg_utf8_valid(const char *s, size_t n);
/* Number of code points in valid UTF-8 s[0..n). */
size_t sg_utf8_count(const char *s, size_t n);

/* True when an If-Match header value names etag (a comma-separated list of tags, or "*"). */
bool sg_etag_match(const char *if_match, const char *etag);

/* Parses a whole decimal int64 in [min,max]; returns 0 on success, -1 otherwise. */
int sg_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out);

/* "<path>.tmp-<16 random hex>" into out (cap bytes): the temporary name of an atomic
 * write (temp, fsync, rename). -1 with ENAMETOOLONG when it does not fit. */
int sg_temp_path(const char *path, char *out, size_t cap);
/* Writes data to path atomically: temp file in the same dir, fsync, rename, fsync dir.
 * Returns 0 or -1 with errno set. */
int sg_write_file_atomic(const char *path, const void *data, size_t n);
/* Reads a whole file (up to limit bytes) into a malloc'd NUL-terminated buffer. */
int sg_read_file(const char *path, size_t limit, char **out, size_t *len);
/* fsync of a file, and of the folder that holds path (after a rename into it). */
int sg_fsync_path(const char *path);
int sg_fsync_parent(const char *path);
/* mkdir -p. */
int sg_mkdirs(const char *path, unsigned mode);

#endif
