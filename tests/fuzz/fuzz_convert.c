/* libFuzzer target: the import file converter (src/client/convert.c), JSON array and CSV.
 * The first byte picks the format, the delimiter and a chunk size. Checks: no crash or
 * leak; the output and the error do not depend on how the input is chunked; every CSV
 * output line is a JSON object; the source line of each output line is known, at least 1,
 * and never goes backwards. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "client/convert.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
  sg_buf out;
  char err[256];
  int rc;
} result;

static result run(sg_convert *c, sg_import_format fmt, const sg_csv_map *m, const uint8_t *data,
                  size_t size, size_t step) {
  result r;
  sg_buf_init(&r.out, 0);
  sg_convert_init(c, fmt, m);
  r.rc = 0;
  /* The first read holds at least 3 bytes, as in the CLI, so a BOM is always seen whole. */
  for (size_t off = 0, n = step < 3 ? 3 : step; off < size && !r.rc; off += n, n = step) {
    if (n > size - off) n = size - off;
    r.rc = sg_convert_feed(c, (const char *)data + off, n, &r.out);
  }
  if (!r.rc) r.rc = sg_convert_finish(c, &r.out);
  snprintf(r.err, sizeof r.err, "%s", c->err);
  return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > 1 << 16) return 0;
  sg_import_format fmt = data[0] & 1 ? SG_FMT_CSV : SG_FMT_JSON;
  sg_csv_map m = {.delimiter = data[0] & 2 ? '\t' : ',', .aliases_split = '|'};
  if (data[0] & 4) m.aliases = "a";
  size_t step = (size_t)(data[0] >> 3) + 1;
  data++;
  size--;
  sg_convert a, b;
  result ra = run(&a, fmt, &m, data, size, size ? size : 1);
  result rb = run(&b, fmt, &m, data, size, step);
  if (ra.rc != rb.rc || strcmp(ra.err, rb.err) != 0 || ra.out.len != rb.out.len ||
      (ra.out.len && memcmp(ra.out.data, rb.out.data, ra.out.len) != 0))
    abort();
  if (ra.rc == 0) {
    int64_t prev = 1, index = 0;
    for (size_t at = 0; at < ra.out.len; index++) {
      const char *nl = memchr(ra.out.data + at, '\n', ra.out.len - at);
      if (!nl) abort(); /* every item line ends with a newline */
      int64_t src = sg_convert_source_line(&a, index);
      if (src < prev) abort();
      prev = src;
      if (fmt == SG_FMT_CSV) {
        json_t *o = json_loadb(ra.out.data + at, (size_t)(nl - (ra.out.data + at)), 0, NULL);
        if (!json_is_object(o)) abort();
        json_decref(o);
      }
      at = (size_t)(nl - ra.out.data) + 1;
    }
    if (sg_convert_source_line(&a, index) != 0) abort();
  }
  sg_buf_free(&ra.out);
  sg_buf_free(&rb.out);
  sg_convert_free(&a);
  sg_convert_free(&b);
  return 0;
}
