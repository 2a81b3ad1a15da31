/*
 * The dashboard's credentials: member emails, passwords (Argon2id through libsodium's
 * crypto_pwhash_str), session cookies and CSRF tokens. Shared by the dashboard API and
 * `suggestd admin member create`.
 */
#ifndef SG_DASHBOARD_AUTH_H
#define SG_DASHBOARD_AUTH_H

#include <sodium.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Password rules: at least 12 characters (code points), at most 1024 bytes, valid UTF-8
 * without control characters other than tab. */
#define SG_PASSWORD_MIN_CHARS 12
#define SG_PASSWORD_MAX_BYTES 1024
/* Bytes of a crypto_pwhash_str string, NUL included. */
#define SG_PASSWORD_HASH_BYTES crypto_pwhash_STRBYTES

/* Checks an email and writes its canonical form (ASCII letters lower-cased) into out[256].
 * Accepts local@domain with a non-empty local part of printable characters, a domain of
 * letters, digits, '-' and '.' with at least one dot (or "localhost"), at most 254 bytes.
 * Returns 0, or -1 when it is not an email. */
int sg_email_normalize(const char *in, char out[256]);

/* Why a password is refused (NULL when it is acceptable), in the user's words. */
const char *sg_password_problem(const char *pw, size_t n);

/* Hashes a password with Argon2id (OPSLIMIT/MEMLIMIT_INTERACTIVE). At most two hashes
 * run at once in the process (each takes 64 MiB), so a burst of sign-ins cannot exhaust
 * memory. Returns 0, or -1 when out of memory. */
int sg_password_hash(const char *pw, size_t n, char out[SG_PASSWORD_HASH_BYTES]);
/* True when pw matches hash. hash NULL runs a verification against a dummy hash of the
 * same cost and returns false, so an unknown email costs the same time as a wrong
 * password. */
bool sg_password_verify(const char *hash, const char *pw, size_t n);

/* Session cookies: 32 random bytes as unpadded base64url (43 characters). */
#define SG_SESSION_COOKIE_LEN 43
#define SG_SESSION_COOKIE_NAME "sg_session"
/* A new cookie value into out[44] and the digest the store keeps. */
void sg_session_new(char out[SG_SESSION_COOKIE_LEN + 1], uint8_t digest[32]);
/* Finds the sg_session cookie in a Cookie header and writes its digest. Returns 0, or
 * -1 when the header is absent or the cookie is missing or malformed. */
int sg_session_from_header(const char *cookie_header, uint8_t digest[32]);

/* The CSRF token of a session: HMAC-SHA256(secret, session digest) as unpadded base64url
 * (43 characters), into out[44]. Derived rather than stored, so the dashboard can fetch
 * it again after a reload, and only a holder of the session can know it. */
void sg_csrf_token(const uint8_t secret[32], const uint8_t digest[32], char out[44]);
/* True when the X-CSRF-Token value is the session's token (constant-time compare). */
bool sg_csrf_valid(const uint8_t secret[32], const uint8_t digest[32], const char *token);

#endif
