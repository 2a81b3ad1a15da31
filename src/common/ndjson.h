/*
 * sg_ndjson: splits a byte stream into lines (NDJSON, one JSON value per line) as it
 * arrives in chunks of any size, with a hard cap on one line.
 *
 * A line ends at '\n'; a '\r' before it is dropped. Lines that are empty or only spaces
 * and tabs are skipped but still counted, so `index` is always the 0-based physical line
 * number. A line longer than max_line bytes is not buffered past the cap: the callback
 * gets it with too_long set and line NULL. A last line without a newline is delivered by
 * sg_ndjson_finish. Memory: one buffer of at most max_line bytes, reused; a line that lies
 * whole inside a chunk is passed without copying.
 */
#ifndef SG_COMMON_NDJSON_H
#define SG_COMMON_NDJSON_H

#include <stdbool.h>
#include <stddef.h>

#include "common/buf.h"

/* Called once per non-blank line; line (not NUL-terminated) is borrowed for the call.
 * A non-zero return stops the splitter: feed and finish return it. */
typedef int (*sg_ndjson_line_fn)(void *ctx, size_t index, const char *line, size_t n,
                                 bool too_long);

typedef struct {
  sg_buf line; /* the partial line carried between chunks */
  size_t max_line;
  size_t index;  /* the current line's number */
  bool overflow; /* the current line passed max_line: skip to its end */
  int stopped;   /* the callback's non-zero answer, once given */
  sg_ndjson_line_fn fn;
  void *ctx;
} sg_ndjson;

void sg_ndjson_init(sg_ndjson *p, size_t max_line, sg_ndjson_line_fn fn, void *ctx);
/* Feeds data[0..n). Returns 0, or the callback's non-zero answer (then and afterwards). */
int sg_ndjson_feed(sg_ndjson *p, const char *data, size_t n);
/* Delivers a last line left without a newline. Returns like feed. */
int sg_ndjson_finish(sg_ndjson *p);
/* Lines seen so far (blank ones included). */
size_t sg_ndjson_lines(const sg_ndjson *p);
void sg_ndjson_free(sg_ndjson *p);

#endif
