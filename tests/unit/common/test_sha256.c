/* Unit tests of the libcrypto SHA-256 (src/common/sha256.c): known vectors, and the same
 * digest as libsodium's whatever the pieces a stream is fed in, and as sg_sha256 on both
 * sides of its switch between the two. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "common/sha256.h"
#include "common/util.h"

static void hex_of(const uint8_t d[32], char out[65]) { sg_hex(d, 32, out); }

static void test_vectors(void **state) {
  (void)state;
  uint8_t d[32];
  char hx[65];
  assert_int_equal(sg_sha256_big("", 0, d), 0);
  hex_of(d, hx);
  assert_string_equal(hx, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  assert_int_equal(sg_sha256_big("abc", 3, d), 0);
  hex_of(d, hx);
  assert_string_equal(hx, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void test_stream_matches_libsodium(void **state) {
  (void)state;
  size_t len = (3u << 20) + 12345;
  unsigned char *buf = malloc(len);
  assert_non_null(buf);
  for (size_t i = 0; i < len; i++) buf[i] = (unsigned char)(i * 2654435761u >> 13);
  uint8_t want[32], got[32], via_util[32];
  crypto_hash_sha256(want, buf, len);
  /* Uneven pieces, including empty ones and one byte. */
  sg_sha256_ctx *c = sg_sha256_begin();
  assert_non_null(c);
  size_t off = 0, step = 0;
  while (off < len) {
    size_t n = (step++ * 7919) % 70001;
    if (n > len - off) n = len - off;
    sg_sha256_add(c, buf + off, n);
    off += n;
  }
  assert_int_equal(sg_sha256_end(c, got), 0);
  assert_memory_equal(got, want, 32);
  /* sg_sha256 switches to libcrypto from 64 KiB on: the same digest on both sides. */
  for (size_t n = 65535; n <= 65537; n++) {
    crypto_hash_sha256(want, buf, n);
    sg_sha256(buf, n, via_util);
    assert_memory_equal(via_util, want, 32);
  }
  sg_sha256_abort(NULL);
  sg_sha256_abort(sg_sha256_begin());
  free(buf);
}

int main(void) {
  if (sodium_init() < 0) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_vectors),
      cmocka_unit_test(test_stream_matches_libsodium),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
