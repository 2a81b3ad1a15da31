/* libFuzzer target: the POST /v1/selection body parser must accept or reject any bytes
 * without crashing, leaking or reading out of bounds, and what it accepts is bounded. */
#include <stdint.h>
#include <string.h>

#include "runtime/rt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sg__selection s;
  sg_err e = sg__selection_parse((const char *)data, size, &s);
  if (e == SG_E_OK && !s.bad_field) {
    if (strlen(s.selection_id) != 36) __builtin_trap();
    if (s.position < 1 || s.position > SG__SELECTION_MAX_POSITION) __builtin_trap();
    if (strlen(s.list_id) == 0 || strlen(s.list_id) > SG__SELECTION_MAX_FIELD) __builtin_trap();
    if (s.query && strlen(s.query) > SG__SELECTION_MAX_QUERY) __builtin_trap();
  }
  sg__selection_free(&s);
  return 0;
}
