/* libFuzzer target: the NDJSON import path without I/O. The input is split into chunks
 * at sizes taken from its first bytes, run through the line splitter and every line
 * through sg__import_line (jansson + the item validation of POST /items). Checks: no
 * crash or leak; the lines seen do not depend on the chunking; an accepted line gives an
 * item with a value and no error, a refused one gives errors whose paths all start with
 * its own "lines[N]". */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <stdint.h>

#include "common/ndjson.h"
#include "control/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
  uint64_t digest; /* a running hash of (index, line) pairs */
  size_t lines;
} run_state;

static int on_line(void *ctx, size_t index, const char *line, size_t n, bool too_long) {
  run_state *r = ctx;
  r->lines++;
  r->digest = r->digest * 1099511628211u + index + (too_long ? 7 : 0);
  for (size_t i = 0; i < n; i++) r->digest = (r->digest ^ (unsigned char)line[i]) * 1099511628211u;
  if (too_long) return 0;
  json_t *fields = NULL;
  char *parent = NULL;
  json_t *item = sg__import_line(line, n, index, &parent, &fields);
  char prefix[48];
  int pl = snprintf(prefix, sizeof prefix, "lines[%zu]", index);
  if (item) {
    if (fields || !json_is_string(json_object_get(item, "value"))) abort();
  } else {
    if (!fields || json_array_size(fields) == 0 || parent) abort();
    size_t i;
    json_t *f;
    json_array_foreach(fields, i, f) {
      const char *p = json_string_value(json_object_get(f, "path"));
      if (!p || strncmp(p, prefix, (size_t)pl) != 0) abort();
    }
  }
  json_decref(item);
  json_decref(fields);
  free(parent);
  return 0;
}

static run_state run(const uint8_t *data, size_t size, size_t step, size_t max_line) {
  run_state r = {14695981039346656037u, 0};
  sg_ndjson p;
  sg_ndjson_init(&p, max_line, on_line, &r);
  for (size_t off = 0; off < size; off += step)
    sg_ndjson_feed(&p, (const char *)data + off, size - off < step ? size - off : step);
  sg_ndjson_finish(&p);
  sg_ndjson_free(&p);
  return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2 || size > 1 << 16) return 0;
  size_t step = (size_t)data[0] % 64 + 1;
  size_t max_line = (size_t)data[1] * 4 + 1;
  data += 2;
  size -= 2;
  run_state a = run(data, size, size ? size : 1, max_line);
  run_state b = run(data, size, step, max_line);
  if (a.digest != b.digest || a.lines != b.lines) abort();
  return 0;
}
