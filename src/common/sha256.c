#include "common/sha256.h"

#include <errno.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

struct sg_sha256_ctx {
  EVP_MD_CTX *md;
  bool failed;
};

/* The algorithm, fetched once (an implicit fetch per digest costs a lock and a lookup). */
static pthread_once_t md_once = PTHREAD_ONCE_INIT;
static EVP_MD *md_fetched;

static void md_init(void) { md_fetched = EVP_MD_fetch(NULL, "SHA256", NULL); }

static const EVP_MD *md(void) {
  pthread_once(&md_once, md_init);
  return md_fetched ? md_fetched : EVP_sha256();
}

sg_sha256_ctx *sg_sha256_begin(void) {
  sg_sha256_ctx *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->md = EVP_MD_CTX_new();
  if (!c->md || EVP_DigestInit_ex(c->md, md(), NULL) != 1) {
    EVP_MD_CTX_free(c->md);
    free(c);
    errno = ENOMEM;
    return NULL;
  }
  return c;
}

void sg_sha256_add(sg_sha256_ctx *c, const void *data, size_t n) {
  if (n && !c->failed && EVP_DigestUpdate(c->md, data, n) != 1) c->failed = true;
}

int sg_sha256_end(sg_sha256_ctx *c, uint8_t out[32]) {
  unsigned int len = 0;
  int rc = !c->failed && EVP_DigestFinal_ex(c->md, out, &len) == 1 && len == 32 ? 0 : -1;
  sg_sha256_abort(c);
  if (rc) errno = EIO;
  return rc;
}

void sg_sha256_abort(sg_sha256_ctx *c) {
  if (!c) return;
  EVP_MD_CTX_free(c->md);
  free(c);
}

int sg_sha256_big(const void *data, size_t n, uint8_t out[32]) {
  sg_sha256_ctx *c = sg_sha256_begin();
  if (!c) return -1;
  sg_sha256_add(c, data, n);
  return sg_sha256_end(c, out);
}
