/*
 * Emails, passwords, session cookies and CSRF tokens (see auth.h).
 */
#include "dashboard/auth.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/util.h"

int sg_email_normalize(const char *in, char out[256]) {
  size_t n = strlen(in);
  if (n < 3 || n > 254) return -1;
  const char *at = strchr(in, '@');
  if (!at || at == in || strchr(at + 1, '@') || !at[1]) return -1;
  for (const char *p = in; p < at; p++) {
    unsigned char c = (unsigned char)*p;
    /* Printable ASCII without the characters that would need quoting in an address. */
    if (c <= 0x20 || c >= 0x7f || strchr("\"(),:;<>[\\]", c)) return -1;
  }
  const char *d = at + 1;
  bool dot = false;
  for (const char *p = d; *p; p++) {
    unsigned char c = (unsigned char)*p;
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '.';
    if (!ok) return -1;
    if (c == '.') {
      if (p == d || p[1] == '.' || !p[1]) return -1;
      dot = true;
    }
  }
  if (!dot && strcasecmp(d, "localhost") != 0) return -1;
  for (size_t i = 0; i <= n; i++) {
    char c = in[i];
    out[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
  }
  return 0;
}

const char *sg_password_problem(const char *pw, size_t n) {
  if (n > SG_PASSWORD_MAX_BYTES) return "must be at most 1024 bytes";
  if (!sg_utf8_valid(pw, n)) return "must be valid UTF-8";
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)pw[i];
    if ((c < 0x20 && c != '\t') || c == 0x7f) return "must not contain control characters";
  }
  if (sg_utf8_count(pw, n) < SG_PASSWORD_MIN_CHARS) return "must be at least 12 characters";
  return NULL;
}

/* ---- Argon2id, at most two at a time ----------------------------------------------------- */

#define MAX_HASHING 2
static pthread_mutex_t hash_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hash_cv = PTHREAD_COND_INITIALIZER;
static int hashing;

static void hash_enter(void) {
  pthread_mutex_lock(&hash_mu);
  while (hashing >= MAX_HASHING) pthread_cond_wait(&hash_cv, &hash_mu);
  hashing++;
  pthread_mutex_unlock(&hash_mu);
}

static void hash_leave(void) {
  pthread_mutex_lock(&hash_mu);
  hashing--;
  pthread_cond_signal(&hash_cv);
  pthread_mutex_unlock(&hash_mu);
}

static int hash_raw(const char *pw, size_t n, char out[SG_PASSWORD_HASH_BYTES]) {
  return crypto_pwhash_str(out, pw, n, crypto_pwhash_OPSLIMIT_INTERACTIVE,
                           crypto_pwhash_MEMLIMIT_INTERACTIVE);
}

int sg_password_hash(const char *pw, size_t n, char out[SG_PASSWORD_HASH_BYTES]) {
  hash_enter();
  int rc = hash_raw(pw, n, out);
  hash_leave();
  return rc;
}

/* A hash of a random password with the same parameters: verifying against it costs what
 * a real verification costs. */
static char dummy_hash[SG_PASSWORD_HASH_BYTES];
static pthread_once_t dummy_once = PTHREAD_ONCE_INIT;

static void dummy_init(void) {
  char pw[32];
  sg_random_id("", pw, sizeof pw);
  if (hash_raw(pw, strlen(pw), dummy_hash)) dummy_hash[0] = '\0';
}

bool sg_password_verify(const char *hash, const char *pw, size_t n) {
  pthread_once(&dummy_once, dummy_init);
  hash_enter();
  bool ok;
  if (hash) {
    ok = crypto_pwhash_str_verify(hash, pw, n) == 0;
  } else {
    /* The answer is false whatever the dummy verification says. */
    volatile int r = crypto_pwhash_str_verify(dummy_hash, pw, n);
    (void)r;
    ok = false;
  }
  hash_leave();
  return ok;
}

/* ---- cookies and CSRF tokens ------------------------------------------------------------- */

static void b64url(const uint8_t *bin, size_t n, char *out, size_t outsz) {
  sodium_bin2base64(out, outsz, bin, n, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
}

void sg_session_new(char out[SG_SESSION_COOKIE_LEN + 1], uint8_t digest[32]) {
  uint8_t raw[32];
  sg_random_bytes(raw, sizeof raw);
  b64url(raw, sizeof raw, out, SG_SESSION_COOKIE_LEN + 1);
  sodium_memzero(raw, sizeof raw);
  sg_sha256(out, SG_SESSION_COOKIE_LEN, digest);
}

int sg_session_from_header(const char *h, uint8_t digest[32]) {
  static const char name[] = SG_SESSION_COOKIE_NAME "=";
  const size_t nl = sizeof name - 1;
  if (!h) return -1;
  /* Cookie: a=b; sg_session=…; c=d. The first sg_session wins. */
  for (const char *p = h; *p;) {
    while (*p == ' ' || *p == ';') p++;
    size_t len = strcspn(p, ";");
    if (len > nl && strncmp(p, name, nl) == 0) {
      const char *v = p + nl;
      size_t vl = len - nl;
      while (vl && v[vl - 1] == ' ') vl--;
      if (vl != SG_SESSION_COOKIE_LEN) return -1;
      for (size_t i = 0; i < vl; i++) {
        char c = v[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_'))
          return -1;
      }
      sg_sha256(v, vl, digest);
      return 0;
    }
    p += len;
  }
  return -1;
}

void sg_csrf_token(const uint8_t secret[32], const uint8_t digest[32], char out[44]) {
  uint8_t mac[crypto_auth_hmacsha256_BYTES];
  crypto_auth_hmacsha256_state s;
  crypto_auth_hmacsha256_init(&s, secret, 32);
  crypto_auth_hmacsha256_update(&s, (const unsigned char *)"csrf:", 5);
  crypto_auth_hmacsha256_update(&s, digest, 32);
  crypto_auth_hmacsha256_final(&s, mac);
  b64url(mac, sizeof mac, out, 44);
}

bool sg_csrf_valid(const uint8_t secret[32], const uint8_t digest[32], const char *token) {
  if (!token || strnlen(token, 44) != 43) return false;
  char want[44];
  sg_csrf_token(secret, digest, want);
  return sg_ct_equal(want, token, 43);
}
