#include "control/cursor.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#define MAC_LEN 16
#define MAX_CURSOR 1024

static void mac(const uint8_t secret[32], const char *p, size_t n, uint8_t out[MAC_LEN]) {
  uint8_t full[crypto_auth_hmacsha256_BYTES];
  crypto_auth_hmacsha256_state st;
  crypto_auth_hmacsha256_init(&st, secret, 32);
  crypto_auth_hmacsha256_update(&st, (const unsigned char *)p, n);
  crypto_auth_hmacsha256_final(&st, full);
  memcpy(out, full, MAC_LEN);
}

char *sg_cursor_encode(const uint8_t secret[32], const char *scope, const json_t *key) {
  json_t *arr = json_array();
  json_array_append_new(arr, json_string(scope));
  json_array_extend(arr, (json_t *)key);
  char *payload = json_dumps(arr, JSON_COMPACT);
  json_decref(arr);
  if (!payload) return NULL;
  size_t pl = strlen(payload);
  uint8_t m[MAC_LEN];
  mac(secret, payload, pl, m);
  size_t b1 = sodium_base64_ENCODED_LEN(pl, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
  size_t b2 = sodium_base64_ENCODED_LEN(MAC_LEN, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
  char *out = malloc(b1 + b2 + 1);
  if (out) {
    sodium_bin2base64(out, b1, (const unsigned char *)payload, pl,
                      sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    size_t l = strlen(out);
    out[l] = '.';
    sodium_bin2base64(out + l + 1, b2, m, MAC_LEN, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
  }
  free(payload);
  return out;
}

json_t *sg_cursor_decode(const uint8_t secret[32], const char *scope, const char *cursor) {
  size_t n = strnlen(cursor, MAX_CURSOR + 1);
  if (n == 0 || n > MAX_CURSOR) return NULL;
  const char *dot = strchr(cursor, '.');
  if (!dot) return NULL;
  uint8_t payload[MAX_CURSOR];
  uint8_t m[MAC_LEN + 1], want[MAC_LEN];
  size_t pl = 0, ml = 0;
  if (sodium_base642bin(payload, sizeof payload - 1, cursor, (size_t)(dot - cursor), NULL, &pl,
                        NULL, sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0)
    return NULL;
  if (sodium_base642bin(m, sizeof m, dot + 1, strlen(dot + 1), NULL, &ml, NULL,
                        sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 ||
      ml != MAC_LEN)
    return NULL;
  mac(secret, (const char *)payload, pl, want);
  if (sodium_memcmp(m, want, MAC_LEN) != 0) return NULL;
  json_t *arr = json_loadb((const char *)payload, pl, 0, NULL);
  if (!json_is_array(arr) || json_array_size(arr) < 1 || !json_is_string(json_array_get(arr, 0)) ||
      strcmp(json_string_value(json_array_get(arr, 0)), scope) != 0) {
    json_decref(arr);
    return NULL;
  }
  json_array_remove(arr, 0);
  return arr;
}
