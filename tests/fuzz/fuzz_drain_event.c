/* libFuzzer target: the selection drain's parser of a stream entry's event line (the
 * bytes come from Redis, which any process with its password can write) must accept or
 * reject any bytes without crashing, leaking or reading out of bounds, and what it
 * accepts has every field the store needs. */
#include <jansson.h>
#include <stdint.h>
#include <string.h>

#include "control/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  json_t *json = NULL;
  sg_selection_event ev;
  if (sg__drain_event_parse((const char *)data, size, &json, &ev) == 0) {
    if (!ev.selection_id[0] || !ev.list_id[0] || !ev.item_id[0] || !ev.application_id[0] ||
        !ev.key_id[0] || !ev.query_request_id[0] || ev.ts_ms <= 0)
      __builtin_trap();
    if (size > 8192) __builtin_trap();
  }
  json_decref(json);
  return 0;
}
